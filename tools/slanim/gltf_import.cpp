// SPDX-License-Identifier: MIT
#include "gltf_import.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <ostream>

#include "slanim/formats/anim.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/gltf/to_anim.hpp"

namespace slanim::cli {

int convert_gltf_to_anim(std::ostream& err, const std::string& input, const std::string& output,
                         const GltfImportOptions& o) {
    const auto fail = [&](const std::string& msg, int code = 1) {
        err << "slanim convert: " << msg << "\n";
        return code;
    };
    const auto ext = std::filesystem::path(output).extension().string();
    if (ext != ".anim") return fail(fmt::format("{}: a glTF input converts to an .anim output", output), 2);
    const BvhImportOptions& im = o.import;
    if (im.priority && (*im.priority < 0 || *im.priority > 6)) return fail("--priority must be 0..6", 2);
    if (im.hand_pose && *im.hand_pose >= kNumHandPoses) return fail("--hand-pose must be 0..13", 2);
    const auto skel = Skeleton::default_skeleton();
    auto r = gltf::import_file(input, *skel, o);
    if (!r) return fail(r.error().message);
    for (const auto& w : r->warnings) err << "slanim convert: " << input << ": warning: " << w << "\n";
    const std::size_t joints = r->motion.joints.size();
    std::size_t rot = 0, pos = 0;
    for (const MotionJoint& mj : r->motion.joints) rot += mj.rot_keys.size(), pos += mj.pos_keys.size();
    const auto duration = r->motion.duration;
    auto anim = gltf::to_anim_bytes(std::move(*r), *skel);
    if (!anim) return fail(fmt::format("{}: {}", input, anim.error().message));
    const bool original = anim->original;
    if (anim->warning) err << "slanim convert: " << input << ": warning: " << *anim->warning << "\n";
    const std::vector<std::uint8_t>& bytes = anim->bytes;
    auto w = write_file_atomic(output, bytes);
    if (!w) return fail(w.error().message);
    err << fmt::format("slanim convert: {}: {} joints, {} rotation and {} position keys, {:.3f} s{}\n", output,
                       joints, rot, pos, duration,
                       original ? " (the .anim the file was exported from, unchanged)" : "");
    return 0;
}

int info_gltf(std::ostream& out, std::ostream& err, const std::string& path, const Skeleton& sk) {
    auto text = gltf::describe_file(path, sk);
    if (!text) {
        err << "slanim info: " << text.error().message << "\n";
        return 1;
    }
    out << *text;
    return 0;
}

}  // namespace slanim::cli
