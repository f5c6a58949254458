// SPDX-License-Identifier: MIT
// The `slanim` command: info, validate, convert, play, ik.
#include "commands.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include "appearance_loading.hpp"
#include "convert_formats.hpp"
#include "crowd_command.hpp"
#include "describe.hpp"
#include "describe_appearance.hpp"
#include "edit_command.hpp"
#include "gfx_commands.hpp"
#include "gltf_export.hpp"
#include "gltf_import.hpp"
#include "ik_command.hpp"
#include "loading.hpp"
#include "mesh_export.hpp"
#include "relay_command.hpp"
#include "relay_load.hpp"
#include "slanim/formats/anim.hpp"
#include "slanim/formats/bvh.hpp"
#include "slanim/formats/bvh_import.hpp"
#include "slanim/core/clip.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/net/puppetry_sources.hpp"
#include "slanim/runtime/demo_motions.hpp"
#include "slanim/runtime/world.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/formats/anim_codec.hpp"

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
        if (const auto mf = mesh_format_for_path(f); mf && *mf != MeshFormat::Obj) {
            if (format != "text") {
                c.err << "slanim info: " << f << ": glTF files have a text description only (--format text)\n";
                status = 1;
                continue;
            }
            status = info_gltf(c.out, c.err, f, **skel) != 0 ? 1 : status;
            continue;
        }
        if (appearance_file_kind(f) != AppearanceFile::None) {  // .llm, .dat, avatar_lad.xml
            if (format == "json") {
                auto j = describe_appearance_json(f, verbose);
                if (j) all.push_back(std::move(*j));
                else c.err << "slanim info: " << j.error().describe() << "\n";
                status = j ? status : 1;
            } else {
                auto t = describe_appearance_text(f, verbose);
                if (t) c.out << *t;
                else c.err << "slanim info: " << t.error().describe() << "\n";
                status = t ? status : 1;
            }
            continue;
        }
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
                const BvhImportOptions& bvh_options, const ConvertFormatOptions& formats) {
    if (!force && std::filesystem::exists(out) &&
        std::filesystem::weakly_canonical(in) == std::filesystem::weakly_canonical(out)) {
        c.err << "slanim convert: refusing to overwrite the input " << in << " (use --force)\n";
        return 2;
    }
    std::string ext = std::filesystem::path(in).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char ch) { return std::tolower(ch); });
    if (auto r = convert_formats(c.out, c.err, in, out, bvh_options, formats)) return *r;
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

/// While alive, SIGINT and SIGTERM (unless ignored) only set a flag that received() returns
/// (0: none), so a long run can stop between frames and clean up; the destructor restores the
/// old handlers.
class InterruptGuard {
public:
    InterruptGuard() {
        signal_ = 0;
        catch_signal(SIGINT, old_[0]);
        catch_signal(SIGTERM, old_[1]);
    }
    ~InterruptGuard() {
        ::sigaction(SIGINT, &old_[0], nullptr);
        ::sigaction(SIGTERM, &old_[1], nullptr);
    }
    InterruptGuard(const InterruptGuard&) = delete;
    InterruptGuard& operator=(const InterruptGuard&) = delete;
    static int received() { return signal_; }

private:
    static void on_signal(int sig) { signal_ = sig; }
    static void catch_signal(int sig, struct sigaction& old) {
        ::sigaction(sig, nullptr, &old);
        if (old.sa_handler == SIG_IGN) return;  // e.g. SIGINT of a background job stays ignored
        struct sigaction sa {};
        sa.sa_handler = &InterruptGuard::on_signal;
        sigemptyset(&sa.sa_mask);
        ::sigaction(sig, &sa, nullptr);
    }
    static inline volatile std::sig_atomic_t signal_ = 0;
    struct sigaction old_[2] {};
};

struct PlayOptions {
    std::vector<std::string> files;
    std::string character;
    double fps = 30.0;
    std::optional<double> duration, stop_at;
    std::string format = "csv";
    std::string output;
    bool pelvis_fix = false;
    std::string solver = "ccd";
    std::string puppetry;  // --puppetry SOURCE (puppetry_sources.hpp), empty: none
    std::vector<std::string> wearables;  // --wearable FILE... (appearance_loading.hpp)
    std::string mesh_out, mesh_frames, mesh_format;  // --mesh-out PATTERN (mesh_export.hpp)
    std::string procedural;  // --procedural LIST (slanim/runtime/procedural.hpp), empty: none
    std::string look_at;     // --look-at X,Y,Z (avatar-root frame), empty: no target
};

int cmd_play(Context& c, const PlayOptions& o) {
    auto skel = pick_skeleton(o.character);
    if (!skel) {
        c.err << "slanim play: " << skel.error().describe() << "\n";
        return 1;
    }
    std::vector<std::shared_ptr<const MotionClip>> clips;
    const bool live_puppetry = !o.puppetry.empty() && !o.puppetry.starts_with("replay:");
    if (!o.puppetry.empty() && !o.puppetry.starts_with("replay:") && !o.puppetry.starts_with("udp://") &&
        o.puppetry != "leap:stdin") {
        c.err << "slanim play: --puppetry " << o.puppetry
              << ": expected udp://HOST:PORT, leap:stdin or replay:FILE[#loop]\n";
        return 2;
    }
    if (live_puppetry && !o.duration) {
        c.err << "slanim play: --puppetry " << o.puppetry << " is a live source: give --duration S\n";
        return 2;
    }
    if (o.puppetry == "leap:stdin" && o.output.empty()) {
        c.err << "slanim play: --puppetry leap:stdin answers LEAP requests on standard output: "
                 "write the poses with -o FILE\n";
        return 2;
    }
    if (o.files.empty() && o.puppetry.empty()) {
        c.err << "slanim play: no FILE given: playing the built-in demo motion (a generated wave) "
                 "on the "
              << (o.character.empty() ? "embedded default skeleton" : "given skeleton") << "\n";
        clips.push_back(MotionClip::build(make_demo_motion(**skel), **skel, "demo"));
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

    // --wearable / --mesh-out: the avatar's appearance (visual params, morphs, skinning) from the
    // character folder; the morph and skin phases then run every step.
    const bool wants_appearance = !o.wearables.empty() || !o.mesh_out.empty();
    if (o.mesh_out.empty() && (!o.mesh_frames.empty() || !o.mesh_format.empty())) {
        c.err << "slanim play: --mesh-frames and --mesh-format need --mesh-out PATTERN\n";
        return 2;
    }
    if (wants_appearance && o.character.empty()) {
        c.err << "slanim play: " << (o.mesh_out.empty() ? "--wearable" : "--mesh-out")
              << " needs --character DIR: without a character folder there is no avatar mesh (the "
                 "embedded default is a skeleton only)\n";
        return 2;
    }
    const auto frames = static_cast<long long>(std::floor(duration * o.fps + 1e-9)) + 1;
    MeshFormat mesh_format = MeshFormat::Obj;
    std::vector<long long> mesh_frames;
    if (!o.mesh_out.empty()) {
        if (!o.mesh_format.empty()) mesh_format = *parse_mesh_format(o.mesh_format);
        else mesh_format = mesh_format_for_path(o.mesh_out).value_or(MeshFormat::Obj);
        auto sel = parse_mesh_frames(o.mesh_frames.empty() ? "all" : o.mesh_frames, frames, o.fps);
        if (!sel) {
            c.err << "slanim play: " << sel.error().message << "\n";
            return 2;
        }
        mesh_frames = std::move(*sel);
        if (auto p = check_mesh_pattern(o.mesh_out, mesh_frames, o.fps); !p) {
            c.err << "slanim play: " << p.error().message << "\n";
            return 2;
        }
    }
    std::shared_ptr<Appearance> appearance;
    if (wants_appearance) {
        auto la = load_cli_appearance(o.character, *skel, o.wearables, /*skin=*/!o.mesh_out.empty());
        if (!la) {
            c.err << "slanim play: " << la.error().describe() << "\n";
            return 1;
        }
        for (const std::string& note : la->notes) c.err << "slanim play: --wearable " << note << "\n";
        appearance = la->appearance;
    }

    ProceduralSet procedural;
    if (!o.procedural.empty()) {
        auto p = parse_procedural_set(o.procedural);
        if (!p) {
            c.err << "slanim play: " << p.error().message << "\n";
            return 2;
        }
        procedural = *p;
    }
    std::optional<Vec3> look_at;
    if (!o.look_at.empty()) {
        auto p = parse_look_at(o.look_at);
        if (!p) {
            c.err << "slanim play: " << p.error().message << "\n";
            return 2;
        }
        look_at = *p;
    }

    World world;
    // --puppetry: the stream goes through the world's ingest phase and mixes with the motions
    // at priority 7 (slanim/runtime/puppetry.hpp). A replay runs on the world-step clock (simulated
    // time); live sources are paced in real time below.
    std::shared_ptr<PuppetryRuntime> puppetry;
    PuppetrySource* source = nullptr;
    if (!o.puppetry.empty()) puppetry = PuppetryRuntime::install(world);
    ik::IkSettings ik_settings;
    ik_settings.enabled = o.solver != "none";
    if (ik_settings.enabled) ik_settings.solver = *ik::parse_solver(o.solver);
    world.set_default_ik_settings(ik_settings);
    const Entity avatar = world.create_avatar(*skel);
    if (appearance && !world.set_appearance(avatar, appearance)) {
        c.err << "slanim play: the appearance of " << o.character << " does not fit its skeleton\n";
        return 1;
    }
    std::optional<SkinnedMeshSnapshot> snapshot;
    if (!o.mesh_out.empty()) snapshot.emplace(*appearance);
    std::size_t next_mesh = 0;
    std::string first_mesh_file, last_mesh_file;
    std::string title;
    for (const auto& f : o.files) title += (title.empty() ? "" : " ") + std::filesystem::path(f).filename().string();
    if (title.empty()) title = o.puppetry.empty() ? "the built-in demo" : o.puppetry;
    MotionController& ctrl = world.controller(avatar);
    if (o.pelvis_fix) ctrl.start_pelvis_fix();
    // The viewer's procedural motions start before the animations (startDefaultMotions runs
    // when the avatar is built), so the animations are the newer motions.
    if (!world.set_procedural_motions(avatar, procedural)) {
        c.err << "slanim play: --procedural: the skeleton lacks the joints of a requested motion\n";
        return 1;
    }
    if (look_at) world.set_look_at(avatar, *look_at);
    for (const auto& clip : clips) ctrl.start(clip);
    if (puppetry) {
        puppetry->set_default_avatar(world, avatar);
        auto src = open_puppetry_source(o.puppetry, avatar, **skel);
        if (!src) {
            c.err << "slanim play: " << src.error().describe() << "\n";
            return 1;
        }
        source = src->get();
        if (const auto* replay = dynamic_cast<const ReplayPuppetrySource*>(source); replay && !o.duration)
            duration = std::max(duration, replay->duration() + 1.0);  // + the jitter delay and a hold
        puppetry->add_source(std::move(*src));
    }

    const float dt = static_cast<float>(1.0 / o.fps);
    const Skeleton& sk = **skel;

    // -o FILE: the frames stream into the temporary file of an atomic write, so memory stays
    // flat however long the run; FILE is replaced only once every frame is written. An error,
    // or SIGINT/SIGTERM, leaves the old FILE (or none) and removes the temporary file.
    std::optional<AtomicFileWriter> file;
    std::optional<InterruptGuard> interrupt;
    if (!o.output.empty()) {
        auto w = AtomicFileWriter::open(o.output);
        if (!w) {
            c.err << "slanim play: " << w.error().message << "\n";
            return 1;
        }
        file.emplace(std::move(*w));
        interrupt.emplace();
    }
    std::string text;  // the lines of one frame
    const auto emit = [&]() -> bool {
        if (!file) {
            c.out << text;
            text.clear();
            return true;
        }
        auto w = file->write(text);
        text.clear();
        if (!w) c.err << "slanim play: " << w.error().message << "\n";
        return w.ok();
    };
    auto out = std::back_inserter(text);
    if (o.format == "csv") text = "frame,time,joint,px,py,pz,qx,qy,qz,qw\n";
    bool stopped = false;
    const auto wall_start = std::chrono::steady_clock::now();
    for (long long f = 0; f < frames; ++f) {
        if (const int sig = InterruptGuard::received()) {
            file.reset();  // removes the temporary file
            interrupt.reset();
            c.err << "slanim play: interrupted by signal " << sig << " at frame " << f << "; " << o.output
                  << " is not written\n";
            std::raise(sig);  // the default action now: end as the signal would have
            return 128 + sig;
        }
        const double t = static_cast<double>(f) / o.fps;
        if (live_puppetry) std::this_thread::sleep_until(wall_start + std::chrono::duration<double>(t));
        world.step(f == 0 ? 0.f : dt);
        if (o.stop_at && !stopped && t >= *o.stop_at) {
            // Stop the named motions at this frame's time (they ease out from here); the
            // always-on pelvis fix keeps running, as in the viewer.
            for (const auto& clip : clips) ctrl.stop(clip.get());
            stopped = true;
        }
        if (next_mesh < mesh_frames.size() && mesh_frames[next_mesh] == f) {
            ++next_mesh;
            snapshot->capture(*appearance);
            const std::string path = expand_mesh_pattern(o.mesh_out, f, o.fps);
            const std::string comment = fmt::format(
                "slanim play {}: frame {}, t = {:.6f} s\nSL avatar-root frame: metres, X forward, Y left, Z up\n"
                "{} meshes, {} vertices, {} triangles",
                title, f, t, snapshot->meshes().size(), snapshot->num_vertices(), snapshot->num_faces());
            if (auto w = write_mesh_file(path, snapshot->meshes(), mesh_format, comment); !w) {
                c.err << "slanim play: --mesh-out: " << w.error().message << "\n";
                return 1;
            }
            if (first_mesh_file.empty()) first_mesh_file = path;
            last_mesh_file = path;
        }
        const ModelPose& mp = world.model_pose(avatar);
        if (o.format == "csv") {
            for (int j = 0; j < sk.num_bones(); ++j) {
                const Vec3 p = mp.positions[j];
                const Quat q = mp.rotations[j];
                fmt::format_to(out, "{},{},{},{},{},{},{},{},{},{}\n", f, t, sk.name(j), p.x, p.y, p.z, q.x, q.y,
                               q.z, q.w);
            }
        } else {
            fmt::format_to(out, "{{\"frame\":{},\"time\":{},\"joints\":{{", f, t);
            for (int j = 0; j < sk.num_bones(); ++j) {
                const Vec3 p = mp.positions[j];
                const Quat q = mp.rotations[j];
                fmt::format_to(out, "{}\"{}\":{{\"p\":[{},{},{}],\"q\":[{},{},{},{}]}}", j ? "," : "",
                               sk.name(j), p.x, p.y, p.z, q.x, q.y, q.z, q.w);
            }
            text += "}}\n";
        }
        if (!emit()) return 1;
    }
    if (snapshot) {
        c.err << fmt::format("slanim play: --mesh-out: {} frame{} written ({} meshes, {} vertices, {} triangles "
                             "each): {}{}\n",
                             mesh_frames.size(), mesh_frames.size() == 1 ? "" : "s", snapshot->meshes().size(),
                             snapshot->num_vertices(), snapshot->num_faces(), first_mesh_file,
                             mesh_frames.size() > 1 ? " … " + last_mesh_file : std::string());
    }
    if (puppetry) {
        const std::string extra = source->counters();
        c.err << fmt::format("slanim play: puppetry {}: {}{}{}\n", source->describe(), puppetry->report(avatar),
                             extra.empty() ? "" : "; ", extra);
    }
    if (file) {
        if (auto w = file->commit(); !w) {
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
    info->add_option("FILE", files, "Animation files (.anim); also .glb/.gltf animations, .llm meshes, .dat wearables, avatar_lad.xml")->required();
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
    auto* convert = app.add_subcommand("convert", "Read and rewrite a motion, convert between .anim, .bvh, .bvj and poser .xml, or export .anim to glTF (.glb/.gltf)");
    convert->add_option("IN", in, "Input .anim, .bvh (imported like the viewer's uploader), .bvj, or a Firestorm poser .xml")->required();
    convert->add_option("-o,--output", output, "Output .anim, .bvh (+ .bvh.json sidecar), .bvj, or .glb/.gltf (skeleton, skinned avatar mesh and the animation)")->required();
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
    std::string importer = "current", pelvis_origin = "rest";
    double hip_turn = 0.0;
    convert->add_option("--importer", importer, "BVH: current (today's viewer) or linden-legacy (the loader of Linden's own files)")
        ->check(CLI::IsMember({"current", "linden-legacy"}));
    convert->add_option("--pelvis-origin", pelvis_origin, "BVH, linden-legacy: pelvis positions relative to the rest pose (rest, default) or to frame 0 (first-frame)")
        ->check(CLI::IsMember({"rest", "first-frame"}));
    convert->add_option("--hip-turn", hip_turn, "BVH, linden-legacy: the hip's offset rotation about Z, degrees (Linden's dances: 180)");
    ConvertFormatOptions formats;
    convert->add_option("--fps", formats.fps, "To BVH: sampling rate, frames per second (default 30)")
        ->check(CLI::Range(0.001, 1000.0));
    convert->add_option("--bvj-form", formats.bvj_form, "To BVJ: keyframes (default, every key kept) or motion (sampled)")
        ->check(CLI::IsMember({"keyframes", "motion"}));
    convert->add_flag("--all-frames", bvh_opt.keep_all_frames, "BVH, glTF: keep every frame/key (no key reduction)");
    GltfConvertOptions gltf_opt;
    std::string gltf_animation;
    convert->add_option("--character", gltf_opt.character,
                        "To glTF: viewer character folder (skeleton and avatar mesh; default: the embedded skeleton, no mesh)");
    convert->add_option("--wearable", gltf_opt.wearables,
                        "To glTF: LLWearable files shaping the avatar mesh (shape, skin, hair, eyes); needs --character");
    convert->add_flag("--no-mesh", gltf_opt.no_mesh, "To glTF: the skeleton and the animation only");
    convert->add_option("--animation", gltf_animation, "From glTF: the animation to read, by name or index (default: the first)");

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
    play->add_option("--procedural", po.procedural,
                     "Run the viewer's procedural motions: a comma list of breathe, body_noise, head_rot, eye, "
                     "or all (random saccades and blinks are seeded per avatar: runs repeat exactly)");
    play->add_option("--look-at", po.look_at,
                     "Look-at target X,Y,Z for head_rot and eye, metres in the avatar-root frame (X forward, "
                     "Y left, Z up; the pelvis rests at the origin)");
    play->add_option("--solver", po.solver, "Constraint solver: ccd (default), fabrik, viewer or none")
        ->check(CLI::IsMember({"ccd", "fabrik", "viewer", "none"}));
    play->add_option("--puppetry", po.puppetry,
                     "Mix a puppetry stream: udp://HOST:PORT, leap:stdin (live, real time, need --duration) "
                     "or replay:FILE[#loop] (simulated time)");
    play->add_option("--wearable", po.wearables,
                     "LLWearable files applied in order (shape, skin, hair, eyes); needs --character");
    play->add_option("--mesh-out", po.mesh_out,
                     "Write the skinned avatar mesh of the chosen frames: a file name pattern with %f (frame, "
                     "4 digits), %t (seconds) and %%; needs --character");
    play->add_option("--mesh-frames", po.mesh_frames,
                     "Frames for --mesh-out: all (default) or a comma list of N, A-B, A-B/S and times like 1.5s");
    play->add_option("--mesh-format", po.mesh_format,
                     "obj, gltf (embedded buffer) or glb (default: from the pattern's extension, else obj)")
        ->check(CLI::IsMember({"obj", "gltf", "glb"}));

    IkOptions iko;
    auto* ikc = add_ik_subcommand(app, iko);
    const EditCommand edc = add_edit_subcommand(app);
    GfxOptions view_opt, render_opt;
    auto* viewc = add_view_subcommand(app, view_opt);
    auto* renderc = add_render_subcommand(app, render_opt);
    RelayOptions relay_opt;
    auto* relayc = add_relay_subcommand(app, relay_opt);
    RelayLoadOptions load_opt;
    auto* loadc = add_relay_load_subcommand(app, load_opt);
    CrowdOptions crowd_opt;
    auto* crowdc = add_crowd_subcommand(app, crowd_opt);

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
            if (importer != "linden-legacy" &&
                (convert->count("--pelvis-origin") > 0 || convert->count("--hip-turn") > 0)) {
                err << "slanim convert: --pelvis-origin and --hip-turn need --importer linden-legacy\n";
                return 2;
            }
            if (importer == "linden-legacy") bvh_opt.importer = BvhImporter::LindenLegacy;
            if (pelvis_origin == "first-frame") bvh_opt.legacy_pelvis_origin = LegacyPelvisOrigin::FirstFrame;
            bvh_opt.legacy_pelvis_offset = quat_from_axis_angle(static_cast<float>(hip_turn * 3.14159265358979 / 180.0), {0.f, 0.f, 1.f});
            const auto gltf_path = [](const std::string& p) {
                const auto f = mesh_format_for_path(p);
                return f && *f != MeshFormat::Obj;
            };
            if (gltf_path(in)) {
                if (!gltf_opt.character.empty() || !gltf_opt.wearables.empty() || gltf_opt.no_mesh) {
                    err << "slanim convert: --character, --wearable and --no-mesh are for a glTF output (.glb or .gltf); "
                        << output << " is not one\n";
                    return 2;
                }
                if (importer != "current" || convert->count("--fps") > 0 || convert->count("--bvj-form") > 0) {
                    err << "slanim convert: --importer, --fps and --bvj-form do not apply to a glTF input\n";
                    return 2;
                }
                GltfImportOptions gi;
                gi.animation = gltf_animation;
                gi.import = bvh_opt;
                if (!force && std::filesystem::exists(output) &&
                    std::filesystem::weakly_canonical(in) == std::filesystem::weakly_canonical(output)) {
                    err << "slanim convert: refusing to overwrite the input " << in << " (use --force)\n";
                    return 2;
                }
                return convert_gltf_to_anim(err, in, output, gi);
            }
            if (!gltf_animation.empty()) {
                err << "slanim convert: --animation picks the animation of a glTF input; " << in
                    << " is not one\n";
                return 2;
            }
            if (gltf_path(output)) {
                if (!force && std::filesystem::exists(output) &&
                    std::filesystem::weakly_canonical(in) == std::filesystem::weakly_canonical(output)) {
                    err << "slanim convert: refusing to overwrite the input " << in << " (use --force)\n";
                    return 2;
                }
                gltf_opt.input = in;
                gltf_opt.output = output;
                return convert_anim_to_gltf(err, gltf_opt);
            }
            if (!gltf_opt.character.empty() || !gltf_opt.wearables.empty() || gltf_opt.no_mesh) {
                err << "slanim convert: --character, --wearable and --no-mesh are for a glTF output (.glb or .gltf); "
                    << output << " is not one\n";
                return 2;
            }
            return cmd_convert(c, in, output, force, bvh_opt, formats);
        }
        if (*play) {
            if (duration >= 0.0) po.duration = duration;
            if (stop_at >= 0.0) po.stop_at = stop_at;
            return cmd_play(c, po);
        }
        if (*ikc) return cmd_ik(out, err, iko);
        if (edc.selected()) return cmd_edit(out, err, *edc.options);
        if (*viewc) return cmd_view(out, err, view_opt);
        if (*renderc) return cmd_render(out, err, render_opt);
        if (*relayc) return cmd_relay(out, err, relay_opt);
        if (*loadc) return cmd_relay_load(out, err, load_opt);
        if (*crowdc) return cmd_crowd(out, err, crowd_opt);
    } catch (const std::exception& e) {
        err << "slanim: " << e.what() << "\n";
        return 1;
    }
    return 2;
}

}  // namespace slanim::cli
