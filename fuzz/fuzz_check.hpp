// SPDX-License-Identifier: MIT
// SLANIM_FUZZ_CHECK(cond, input): a property every fuzz target checks on its input. When it does
// not hold, the target prints which property and the input's size, then aborts, which libFuzzer
// reports as a crash with the input saved. A target defines `kFuzzTarget` (its program name)
// before using the macro.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string_view>

namespace slanim::fuzz {

inline std::size_t input_size(std::size_t size) { return size; }
inline std::size_t input_size(std::string_view data) { return data.size(); }
inline std::size_t input_size(std::span<const std::uint8_t> data) { return data.size(); }

[[noreturn]] inline void property_violated(const char* target, const char* what, std::size_t size) {
    std::fprintf(stderr, "%s: property violated: %s (input of %zu bytes)\n", target, what, size);
    std::abort();
}

}  // namespace slanim::fuzz

#define SLANIM_FUZZ_CHECK(cond, input)                                                                 \
    do {                                                                                               \
        if (!(cond)) ::slanim::fuzz::property_violated(kFuzzTarget, #cond, ::slanim::fuzz::input_size(input)); \
    } while (false)
