// SPDX-License-Identifier: MIT
// `slanim play`. See play_command.hpp.
#include "play_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <iterator>
#include <memory>
#include <optional>
#include <ostream>
#include <thread>

#include "appearance_loading.hpp"
#include "interrupt_guard.hpp"
#include "loading.hpp"
#include "mesh_export.hpp"
#include "slanim/core/clip.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/net/puppetry_sources.hpp"
#include "slanim/runtime/demo_motions.hpp"
#include "slanim/runtime/world.hpp"
#include "slanim/runtime/appearance_feature.hpp"
#include "slanim/runtime/ik_feature.hpp"
#include "slanim/runtime/procedural_feature.hpp"

namespace slanim::cli {

CLI::App* add_play_subcommand(CLI::App& app, PlayOptions& po) {
    auto* play = app.add_subcommand("play", "Play motions on one avatar and write every bone's world pose per frame");
    play->add_option("FILE", po.files, "Animation files, all started at t = 0 (none: the built-in demo)");
    play->add_option("--character", po.character, "Viewer character folder (default: embedded skeleton)");
    play->add_option("--fps", po.fps, "Frames per second (default 30)");
    play->add_option_function<double>(
        "--duration", [&po](double s) { po.duration = s >= 0.0 ? std::optional<double>(s) : std::nullopt; },
        "Seconds to play (default: the longest motion, 1 s if 0)");
    play->add_option_function<double>(
        "--stop-at", [&po](double s) { po.stop_at = s >= 0.0 ? std::optional<double>(s) : std::nullopt; },
        "Stop the named motions at the first frame at or after this time (they ease out)");
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
    return play;
}

namespace {

/// A step's verdict: nullopt to go on, else the exit status to end with.
using Exit = std::optional<int>;

/// What the checks and loads before the first frame produce.
struct PlaySetup {
    std::shared_ptr<const Skeleton> skel;
    std::vector<std::shared_ptr<const MotionClip>> clips;
    bool live_puppetry = false;  // udp:// or leap:stdin: paced in real time
    double duration = 0.0;       // seconds
    long long frames = 0;
    std::shared_ptr<Appearance> appearance;  // --wearable / --mesh-out
    ProceduralSet procedural;
    std::optional<Vec3> look_at;
};

/// --mesh-out: the format, the frames to write, the reusable snapshot and the files written.
struct MeshOutput {
    MeshFormat format = MeshFormat::Obj;
    std::vector<long long> frames;
    std::optional<SkinnedMeshSnapshot> snapshot;
    std::size_t next = 0;
    std::string first_file, last_file;
};

Exit check_puppetry_options(std::ostream& err, const PlayOptions& o) {
    if (!o.puppetry.empty() && !o.puppetry.starts_with("replay:") && !o.puppetry.starts_with("udp://") &&
        o.puppetry != "leap:stdin") {
        err << "slanim play: --puppetry " << o.puppetry << ": expected udp://HOST:PORT, leap:stdin or replay:FILE[#loop]\n";
        return 2;
    }
    const bool live_puppetry = !o.puppetry.empty() && !o.puppetry.starts_with("replay:");
    if (live_puppetry && !o.duration) {
        err << "slanim play: --puppetry " << o.puppetry << " is a live source: give --duration S\n";
        return 2;
    }
    if (o.puppetry == "leap:stdin" && o.output.empty()) {
        err << "slanim play: --puppetry leap:stdin answers LEAP requests on standard output: "
               "write the poses with -o FILE\n";
        return 2;
    }
    return std::nullopt;
}

/// The motion files, or the built-in demo when there is neither a file nor a puppetry stream.
Exit load_clips(std::ostream& err, const PlayOptions& o, PlaySetup& s) {
    const Skeleton& skel = *s.skel;
    if (o.files.empty() && o.puppetry.empty()) {
        err << "slanim play: no FILE given: playing the built-in demo motion (a generated wave) on the "
            << (o.character.empty() ? "embedded default skeleton" : "given skeleton") << "\n";
        s.clips.push_back(MotionClip::build(make_demo_motion(skel), skel, "demo"));
    }
    for (const auto& f : o.files) {
        auto l = load(f, skel);
        if (!l) {
            err << "slanim play: " << l.error().message << "\n";
            return 1;
        }
        s.clips.push_back(MotionClip::build(l->motion, skel, f));
    }
    return std::nullopt;
}

/// --fps and the duration (the longest motion, 1 s if 0, or --duration), and the frame count.
Exit resolve_duration(std::ostream& err, const PlayOptions& o, PlaySetup& s) {
    if (!(o.fps > 0.0) || o.fps > 10000.0) {
        err << "slanim play: --fps must be in (0, 10000]\n";
        return 2;
    }
    double duration = 0.0;
    for (const auto& clip : s.clips) duration = std::max(duration, static_cast<double>(clip->duration()));
    if (duration == 0.0) duration = 1.0;
    if (o.duration) duration = *o.duration;
    if (!(duration >= 0.0) || duration > 3600.0) {
        err << "slanim play: --duration must be in [0, 3600] s\n";
        return 2;
    }
    s.duration = duration;
    s.frames = static_cast<long long>(std::floor(duration * o.fps + 1e-9)) + 1;
    return std::nullopt;
}

/// --wearable / --mesh-out: the avatar's appearance (visual params, morphs, skinning) from the
/// character folder; the morph and skin phases then run every step.
Exit check_appearance_options(std::ostream& err, const PlayOptions& o) {
    const bool wants_appearance = !o.wearables.empty() || !o.mesh_out.empty();
    if (o.mesh_out.empty() && (!o.mesh_frames.empty() || !o.mesh_format.empty())) {
        err << "slanim play: --mesh-frames and --mesh-format need --mesh-out PATTERN\n";
        return 2;
    }
    if (wants_appearance && o.character.empty()) {
        err << "slanim play: " << (o.mesh_out.empty() ? "--wearable" : "--mesh-out")
            << " needs --character DIR: without a character folder there is no avatar mesh (the "
               "embedded default is a skeleton only)\n";
        return 2;
    }
    return std::nullopt;
}

Exit prepare_mesh_output(std::ostream& err, const PlayOptions& o, long long frames, MeshOutput& mesh) {
    if (o.mesh_out.empty()) return std::nullopt;
    if (!o.mesh_format.empty()) mesh.format = *parse_mesh_format(o.mesh_format);
    else mesh.format = mesh_format_for_path(o.mesh_out).value_or(MeshFormat::Obj);
    auto sel = parse_mesh_frames(o.mesh_frames.empty() ? "all" : o.mesh_frames, frames, o.fps);
    if (!sel) {
        err << "slanim play: " << sel.error().message << "\n";
        return 2;
    }
    mesh.frames = std::move(*sel);
    if (auto p = check_mesh_pattern(o.mesh_out, mesh.frames, o.fps); !p) {
        err << "slanim play: " << p.error().message << "\n";
        return 2;
    }
    return std::nullopt;
}

/// With --character, the avatar has the viewer's default shape (character_has_shape) even
/// without --wearable or --mesh-out: its skeleton is shaped like every other command's.
Exit load_appearance(std::ostream& err, const PlayOptions& o, PlaySetup& s) {
    if (o.character.empty()) return std::nullopt;
    if (o.wearables.empty() && o.mesh_out.empty() && !character_has_shape(o.character)) {
        err << "slanim play: note: " << default_shape_note(o.character) << "\n";
        return std::nullopt;
    }
    auto la = load_cli_appearance(o.character, s.skel, o.wearables, /*skin=*/!o.mesh_out.empty());
    if (!la) {
        err << "slanim play: " << la.error().describe() << "\n";
        return 1;
    }
    for (const std::string& note : la->notes) err << "slanim play: --wearable " << note << "\n";
    s.appearance = la->appearance;
    return std::nullopt;
}

Exit parse_procedural_options(std::ostream& err, const PlayOptions& o, PlaySetup& s) {
    if (!o.procedural.empty()) {
        auto p = parse_procedural_set(o.procedural);
        if (!p) {
            err << "slanim play: " << p.error().message << "\n";
            return 2;
        }
        s.procedural = *p;
    }
    if (!o.look_at.empty()) {
        auto p = parse_look_at(o.look_at);
        if (!p) {
            err << "slanim play: " << p.error().message << "\n";
            return 2;
        }
        s.look_at = *p;
    }
    return std::nullopt;
}

/// Every check and load before the world is built, in the order their messages take.
Exit prepare(std::ostream& err, const PlayOptions& o, PlaySetup& s, MeshOutput& mesh) {
    auto skel = pick_skeleton(o.character);
    if (!skel) {
        err << "slanim play: " << skel.error().describe() << "\n";
        return 1;
    }
    s.skel = *skel;
    s.live_puppetry = !o.puppetry.empty() && !o.puppetry.starts_with("replay:");
    if (auto e = check_puppetry_options(err, o)) return e;
    if (auto e = load_clips(err, o, s)) return e;
    if (auto e = resolve_duration(err, o, s)) return e;
    if (auto e = check_appearance_options(err, o)) return e;
    if (auto e = prepare_mesh_output(err, o, s.frames, mesh)) return e;
    if (auto e = load_appearance(err, o, s)) return e;
    return parse_procedural_options(err, o, s);
}

/// The world with the one avatar, its motions and its puppetry stream.
struct PlayScene {
    World world;
    Entity avatar;
    MotionController* controller = nullptr;
    std::shared_ptr<PuppetryRuntime> puppetry;
    PuppetrySource* source = nullptr;
};

Exit build_scene(std::ostream& err, const PlayOptions& o, PlaySetup& s, MeshOutput& mesh, PlayScene& scene) {
    World& world = scene.world;
    // --puppetry: the stream goes through the world's ingest phase and mixes with the motions
    // at priority 7 (slanim/runtime/puppetry.hpp). A replay runs on the world-step clock (simulated
    // time); live sources are paced in real time (play_frames).
    if (!o.puppetry.empty()) scene.puppetry = PuppetryRuntime::install(world);
    ik::IkSettings ik_settings;
    ik_settings.enabled = o.solver != "none";
    if (ik_settings.enabled) ik_settings.solver = *ik::parse_solver(o.solver);
    IkFeature::of(world).set_default_settings(ik_settings);
    scene.avatar = world.create_avatar(s.skel);
    if (s.appearance && !AppearanceFeature::of(world).set(scene.avatar, s.appearance)) {
        err << "slanim play: the appearance of " << o.character << " does not fit its skeleton\n";
        return 1;
    }
    if (!o.mesh_out.empty()) mesh.snapshot.emplace(*s.appearance);
    MotionController& ctrl = world.controller(scene.avatar);
    scene.controller = &ctrl;
    if (o.pelvis_fix) ctrl.start_pelvis_fix();
    // The viewer's procedural motions start before the animations (startDefaultMotions runs
    // when the avatar is built), so the animations are the newer motions.
    if (!ProceduralFeature::of(world).set_motions(scene.avatar, s.procedural)) {
        err << "slanim play: --procedural: the skeleton lacks the joints of a requested motion\n";
        return 1;
    }
    if (s.look_at) ProceduralFeature::of(world).set_look_at(scene.avatar, *s.look_at);
    for (const auto& clip : s.clips) ctrl.start(clip);
    if (scene.puppetry) {
        scene.puppetry->set_default_avatar(world, scene.avatar);
        auto src = open_puppetry_source(o.puppetry, scene.avatar, *s.skel);
        if (!src) {
            err << "slanim play: " << src.error().describe() << "\n";
            return 1;
        }
        scene.source = src->get();
        if (const auto* replay = dynamic_cast<const ReplayPuppetrySource*>(scene.source); replay && !o.duration)
            s.duration = std::max(s.duration, replay->duration() + 1.0);  // + the jitter delay and a hold
        scene.puppetry->add_source(std::move(*src));
    }
    return std::nullopt;
}

/// Where the frames go: standard output, or (-o FILE) the temporary file of an atomic write,
/// so memory stays flat however long the run; FILE is replaced only once every frame is
/// written. An error, or SIGINT/SIGTERM, leaves the old FILE (or none) and removes the
/// temporary file.
class FrameWriter {
public:
    FrameWriter(std::ostream& out, std::ostream& err, const PlayOptions& o) : out_(out), err_(err), o_(o) {}

    Exit open() {
        if (!o_.output.empty()) {
            auto w = AtomicFileWriter::open(o_.output);
            if (!w) {
                err_ << "slanim play: " << w.error().message << "\n";
                return 1;
            }
            file_.emplace(std::move(*w));
            interrupt_.emplace();
        }
        if (o_.format == "csv") text_ = "frame,time,joint,px,py,pz,qx,qy,qz,qw\n";
        return std::nullopt;
    }

    /// After SIGINT/SIGTERM: drops the temporary file and ends as the signal would.
    Exit interrupted(long long frame) {
        const int sig = InterruptGuard::received();
        if (!sig) return std::nullopt;
        file_.reset();  // removes the temporary file
        interrupt_.reset();
        err_ << "slanim play: interrupted by signal " << sig << " at frame " << frame << "; " << o_.output
             << " is not written\n";
        std::raise(sig);  // the default action now: end as the signal would have
        return 128 + sig;
    }

    /// Appends frame `f` at `t` seconds (every bone's model-space pose) and writes it out.
    bool write_frame(long long f, double t, const Skeleton& sk, const ModelPose& mp) {
        auto out = std::back_inserter(text_);
        if (o_.format == "csv") {
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
                fmt::format_to(out, "{}\"{}\":{{\"p\":[{},{},{}],\"q\":[{},{},{},{}]}}", j ? "," : "", sk.name(j),
                               p.x, p.y, p.z, q.x, q.y, q.z, q.w);
            }
            text_ += "}}\n";
        }
        return emit();
    }

    /// Replaces FILE (-o) with everything written.
    bool commit() {
        if (!file_) return true;
        if (auto w = file_->commit(); !w) {
            err_ << "slanim play: " << w.error().message << "\n";
            return false;
        }
        return true;
    }

private:
    bool emit() {
        if (!file_) {
            out_ << text_;
            text_.clear();
            return true;
        }
        auto w = file_->write(text_);
        text_.clear();
        if (!w) err_ << "slanim play: " << w.error().message << "\n";
        return w.ok();
    }

    std::ostream& out_;
    std::ostream& err_;
    const PlayOptions& o_;
    std::optional<AtomicFileWriter> file_;
    std::optional<InterruptGuard> interrupt_;
    std::string text_;  // the lines of one frame
};

/// The title of the mesh files' comments: the motion file names, else the source.
std::string play_title(const PlayOptions& o) {
    std::string title;
    for (const auto& f : o.files) title += (title.empty() ? "" : " ") + std::filesystem::path(f).filename().string();
    if (title.empty()) title = o.puppetry.empty() ? "the built-in demo" : o.puppetry;
    return title;
}

/// --mesh-out: writes the skinned mesh when frame `f` is one of the chosen frames.
Exit write_mesh_frame(std::ostream& err, const PlayOptions& o, const PlaySetup& s, const std::string& title,
                      long long f, double t, MeshOutput& mesh) {
    if (mesh.next >= mesh.frames.size() || mesh.frames[mesh.next] != f) return std::nullopt;
    ++mesh.next;
    mesh.snapshot->capture(*s.appearance);
    const std::string path = expand_mesh_pattern(o.mesh_out, f, o.fps);
    const std::string comment = fmt::format(
        "slanim play {}: frame {}, t = {:.6f} s\nSL avatar-root frame: metres, X forward, Y left, Z up\n"
        "{} meshes, {} vertices, {} triangles",
        title, f, t, mesh.snapshot->meshes().size(), mesh.snapshot->num_vertices(), mesh.snapshot->num_faces());
    if (auto w = write_mesh_file(path, mesh.snapshot->meshes(), mesh.format, comment); !w) {
        err << "slanim play: --mesh-out: " << w.error().message << "\n";
        return 1;
    }
    if (mesh.first_file.empty()) mesh.first_file = path;
    mesh.last_file = path;
    return std::nullopt;
}

/// Steps the world frame by frame (live puppetry paced in real time), stops the motions at
/// --stop-at, and writes each frame's pose and the chosen meshes.
Exit play_frames(std::ostream& err, const PlayOptions& o, const PlaySetup& s, PlayScene& scene, MeshOutput& mesh,
                 FrameWriter& writer) {
    const float dt = static_cast<float>(1.0 / o.fps);
    const std::string title = play_title(o);
    bool stopped = false;
    const auto wall_start = std::chrono::steady_clock::now();
    for (long long f = 0; f < s.frames; ++f) {
        if (auto e = writer.interrupted(f)) return e;
        const double t = static_cast<double>(f) / o.fps;
        if (s.live_puppetry) std::this_thread::sleep_until(wall_start + std::chrono::duration<double>(t));
        scene.world.step(f == 0 ? 0.f : dt);
        if (o.stop_at && !stopped && t >= *o.stop_at) {
            // Stop the named motions at this frame's time (they ease out from here); the
            // always-on pelvis fix keeps running, as in the viewer.
            for (const auto& clip : s.clips) scene.controller->stop(clip.get());
            stopped = true;
        }
        if (auto e = write_mesh_frame(err, o, s, title, f, t, mesh)) return e;
        if (!writer.write_frame(f, t, *s.skel, scene.world.model_pose(scene.avatar))) return 1;
    }
    return std::nullopt;
}

void report(std::ostream& err, const MeshOutput& mesh, const PlayScene& scene) {
    if (mesh.snapshot) {
        const std::size_t n = mesh.frames.size();
        err << fmt::format("slanim play: --mesh-out: {} frame{} written ({} meshes, {} vertices, {} triangles "
                           "each): {}{}\n",
                           n, n == 1 ? "" : "s", mesh.snapshot->meshes().size(), mesh.snapshot->num_vertices(),
                           mesh.snapshot->num_faces(), mesh.first_file, n > 1 ? " … " + mesh.last_file : std::string());
    }
    if (scene.puppetry) {
        const std::string extra = scene.source->counters();
        err << fmt::format("slanim play: puppetry {}: {}{}{}\n", scene.source->describe(),
                           scene.puppetry->report(scene.avatar), extra.empty() ? "" : "; ", extra);
    }
}

}  // namespace

int cmd_play(std::ostream& out, std::ostream& err, const PlayOptions& o) {
    PlaySetup s;
    MeshOutput mesh;
    if (auto e = prepare(err, o, s, mesh)) return *e;
    PlayScene scene;
    if (auto e = build_scene(err, o, s, mesh, scene)) return *e;
    FrameWriter writer(out, err, o);
    if (auto e = writer.open()) return *e;
    if (auto e = play_frames(err, o, s, scene, mesh, writer)) return *e;
    report(err, mesh, scene);
    return writer.commit() ? 0 : 1;
}

}  // namespace slanim::cli
