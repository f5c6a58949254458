// SPDX-License-Identifier: MIT
// slanim_gltf.h: the glTF import and export behind the C API's guard
// (runtime/capi/src/capi_internal.hpp).
#include "slanim/slanim_gltf.h"

#include <cstring>
#include <vector>

#include "capi_internal.hpp"
#include "slanim/gltf/export.hpp"
#include "slanim/gltf/import.hpp"
#include "slanim/gltf/to_anim.hpp"

using namespace slanim;
using namespace slanim::capi;

extern "C" {

slanim_status slanim_gltf_to_anim(const uint8_t* bytes, size_t size, uint8_t* anim, size_t capacity, size_t* needed) {
    return guard(__func__, [&] {
        need(needed, "needed");
        const auto in = byte_span(bytes, size, "bytes");
        const auto skel = Skeleton::default_skeleton();
        auto r = gltf::import_bytes(in, "glTF", *skel, gltf::ImportOptions{});
        if (!r) fail(SLANIM_ERROR_INVALID_DATA, r.error().message);
        auto out = gltf::to_anim_bytes(std::move(*r), *skel);
        if (!out) fail(SLANIM_ERROR_INVALID_DATA, out.error().message);
        check_capacity(anim, capacity, out->bytes.size(), needed, "anim");
        std::memcpy(anim, out->bytes.data(), out->bytes.size());
    });
}

slanim_status slanim_anim_to_glb(const uint8_t* anim, size_t size, const char* name, uint8_t* glb, size_t capacity,
                                 size_t* needed) {
    return guard(__func__, [&] {
        need(needed, "needed");
        need(name, "name");
        const auto in = byte_span(anim, size, "anim");
        const auto skel = Skeleton::default_skeleton();
        const Motion motion = decode_motion(parse_or_fail(in, *skel, {}), *skel);
        auto out = gltf::encode_animation(gltf::convert_export(*skel, motion, name, in), gltf::FileFormat::Glb);
        if (!out) fail(SLANIM_ERROR_INVALID_DATA, out.error().message);
        check_capacity(glb, capacity, out->size(), needed, "glb");
        std::memcpy(glb, out->data(), out->size());
    });
}

}  // extern "C"
