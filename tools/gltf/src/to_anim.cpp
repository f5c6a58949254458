// SPDX-License-Identifier: MIT
#include "slanim/gltf/to_anim.hpp"

#include <fmt/format.h>

#include <utility>

#include "slanim/formats/anim.hpp"
#include "slanim/formats/anim_codec.hpp"

namespace slanim::gltf {

Result<AnimBytes> to_anim_bytes(ImportResult&& imported, const Skeleton& skeleton) {
    AnimBytes out;
    out.original = !imported.original_anim.empty();
    if (out.original) {
        out.bytes = std::move(imported.original_anim);
    } else {
        auto raw = encode_motion_checked(imported.motion);
        if (!raw) return raw.error();
        out.bytes = write_anim(*raw);
    }
    ParseOptions po;
    po.skeleton = &skeleton;
    po.allow_invalid_joints = false;  // the upload rules
    const ParseResult pr = parse_anim(out.bytes, po);
    if (const Diagnostic* e = pr.first_error()) {
        if (!out.original)
            return Error{fmt::format("the result would not pass an upload: {}", e->describe())};
        out.warning = fmt::format("the source .anim (written unchanged) would not pass an upload: {}", e->describe());
    }
    return out;
}

}  // namespace slanim::gltf
