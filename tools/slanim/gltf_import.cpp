// SPDX-License-Identifier: MIT
#include "gltf_import.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <ostream>

#include "slanim/formats/anim.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/formats/io.hpp"

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
    const bool original = !r->original_anim.empty();
    std::vector<std::uint8_t> bytes;
    if (original) {
        bytes = std::move(r->original_anim);
    } else {
        auto raw = encode_motion_checked(r->motion);
        if (!raw) return fail(fmt::format("{}: {}", input, raw.error().message));
        bytes = write_anim(*raw);
    }
    ParseOptions po;
    po.skeleton = skel.get();
    po.allow_invalid_joints = false;  // the upload rules
    const ParseResult pr = parse_anim(bytes, po);
    if (const Diagnostic* e = pr.first_error()) {
        if (!original) return fail(fmt::format("{}: the result would not pass an upload: {}", input, e->describe()));
        err << "slanim convert: " << input << ": warning: the source .anim (written unchanged) would not pass an upload: "
            << e->describe() << "\n";
    }
    auto w = write_file_atomic(output, bytes);
    if (!w) return fail(w.error().message);
    std::size_t rot = 0, pos = 0;
    for (const MotionJoint& mj : r->motion.joints) rot += mj.rot_keys.size(), pos += mj.pos_keys.size();
    err << fmt::format("slanim convert: {}: {} joints, {} rotation and {} position keys, {:.3f} s{}\n", output,
                       r->motion.joints.size(), rot, pos, r->motion.duration,
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
