// SPDX-License-Identifier: MIT
// `slanim convert`. See convert_command.hpp.
#include "convert_command.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <ostream>

#include "gltf_import.hpp"
#include "loading.hpp"
#include "mesh_export.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/anim.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/formats/bvh.hpp"
#include "slanim/formats/io.hpp"

namespace slanim::cli {

namespace {

void add_bvh_options(CLI::App* convert, ConvertOptions& o) {
    convert->add_option("--priority", o.priority, "BVH: base priority 0..6 (default 2)");
    convert->add_flag("--loop", o.loop, "BVH: loop");
    convert->add_option("--loop-in", o.loop_in, "BVH: loop in point, seconds");
    convert->add_option("--loop-out", o.loop_out, "BVH: loop out point, seconds");
    convert->add_option("--ease-in", o.ease_in, "BVH: ease in, seconds (default 0.3)");
    convert->add_option("--ease-out", o.ease_out, "BVH: ease out, seconds (default 0.3)");
    convert->add_option("--hand-pose", o.hand_pose, "BVH: hand pose 0..13 (default 1, relaxed)");
    convert->add_option("--emote", o.emote, "BVH: emote name");
    convert->add_flag("--skip-unknown", o.bvh.skip_unknown_joints, "BVH: drop joints that are not SL joints instead of failing");
    convert->add_option("--importer", o.importer, "BVH: current (today's viewer) or linden-legacy (the loader of Linden's own files)")
        ->check(CLI::IsMember({"current", "linden-legacy"}));
    convert->add_option("--pelvis-origin", o.pelvis_origin, "BVH (linden-legacy) and glTF: pelvis positions relative to the rest pose (rest, default) or to frame 0 (first-frame; glTF: rotations too, as the uploader)")
        ->check(CLI::IsMember({"rest", "first-frame"}));
    convert->add_option("--hip-turn", o.hip_turn_deg, "BVH, linden-legacy: the hip's offset rotation about Z, degrees (Linden's dances: 180)");
}

/// The import options the command line asked for, over the importer's defaults.
BvhImportOptions bvh_import_options(const ConvertOptions& o) {
    BvhImportOptions bvh = o.bvh;
    if (o.priority >= 0) bvh.priority = o.priority;
    if (o.loop) bvh.loop = true;
    if (o.loop_in >= 0) bvh.loop_in = static_cast<float>(o.loop_in);
    if (o.loop_out >= 0) bvh.loop_out = static_cast<float>(o.loop_out);
    if (o.ease_in >= 0) bvh.ease_in = static_cast<float>(o.ease_in);
    if (o.ease_out >= 0) bvh.ease_out = static_cast<float>(o.ease_out);
    if (o.hand_pose >= 0) bvh.hand_pose = static_cast<std::uint32_t>(o.hand_pose);
    if (!o.emote.empty()) bvh.emote = o.emote;
    if (o.importer == "linden-legacy") bvh.importer = BvhImporter::LindenLegacy;
    if (o.pelvis_origin == "first-frame") bvh.legacy_pelvis_origin = LegacyPelvisOrigin::FirstFrame;
    bvh.legacy_pelvis_offset =
        quat_from_axis_angle(static_cast<float>(o.hip_turn_deg * 3.14159265358979 / 180.0), {0.f, 0.f, 1.f});
    return bvh;
}

bool is_gltf_path(const std::string& p) {
    const auto f = mesh_format_for_path(p);
    return f && *f != MeshFormat::Obj;
}

/// True (and a message) when OUT is IN and --force is not given.
bool refuses_to_overwrite(std::ostream& err, const std::string& in, const std::string& out, bool force) {
    if (force || !std::filesystem::exists(out) ||
        std::filesystem::weakly_canonical(in) != std::filesystem::weakly_canonical(out))
        return false;
    err << "slanim convert: refusing to overwrite the input " << in << " (use --force)\n";
    return true;
}

bool has_gltf_output_options(const ConvertOptions& o) {
    return !o.gltf.character.empty() || !o.gltf.wearables.empty() || o.gltf.no_mesh;
}

int not_a_gltf_output(std::ostream& err, const ConvertOptions& o) {
    err << "slanim convert: --character, --wearable and --no-mesh are for a glTF output (.glb or .gltf); "
        << o.output << " is not one\n";
    return 2;
}

int convert_from_gltf(std::ostream& err, const ConvertOptions& o, const BvhImportOptions& bvh) {
    if (has_gltf_output_options(o)) return not_a_gltf_output(err, o);
    if (o.importer != "current" || o.app->count("--fps") > 0 || o.app->count("--bvj-form") > 0) {
        err << "slanim convert: --importer, --fps and --bvj-form do not apply to a glTF input\n";
        return 2;
    }
    GltfImportOptions gi;
    gi.animation = o.gltf_animation;
    gi.import = bvh;
    gi.keep_times = o.keep_times;
    gi.scale = static_cast<float>(o.gltf_scale);
    gi.pelvis_origin = o.pelvis_origin == "first-frame" ? gltf::PelvisOrigin::FirstFrame : gltf::PelvisOrigin::Rest;
    if (refuses_to_overwrite(err, o.input, o.output, o.force)) return 2;
    return convert_gltf_to_anim(err, o.input, o.output, gi);
}

/// BVH → .anim like the viewer's importer (LLBVHLoader), with the preview's overrides.
int convert_bvh(std::ostream& err, const std::string& in, const std::string& out, const BvhImportOptions& opt) {
    auto bvh = load_bvh(in);
    if (!bvh) {
        err << "slanim convert: " << bvh.error().message << "\n";
        return 1;
    }
    auto skel = Skeleton::default_skeleton();
    auto imported = import_bvh(*bvh, *skel, opt);
    if (!imported) {
        err << "slanim convert: " << in << ": " << imported.error().message << "\n";
        return 1;
    }
    for (const auto& w : imported->warnings) err << "slanim convert: " << in << ": warning: " << w << "\n";
    auto raw = encode_motion_checked(imported->motion);
    if (!raw) {
        err << "slanim convert: " << in << ": " << raw.error().message << "\n";
        return 1;
    }
    auto w = write_file_atomic(out, write_anim(*raw));
    if (!w) {
        err << "slanim convert: " << w.error().message << "\n";
        return 1;
    }
    return 0;
}

/// Between the creator formats, BVH import, or .anim → .anim (a byte-exact re-encode).
int convert_motion(std::ostream& out, std::ostream& err, const ConvertOptions& o, const BvhImportOptions& bvh) {
    const std::string& in = o.input;
    if (refuses_to_overwrite(err, in, o.output, o.force)) return 2;
    std::string ext = std::filesystem::path(in).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char ch) { return std::tolower(ch); });
    if (auto r = convert_formats(out, err, in, o.output, bvh, o.formats)) return *r;
    if (ext == ".bvh") return convert_bvh(err, in, o.output, bvh);
    auto bytes = read_file_bytes(in);
    if (!bytes) {
        err << "slanim convert: " << bytes.error().message << "\n";
        return 1;
    }
    const ParseResult pr = parse_anim(*bytes);
    if (const Diagnostic* e = pr.first_error()) {
        err << "slanim convert: " << in << ": " << e->describe() << "\n";
        return 1;
    }
    auto w = write_file_atomic(o.output, write_anim(pr.motion));
    if (!w) {
        err << "slanim convert: " << w.error().message << "\n";
        return 1;
    }
    return 0;
}

}  // namespace

CLI::App* add_convert_subcommand(CLI::App& app, ConvertOptions& o) {
    auto* convert = app.add_subcommand("convert", "Read and rewrite a motion, convert between .anim, .bvh, .bvj and poser .xml, or export .anim to glTF (.glb/.gltf)");
    convert->add_option("IN", o.input, "Input .anim, .bvh (imported like the viewer's uploader), .bvj, or a Firestorm poser .xml")->required();
    convert->add_option("-o,--output", o.output, "Output .anim, .bvh (+ .bvh.json sidecar), .bvj, or .glb/.gltf (skeleton, skinned avatar mesh and the animation)")->required();
    convert->add_flag("--force", o.force, "Allow the output to be the input");
    add_bvh_options(convert, o);
    convert->add_option("--fps", o.formats.fps, "To BVH: sampling rate, frames per second (default 30)")
        ->check(CLI::Range(0.001, 1000.0));
    convert->add_option("--bvj-form", o.formats.bvj_form, "To BVJ: keyframes (default, every key kept) or motion (sampled)")
        ->check(CLI::IsMember({"keyframes", "motion"}));
    convert->add_flag("--all-frames", o.bvh.keep_all_frames, "BVH, glTF: keep every frame/key (no key reduction)");
    convert->add_option("--character", o.gltf.character,
                        "To glTF: viewer character folder (skeleton and avatar mesh; default: the embedded skeleton, no mesh)");
    convert->add_option("--wearable", o.gltf.wearables,
                        "To glTF: LLWearable files shaping the avatar mesh (shape, skin, hair, eyes); needs --character");
    convert->add_flag("--no-mesh", o.gltf.no_mesh, "To glTF: the skeleton and the animation only");
    convert->add_option("--animation", o.gltf_animation, "From glTF: the animation to read, by name or index (default: the first)");
    convert->add_flag("--keep-times", o.keep_times, "From glTF: keep the key times (default: the first key moves to 0 s)");
    convert->add_option("--scale", o.gltf_scale, "From glTF: multiply every translation by F (0.0254: an armature in inches read as metres)")
        ->check(CLI::Range(1e-6, 1e6));
    o.app = convert;
    return convert;
}

int cmd_convert(std::ostream& out, std::ostream& err, const ConvertOptions& o) {
    const bool gltf_in = is_gltf_path(o.input);
    if (o.importer != "linden-legacy" && ((!gltf_in && o.app->count("--pelvis-origin") > 0) || o.app->count("--hip-turn") > 0)) {
        err << "slanim convert: --pelvis-origin and --hip-turn need --importer linden-legacy (or, --pelvis-origin, a glTF input)\n";
        return 2;
    }
    if (!gltf_in && (o.app->count("--keep-times") > 0 || o.app->count("--scale") > 0)) {
        err << "slanim convert: --keep-times and --scale are for a glTF input; " << o.input << " is not one\n";
        return 2;
    }
    const BvhImportOptions bvh = bvh_import_options(o);
    if (gltf_in) return convert_from_gltf(err, o, bvh);
    if (!o.gltf_animation.empty()) {
        err << "slanim convert: --animation picks the animation of a glTF input; " << o.input << " is not one\n";
        return 2;
    }
    if (is_gltf_path(o.output)) {
        if (refuses_to_overwrite(err, o.input, o.output, o.force)) return 2;
        GltfConvertOptions gltf = o.gltf;
        gltf.input = o.input;
        gltf.output = o.output;
        return convert_anim_to_gltf(err, gltf);
    }
    if (has_gltf_output_options(o)) return not_a_gltf_output(err, o);
    return convert_motion(out, err, o, bvh);
}

}  // namespace slanim::cli
