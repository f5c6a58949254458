// SPDX-License-Identifier: MIT
// What `slanim convert FILE.anim -o OUT.glb` exports without a character folder (export.hpp):
// shared by the command and slanim_anim_to_glb.
#include <fmt/format.h>

#include <filesystem>

#include "slanim/gltf/export.hpp"

namespace slanim::gltf {

std::string convert_comment(std::string_view file_name, std::string_view character_dir, bool with_mesh) {
    return fmt::format("slanim convert {}: SL skeleton ({}), {}", file_name,
                       character_dir.empty() ? std::string_view("embedded default") : character_dir,
                       with_mesh ? "avatar base mesh skinned to it" : "no mesh");
}

AnimationExport convert_export(const Skeleton& skeleton, const Motion& motion, std::string_view file_name,
                               std::span<const std::uint8_t> source_anim) {
    AnimationExport ex;
    ex.skeleton = &skeleton;
    ex.rest_positions = skeleton.rest_positions();
    ex.rest_rotations = skeleton.rest_rotations();
    ex.rest_scales = skeleton.rest_scales();
    ex.motion = &motion;
    ex.animation_name = std::filesystem::path(file_name).stem().string();
    ex.comment = convert_comment(file_name, {}, false);
    ex.source_anim = source_anim;
    return ex;
}

}  // namespace slanim::gltf
