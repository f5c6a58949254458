// SPDX-License-Identifier: MIT
// The C API: version and errors (slanim_version, slanim_last_error, slanim_status_name), and the
// thread-local error text that guard() (capi_internal.hpp) fills.
#include <string>
#include <string_view>
#include <utility>

#include "capi_internal.hpp"

#if !defined(SLANIM_PROJECT_VERSION_MAJOR)
#error "SLANIM_PROJECT_VERSION_* must be defined by the build (runtime/capi/CMakeLists.txt)"
#endif
static_assert(SLANIM_VERSION_MAJOR == SLANIM_PROJECT_VERSION_MAJOR &&
                  SLANIM_VERSION_MINOR == SLANIM_PROJECT_VERSION_MINOR &&
                  SLANIM_VERSION_PATCH == SLANIM_PROJECT_VERSION_PATCH,
              "slanim.h's version macros must equal the project version (CMakeLists.txt)");

namespace {

thread_local std::string t_error;

}  // namespace

namespace slanim::capi {

void fail(slanim_status status, std::string message) { throw Failure{status, std::move(message)}; }

void set_error(const char* fn, std::string_view message) noexcept {
    try {
        t_error.assign(fn);
        t_error.append(": ");
        t_error.append(message);
    } catch (...) {
        t_error.clear();  // keeps the capacity it had: never throws
    }
}

}  // namespace slanim::capi

extern "C" {

const char* slanim_version(void) { return SLANIM_VERSION_STRING; }
uint32_t slanim_version_number(void) { return SLANIM_VERSION; }

const char* slanim_last_error(void) { return t_error.c_str(); }

const char* slanim_status_name(int status) {
    switch (status) {
        case SLANIM_OK: return "SLANIM_OK";
        case SLANIM_ERROR_NULL_ARGUMENT: return "SLANIM_ERROR_NULL_ARGUMENT";
        case SLANIM_ERROR_INVALID_HANDLE: return "SLANIM_ERROR_INVALID_HANDLE";
        case SLANIM_ERROR_BUFFER_TOO_SMALL: return "SLANIM_ERROR_BUFFER_TOO_SMALL";
        case SLANIM_ERROR_OUT_OF_RANGE: return "SLANIM_ERROR_OUT_OF_RANGE";
        case SLANIM_ERROR_INVALID_DATA: return "SLANIM_ERROR_INVALID_DATA";
        case SLANIM_ERROR_NOT_FOUND: return "SLANIM_ERROR_NOT_FOUND";
        case SLANIM_ERROR_IO: return "SLANIM_ERROR_IO";
        case SLANIM_ERROR_UNSUPPORTED: return "SLANIM_ERROR_UNSUPPORTED";
        case SLANIM_ERROR_OUT_OF_MEMORY: return "SLANIM_ERROR_OUT_OF_MEMORY";
        case SLANIM_ERROR_INTERNAL: return "SLANIM_ERROR_INTERNAL";
        case SLANIM_ERROR_ALREADY_EXISTS: return "SLANIM_ERROR_ALREADY_EXISTS";
    }
    return "unknown status";
}

}  // extern "C"
