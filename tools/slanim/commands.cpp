// SPDX-License-Identifier: MIT
// The `slanim` command: info, validate, convert, play, ik.
#include "commands.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "demo_motion.hpp"
#include "describe.hpp"
#include "edit_command.hpp"
#include "ik_command.hpp"
#include "loading.hpp"
#include "slanim/engine/anim_format.hpp"
#include "slanim/engine/bvh.hpp"
#include "slanim/engine/bvh_import.hpp"
#include "slanim/engine/clip.hpp"
#include "slanim/engine/motion.hpp"
#include "slanim/engine/skeleton.hpp"
#include "slanim/runtime/world.hpp"

namespace slanim::cli {

namespace {

struct Context {
    std::ostream& out;
    std::ostream& err;
};

int cmd_info(Context& c, const std::vector<std::string>& files, bool verbose,
             const std::string& format, const std::string& character) {
    auto skel = pick_skeleton(character);
    if (!skel) {
        c.err << "slanim info: " << skel.error().describe() << "\n";
        return 1;
    }
    int status = 0;
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const auto& f : files) {
        auto l = load(f, **skel);
        if (!l) {
            c.err << "slanim info: " << l.error().message << "\n";
            status = 1;
            continue;
        }
        if (format == "json") {
            all.push_back(info_json(f, l->raw, l->motion, verbose));
        } else if (format == "md") {
            c.out << "### " << f << "\n\n" << info_line(f, l->raw, l->motion) << "\n\n";
            if (verbose) c.out << joint_table(l->motion, true) << "\n";
        } else {
            c.out << info_line(f, l->raw, l->motion) << "\n";
            if (verbose) c.out << joint_table(l->motion, false);
        }
    }
    if (format == "json") c.out << all.dump(2) << "\n";
    return status;
}

int cmd_validate(Context& c, const std::vector<std::string>& files, bool upload, bool quiet,
                 const std::string& character) {
    auto skel = pick_skeleton(character);
    if (!skel) {
        c.err << "slanim validate: " << skel.error().describe() << "\n";
        return 2;
    }
    int invalid = 0;
    for (const auto& f : files) {
        auto bytes = read_file_bytes(f);
        if (!bytes) {
            c.out << f << ": invalid\n  error: [io] " << bytes.error().message << "\n";
            ++invalid;
            continue;
        }
        ParseOptions opt;
        opt.skeleton = skel->get();
        opt.allow_invalid_joints = !upload;
        opt.asset_id = std::filesystem::path(f).stem().string();
        if (!is_uuid_string(opt.asset_id)) opt.asset_id.clear();
        const ParseResult pr = parse_anim(*bytes, opt);
        const bool ok = pr.ok();
        invalid += !ok;
        c.out << fmt::format("{}: {} ({} error(s), {} warning(s))\n", f, ok ? "valid" : "invalid",
                             pr.count(Severity::Error), pr.count(Severity::Warning));
        for (const auto& d : pr.diagnostics) {
            if (quiet && d.severity == Severity::Warning) continue;
            c.out << "  " << d.describe() << "\n";
        }
    }
    return invalid ? 1 : 0;
}

/// BVH → .anim like the viewer's importer (LLBVHLoader), with the preview's overrides.
int convert_bvh(Context& c, const std::string& in, const std::string& out,
                const BvhImportOptions& opt) {
    auto bvh = load_bvh(in);
    if (!bvh) {
        c.err << "slanim convert: " << bvh.error().message << "\n";
        return 1;
    }
    auto skel = Skeleton::default_skeleton();
    auto imported = import_bvh(*bvh, *skel, opt);
    if (!imported) {
        c.err << "slanim convert: " << in << ": " << imported.error().message << "\n";
        return 1;
    }
    for (const auto& w : imported->warnings) c.err << "slanim convert: " << in << ": warning: " << w << "\n";
    auto w = write_file_atomic(out, write_anim(encode_motion(imported->motion)));
    if (!w) {
        c.err << "slanim convert: " << w.error().message << "\n";
        return 1;
    }
    return 0;
}

int cmd_convert(Context& c, const std::string& in, const std::string& out, bool force,
                const BvhImportOptions& bvh_options) {
    if (!force && std::filesystem::exists(out) &&
        std::filesystem::weakly_canonical(in) == std::filesystem::weakly_canonical(out)) {
        c.err << "slanim convert: refusing to overwrite the input " << in << " (use --force)\n";
        return 2;
    }
    std::string ext = std::filesystem::path(in).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char ch) { return std::tolower(ch); });
    if (ext == ".bvh") return convert_bvh(c, in, out, bvh_options);
    auto bytes = read_file_bytes(in);
    if (!bytes) {
        c.err << "slanim convert: " << bytes.error().message << "\n";
        return 1;
    }
    const ParseResult pr = parse_anim(*bytes);
    if (const Diagnostic* e = pr.first_error()) {
        c.err << "slanim convert: " << in << ": " << e->describe() << "\n";
        return 1;
    }
    const auto data = write_anim(pr.motion);
    auto w = write_file_atomic(out, data);
    if (!w) {
        c.err << "slanim convert: " << w.error().message << "\n";
        return 1;
    }
    return 0;
}

struct PlayOptions {
    std::vector<std::string> files;
    std::string character;
    double fps = 30.0;
    std::optional<double> duration, stop_at;
    std::string format = "csv";
    std::string output;
    bool pelvis_fix = false;
    std::string solver = "ccd";
};

int cmd_play(Context& c, const PlayOptions& o) {
    auto skel = pick_skeleton(o.character);
    if (!skel) {
        c.err << "slanim play: " << skel.error().describe() << "\n";
        return 1;
    }
    std::vector<std::shared_ptr<const MotionClip>> clips;
    if (o.files.empty()) {
        c.err << "slanim play: no FILE given: playing the built-in demo motion (a generated wave) "
                 "on the "
              << (o.character.empty() ? "embedded default skeleton" : "given skeleton") << "\n";
        Motion demo = make_demo_motion();
        for (auto& j : demo.joints) j.joint = (*skel)->find(j.name);
        clips.push_back(MotionClip::build(demo, **skel, "demo"));
    }
    for (const auto& f : o.files) {
        auto l = load(f, **skel);
        if (!l) {
            c.err << "slanim play: " << l.error().message << "\n";
            return 1;
        }
        clips.push_back(MotionClip::build(l->motion, **skel, f));
    }
    if (!(o.fps > 0.0) || o.fps > 10000.0) {
        c.err << "slanim play: --fps must be in (0, 10000]\n";
        return 2;
    }
    double duration = 0.0;
    for (const auto& clip : clips) duration = std::max(duration, static_cast<double>(clip->duration()));
    if (duration == 0.0) duration = 1.0;
    if (o.duration) duration = *o.duration;
    if (!(duration >= 0.0) || duration > 3600.0) {
        c.err << "slanim play: --duration must be in [0, 3600] s\n";
        return 2;
    }

    World world;
    ik::IkSettings ik_settings;
    ik_settings.enabled = o.solver != "none";
    if (ik_settings.enabled) ik_settings.solver = *ik::parse_solver(o.solver);
    world.set_default_ik_settings(ik_settings);
    const Entity avatar = world.create_avatar(*skel);
    MotionController& ctrl = world.controller(avatar);
    if (o.pelvis_fix) ctrl.start_pelvis_fix();
    for (const auto& clip : clips) ctrl.start(clip);

    const auto frames = static_cast<long long>(std::floor(duration * o.fps + 1e-9)) + 1;
    const float dt = static_cast<float>(1.0 / o.fps);
    const Skeleton& sk = **skel;

    std::ostringstream buffer;
    std::ostream& os = o.output.empty() ? c.out : static_cast<std::ostream&>(buffer);
    if (o.format == "csv") os << "frame,time,joint,px,py,pz,qx,qy,qz,qw\n";
    bool stopped = false;
    for (long long f = 0; f < frames; ++f) {
        const double t = static_cast<double>(f) / o.fps;
        world.step(f == 0 ? 0.f : dt);
        if (o.stop_at && !stopped && t >= *o.stop_at) {
            // Stop the named motions at this frame's time (they ease out from here); the
            // always-on pelvis fix keeps running, as in the viewer.
            for (const auto& clip : clips) ctrl.stop(clip.get());
            stopped = true;
        }
        const ModelPose& mp = world.model_pose(avatar);
        if (o.format == "csv") {
            for (int j = 0; j < sk.num_bones(); ++j) {
                const Vec3 p = mp.positions[j];
                const Quat q = mp.rotations[j];
                os << fmt::format("{},{},{},{},{},{},{},{},{},{}\n", f, t, sk.name(j), p.x, p.y, p.z,
                                  q.x, q.y, q.z, q.w);
            }
        } else {
            os << fmt::format("{{\"frame\":{},\"time\":{},\"joints\":{{", f, t);
            for (int j = 0; j < sk.num_bones(); ++j) {
                const Vec3 p = mp.positions[j];
                const Quat q = mp.rotations[j];
                os << fmt::format("{}\"{}\":{{\"p\":[{},{},{}],\"q\":[{},{},{},{}]}}", j ? "," : "",
                                  sk.name(j), p.x, p.y, p.z, q.x, q.y, q.z, q.w);
            }
            os << "}}\n";
        }
    }
    if (!o.output.empty()) {
        const std::string s = std::move(buffer).str();
        auto w = write_file_atomic(o.output, {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()});
        if (!w) {
            c.err << "slanim play: " << w.error().message << "\n";
            return 1;
        }
    }
    return 0;
}

}  // namespace

int run_cli(int argc, char** argv, std::ostream& out, std::ostream& err) {
    Context c{out, err};
    CLI::App app{"slanim: play, inspect, validate, convert Second Life animations (.anim) and solve their constraints"};
    app.set_version_flag("--version", "slanim 0.1.0");
    app.require_subcommand(1);

    std::vector<std::string> files;
    std::string character, format = "text";
    bool verbose = false;
    auto* info = app.add_subcommand("info", "One dense line per file (like animDump)");
    info->add_option("FILE", files, "Animation files (.anim)")->required();
    info->add_flag("-v,--verbose", verbose, "Add a per-joint table (json: all keys)");
    info->add_option("--format", format, "text, json or md")->check(CLI::IsMember({"text", "json", "md"}));
    info->add_option("--character", character, "Viewer character folder (default: embedded skeleton)");

    bool upload = false, quiet = false;
    auto* validate = app.add_subcommand("validate", "Errors and warnings per file; exit 1 if any is invalid");
    validate->add_option("FILE", files, "Animation files (.anim)")->required();
    validate->add_flag("--upload", upload, "Apply the upload rules (unknown joints are errors)");
    validate->add_flag("-q,--quiet", quiet, "Errors only");
    validate->add_option("--character", character, "Viewer character folder");

    std::string in, output;
    bool force = false;
    auto* convert = app.add_subcommand("convert", "Read and rewrite a motion (.anim → .anim, version 1.0)");
    convert->add_option("IN", in, "Input .anim, or .bvh (imported like the viewer's uploader)")->required();
    convert->add_option("-o,--output", output, "Output .anim")->required();
    convert->add_flag("--force", force, "Allow the output to be the input");
    BvhImportOptions bvh_opt;
    int bvh_priority = -1, bvh_hand = -1;
    double loop_in = -1, loop_out = -1, ease_in = -1, ease_out = -1;
    bool bvh_loop = false;
    std::string emote;
    convert->add_option("--priority", bvh_priority, "BVH: base priority 0..6 (default 2)");
    convert->add_flag("--loop", bvh_loop, "BVH: loop");
    convert->add_option("--loop-in", loop_in, "BVH: loop in point, seconds");
    convert->add_option("--loop-out", loop_out, "BVH: loop out point, seconds");
    convert->add_option("--ease-in", ease_in, "BVH: ease in, seconds (default 0.3)");
    convert->add_option("--ease-out", ease_out, "BVH: ease out, seconds (default 0.3)");
    convert->add_option("--hand-pose", bvh_hand, "BVH: hand pose 0..13 (default 1, relaxed)");
    convert->add_option("--emote", emote, "BVH: emote name");
    convert->add_flag("--skip-unknown", bvh_opt.skip_unknown_joints, "BVH: drop joints that are not SL joints instead of failing");

    PlayOptions po;
    double duration = -1.0, stop_at = -1.0;
    auto* play = app.add_subcommand("play", "Play motions on one avatar and write every bone's world pose per frame");
    play->add_option("FILE", po.files, "Animation files, all started at t = 0 (none: the built-in demo)");
    play->add_option("--character", po.character, "Viewer character folder (default: embedded skeleton)");
    play->add_option("--fps", po.fps, "Frames per second (default 30)");
    play->add_option("--duration", duration, "Seconds to play (default: the longest motion, 1 s if 0)");
    play->add_option("--stop-at", stop_at, "Stop the named motions at the first frame at or after this time (they ease out)");
    play->add_option("--format", po.format, "csv or jsonl")->check(CLI::IsMember({"csv", "jsonl"}));
    play->add_option("-o,--output", po.output, "Output file (default: standard output)");
    play->add_flag("--pelvis-fix", po.pelvis_fix, "Also run the viewer's always-on pelvis-fix motion");
    play->add_option("--solver", po.solver, "Constraint solver: ccd (default), fabrik, viewer or none")
        ->check(CLI::IsMember({"ccd", "fabrik", "viewer", "none"}));

    IkOptions iko;
    auto* ikc = add_ik_subcommand(app, iko);
    const EditCommand edc = add_edit_subcommand(app);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        std::ostringstream o, er;
        const int code = app.exit(e, o, er);
        out << o.str();
        err << er.str();
        return code == 0 ? 0 : 2;
    }
    try {
        if (*info) return cmd_info(c, files, verbose, format, character);
        if (*validate) return cmd_validate(c, files, upload, quiet, character);
        if (*convert) {
            if (bvh_priority >= 0) bvh_opt.priority = bvh_priority;
            if (bvh_loop) bvh_opt.loop = true;
            if (loop_in >= 0) bvh_opt.loop_in = static_cast<float>(loop_in);
            if (loop_out >= 0) bvh_opt.loop_out = static_cast<float>(loop_out);
            if (ease_in >= 0) bvh_opt.ease_in = static_cast<float>(ease_in);
            if (ease_out >= 0) bvh_opt.ease_out = static_cast<float>(ease_out);
            if (bvh_hand >= 0) bvh_opt.hand_pose = static_cast<std::uint32_t>(bvh_hand);
            if (!emote.empty()) bvh_opt.emote = emote;
            return cmd_convert(c, in, output, force, bvh_opt);
        }
        if (*play) {
            if (duration >= 0.0) po.duration = duration;
            if (stop_at >= 0.0) po.stop_at = stop_at;
            return cmd_play(c, po);
        }
        if (*ikc) return cmd_ik(out, err, iko);
        if (edc.selected()) return cmd_edit(out, err, *edc.options);
    } catch (const std::exception& e) {
        err << "slanim: " << e.what() << "\n";
        return 1;
    }
    return 2;
}

}  // namespace slanim::cli
