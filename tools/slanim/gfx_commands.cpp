// SPDX-License-Identifier: MIT
#include "gfx_commands.hpp"

#include <CLI/CLI.hpp>
#include <SDL.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <numbers>
#include <ostream>
#include <string_view>

#include "appearance_loading.hpp"
#include "demo_motion.hpp"
#include "loading.hpp"
#include "mesh_export.hpp"
#include "slanim/core/clip.hpp"
#include "slanim/gfx/avatar_scene.hpp"
#include "slanim/gfx/gl_context.hpp"
#include "slanim/gfx/playback.hpp"
#include "slanim/gfx/renderer.hpp"
#include "slanim/runtime/appearance.hpp"
#include "slanim/net/puppetry_sources.hpp"
#include "slanim/runtime/puppetry.hpp"

namespace slanim::cli {

namespace {
/// Hands a world a source that outlives it (see the view's world setup): every call goes to the
/// shared source.
class SharedPuppetrySource final : public PuppetrySource {
public:
    explicit SharedPuppetrySource(std::shared_ptr<PuppetrySource> s) : source_(std::move(s)) {}
    void poll(PuppetryRuntime& runtime, World& world, double now_s) override { source_->poll(runtime, world, now_s); }
    [[nodiscard]] std::string describe() const override { return source_->describe(); }
    [[nodiscard]] bool finished() const override { return source_->finished(); }
    [[nodiscard]] std::string counters() const override { return source_->counters(); }

private:
    std::shared_ptr<PuppetrySource> source_;
};
}  // namespace

namespace {

constexpr double kDegToRad = std::numbers::pi / 180.0;

/// The real avatar mesh drawn by the renderer: the Appearance's skinned meshes (SoA) converted
/// into reusable AoS arrays each frame (no allocation per frame), flat index lists built once,
/// one flat colour per mesh. The skirt is left out: the viewer draws it only with a skirt
/// wearable, and clothing is not implemented.
class AvatarMeshBody {
public:
    explicit AvatarMeshBody(const Appearance& appearance) : snapshot_(appearance) {
        const auto meshes = snapshot_.meshes();
        indices_.resize(meshes.size());
        for (std::size_t k = 0; k < meshes.size(); ++k) {
            const ExportMesh& m = meshes[k];
            if (m.name == "skirtMesh" || m.positions.empty() || m.faces.empty()) continue;
            indices_[k].reserve(3 * m.faces.size());
            for (const auto& f : m.faces) indices_[k].insert(indices_[k].end(), f.begin(), f.end());
            gfx::RenderMesh rm;
            rm.positions = m.positions;
            rm.normals = m.normals;
            rm.indices32 = indices_[k];
            rm.colour = colour_of(m.name);
            render_.push_back(rm);
        }
    }
    /// Copies the appearance's skinned vertices (the spans of meshes() stay valid).
    void update(const Appearance& appearance) { snapshot_.capture(appearance); }
    [[nodiscard]] std::span<const gfx::RenderMesh> meshes() const { return render_; }

private:
    static gfx::Rgba colour_of(std::string_view type) {
        if (type == "hairMesh") return {0.30f, 0.20f, 0.13f, 1.f};
        if (type == "eyelashMesh") return {0.12f, 0.09f, 0.08f, 1.f};
        if (type.starts_with("eyeBall")) return {0.90f, 0.90f, 0.92f, 1.f};
        return {0.80f, 0.60f, 0.48f, 1.f};  // skin
    }
    SkinnedMeshSnapshot snapshot_;
    std::vector<std::vector<std::uint32_t>> indices_;
    std::vector<gfx::RenderMesh> render_;
};

/// What both commands need before drawing: the skeleton, the clips, the playback and, with
/// --character, the avatar mesh.
struct Setup {
    std::shared_ptr<const Skeleton> skeleton;
    std::unique_ptr<gfx::Playback> playback;
    std::shared_ptr<const LoadedAppearance> appearance;  ///< null without --character
    std::unique_ptr<AvatarMeshBody> mesh;               ///< null without --character
    std::string title;  ///< the files' stems, for captions
    /// The puppetry runtime of the current world (replaced when a fresh world is set up) and
    /// its source, for the counters printed on exit; null without --puppetry.
    std::shared_ptr<std::shared_ptr<PuppetryRuntime>> puppetry =
        std::make_shared<std::shared_ptr<PuppetryRuntime>>();
};

/// Loads the skeleton and motions like `slanim play` (no FILE: the built-in demo). Returns the
/// exit status on failure.
std::optional<int> setup(const char* cmd, std::ostream& err, const GfxOptions& o, Setup& s) {
    if (!(o.fps > 0.0) || o.fps > 10000.0) {
        err << fmt::format("slanim {}: --fps must be in (0, 10000]\n", cmd);
        return 2;
    }
    auto skel = pick_skeleton(o.character);
    if (!skel) {
        err << fmt::format("slanim {}: {}\n", cmd, skel.error().describe());
        return 1;
    }
    s.skeleton = *skel;
    if (!o.puppetry.empty() && !o.puppetry.starts_with("replay:") &&
        (std::string_view(cmd) == "render" ||
         (!o.puppetry.starts_with("udp://") && o.puppetry != "leap:stdin"))) {
        err << fmt::format(
            "slanim {}: --puppetry {}: expected {}\n", cmd, o.puppetry,
            std::string_view(cmd) == "render" ? "replay:FILE[#loop] (a picture at --time T must be reproducible)"
                                              : "udp://HOST:PORT, leap:stdin or replay:FILE[#loop]");
        return 2;
    }
    if (!o.wearables.empty() && o.character.empty()) {
        err << fmt::format(
            "slanim {}: --wearable needs --character DIR: without a character folder there is no "
            "avatar mesh (the generated body has no visual params)\n",
            cmd);
        return 2;
    }
    if (!o.character.empty()) {  // the real avatar mesh, skinned on the CPU
        auto la = load_cli_appearance(o.character, s.skeleton, o.wearables);
        if (!la) {
            err << fmt::format("slanim {}: {}\n", cmd, la.error().describe());
            return 1;
        }
        for (const std::string& note : la->notes) err << fmt::format("slanim {}: --wearable {}\n", cmd, note);
        s.appearance = std::make_shared<const LoadedAppearance>(std::move(*la));
    }
    std::vector<std::shared_ptr<const MotionClip>> clips;
    std::vector<std::string> names;
    if (o.files.empty()) {
        err << fmt::format("slanim {}: no FILE given: playing the built-in demo motion\n", cmd);
        Motion demo = make_demo_motion();
        for (auto& j : demo.joints) j.joint = s.skeleton->find(j.name);
        clips.push_back(MotionClip::build(demo, *s.skeleton, "demo"));
        names.emplace_back("demo");
    }
    for (const auto& f : o.files) {
        auto l = load(f, *s.skeleton);
        if (!l) {
            err << fmt::format("slanim {}: {}\n", cmd, l.error().message);
            return 1;
        }
        const std::string stem = std::filesystem::path(f).stem().string();
        clips.push_back(MotionClip::build(l->motion, *s.skeleton, stem));
        names.push_back(stem);
    }
    for (std::size_t i = 0; i < names.size(); ++i) s.title += (i ? ", " : "") + names[i];
    ik::IkSettings ik;
    ik.enabled = o.solver != "none";
    if (ik.enabled) ik.solver = ik::parse_solver(o.solver).value_or(ik::Solver::Ccd);
    ProceduralSet procedural;
    std::optional<Vec3> look_at;
    if (!o.procedural.empty()) {
        auto p = parse_procedural_set(o.procedural);
        if (!p) {
            err << fmt::format("slanim {}: {}\n", cmd, p.error().message);
            return 2;
        }
        procedural = *p;
    }
    if (!o.look_at.empty()) {
        auto p = parse_look_at(o.look_at);
        if (!p) {
            err << fmt::format("slanim {}: {}\n", cmd, p.error().message);
            return 2;
        }
        look_at = *p;
    }
    s.playback = std::make_unique<gfx::Playback>(s.skeleton, std::move(clips), o.fps, ik);
    if (s.appearance || !o.puppetry.empty() || procedural != ProceduralSet{} || look_at) {
        // Every fresh world (also when scrubbing backwards replays from 0) gets a fresh
        // appearance with the wearables applied and a fresh puppetry source (a replay starts
        // over; the previous world, and its socket, is gone by then), so a frame looks the same
        // however it is reached.
        auto la = s.appearance;
        auto skeleton = s.skeleton;
        const std::string spec = o.puppetry;
        auto current = s.puppetry;
        // A live source (udp://, leap:stdin) outlives the worlds: one socket for the whole
        // session, so nothing is lost or reset when playback restarts; a replay starts over.
        auto live = std::make_shared<std::shared_ptr<PuppetrySource>>();
        auto r = s.playback->set_world_setup([la, skeleton, spec, current, live, procedural, look_at](
                                                 World& world, Entity avatar) -> Result<bool> {
            // The viewer's procedural motions (older than the clips, which start after this).
            if (procedural != ProceduralSet{} && !world.set_procedural_motions(avatar, procedural))
                return Error{"--procedural: the skeleton lacks the joints of a requested motion"};
            if (look_at) world.set_look_at(avatar, *look_at);
            if (la) {
                auto a = la->make();
                if (!a) return a.error();
                if (!world.set_appearance(avatar, std::move(*a)))
                    return Error{"the appearance does not fit the skeleton"};
            }
            if (!spec.empty()) {  // mixed with the motions at priority 7, like `slanim play`
                auto runtime = PuppetryRuntime::install(world);
                runtime->set_default_avatar(world, avatar);
                if (spec.starts_with("replay:")) {
                    auto src = open_puppetry_source(spec, avatar, *skeleton);
                    if (!src) return Error{"--puppetry " + spec + ": " + src.error().describe()};
                    runtime->add_source(std::move(*src));
                } else {
                    if (!*live) {
                        auto src = open_puppetry_source(spec, avatar, *skeleton);
                        if (!src) return Error{"--puppetry " + spec + ": " + src.error().describe()};
                        *live = std::shared_ptr<PuppetrySource>(std::move(*src));
                    }
                    runtime->add_source(std::make_unique<SharedPuppetrySource>(*live));
                }
                if (*current) runtime->carry_datagram_counters(**current);  // one running count
                *current = runtime;
            }
            return true;
        });
        if (!r) {
            err << fmt::format("slanim {}: {}\n", cmd, r.error().message);
            return 1;
        }
        if (s.appearance)
            s.mesh = std::make_unique<AvatarMeshBody>(*s.playback->world().appearance(s.playback->avatar()));
    }
    return std::nullopt;
}

gfx::OrbitCamera initial_camera(const GfxOptions& o) {
    gfx::OrbitCamera cam;
    if (o.yaw_deg) cam.yaw = static_cast<float>(*o.yaw_deg * kDegToRad);
    if (o.pitch_deg) cam.pitch = static_cast<float>(*o.pitch_deg * kDegToRad);
    if (o.distance) cam.distance = static_cast<float>(*o.distance);
    return cam;
}

std::optional<int> check_camera(const char* cmd, std::ostream& err, const GfxOptions& o) {
    if (o.pitch_deg && !(std::fabs(*o.pitch_deg) <= 85.0)) {
        err << fmt::format("slanim {}: --pitch must be in [-85, 85] degrees\n", cmd);
        return 2;
    }
    if (o.yaw_deg && !std::isfinite(*o.yaw_deg)) {
        err << fmt::format("slanim {}: --yaw must be a finite number of degrees\n", cmd);
        return 2;
    }
    if (o.distance && !(*o.distance >= 0.1 && *o.distance <= 1000.0)) {
        err << fmt::format("slanim {}: --distance must be in [0.1, 1000] metres\n", cmd);
        return 2;
    }
    return std::nullopt;
}

/// Fills `scene` for the playback's current frame: the avatar mesh when there is one (and the
/// world's avatar has its appearance), else the generated body.
void build_frame(gfx::Scene& scene, gfx::Playback& pb, gfx::GeneratedBody& body, AvatarMeshBody* mesh,
                 const gfx::OverlayOptions& overlays, gfx::OrbitCamera& cam) {
    World& world = pb.world();
    const ModelPose& pose = world.model_pose(pb.avatar());
    std::span<const gfx::RenderMesh> meshes;
    if (const Appearance* a = world.appearance(pb.avatar()); mesh && a) {
        mesh->update(*a);
        meshes = mesh->meshes();
    } else {
        body.update(pose.positions, pose.rotations);
        meshes = body.meshes();
    }
    scene.clear();
    gfx::build_avatar_scene(scene, world, pb.avatar(), meshes, overlays);
    cam.follow(pose.positions[static_cast<std::size_t>(pb.skeleton().pelvis())]);
}

/// Legend text size for a picture `height` pixels tall (stb_easy_font: ~12 px per line at 1).
float label_scale(int height) { return height >= 1000 ? 2.f : height >= 480 ? 1.5f : 1.f; }

bool parse_size(const std::string& s, int& w, int& h) {
    const auto x = s.find_first_of("xX");
    if (x == std::string::npos) return false;
    try {
        std::size_t used = 0;
        w = std::stoi(s.substr(0, x), &used);
        if (used != x) return false;
        const std::string hs = s.substr(x + 1);
        h = std::stoi(hs, &used);
        if (used != hs.size()) return false;
    } catch (const std::exception&) {
        return false;
    }
    return w >= 16 && h >= 16 && w <= 8192 && h <= 8192;
}

}  // namespace

CLI::App* add_view_subcommand(CLI::App& app, GfxOptions& o) {
    auto* v = app.add_subcommand("view", "Play motions on an avatar in an OpenGL window");
    v->add_option("FILE", o.files, "Animation files, all started at t = 0 (none: the built-in demo)");
    v->add_option("--character", o.character, "Viewer character folder (default: embedded skeleton)");
    v->add_option("--wearable", o.wearables, "LLWearable files applied in order (shape, skin, hair, eyes); needs --character");
    v->add_option("--solver", o.solver, "Constraint solver: ccd (default), fabrik, viewer or none")
        ->check(CLI::IsMember({"ccd", "fabrik", "viewer", "none"}));
    v->add_option("--fps", o.fps, "Simulation steps per second (default 30)");
    v->add_option("--procedural", o.procedural, "Run the viewer's procedural motions: breathe, body_noise, head_rot, eye (comma list) or all");
    v->add_option("--look-at", o.look_at, "Look-at target X,Y,Z for head_rot and eye: metres, avatar-root frame (X forward, Y left, Z up)");
    v->add_option("--puppetry", o.puppetry,
                  "Mix a puppetry stream at priority 7: udp://HOST:PORT, leap:stdin or replay:FILE[#loop]");
    v->add_flag("--skeleton", o.skeleton, "Start with the skeleton overlay (key K)");
    v->add_flag("--owners", o.owners, "Start with the joint-owner overlay (key O)");
    v->add_flag("--constraints", o.constraints, "Start with the constraint overlay (key C)");
    v->add_option("--yaw", o.yaw_deg, "Camera yaw, degrees (0: in front, default 25)");
    v->add_option("--pitch", o.pitch_deg, "Camera pitch, degrees (default 9)");
    v->add_option("--distance", o.distance, "Camera distance, metres (default 4)");
    v->add_option("--quit-after", o.quit_after, "Close after N frames (scripted smoke tests)");
    return v;
}

CLI::App* add_render_subcommand(CLI::App& app, GfxOptions& o) {
    auto* r = app.add_subcommand("render", "Render the avatar at time T offscreen to a PNG");
    r->add_option("FILE", o.files, "Animation files, all started at t = 0 (none: the built-in demo)");
    r->add_option("--time", o.time, "Seconds from the start (the motions are played up to it)")->required();
    r->add_option("--size", o.size, "Image size WxH in pixels (default 800x600)");
    r->add_option("-o,--output", o.output, "Output PNG (written atomically)")->required();
    r->add_option("--character", o.character, "Viewer character folder (default: embedded skeleton)");
    r->add_option("--wearable", o.wearables, "LLWearable files applied in order (shape, skin, hair, eyes); needs --character");
    r->add_option("--solver", o.solver, "Constraint solver: ccd (default), fabrik, viewer or none")
        ->check(CLI::IsMember({"ccd", "fabrik", "viewer", "none"}));
    r->add_option("--fps", o.fps, "Simulation steps per second (default 30)");
    r->add_option("--procedural", o.procedural, "Run the viewer's procedural motions: breathe, body_noise, head_rot, eye (comma list) or all");
    r->add_option("--look-at", o.look_at, "Look-at target X,Y,Z for head_rot and eye: metres, avatar-root frame (X forward, Y left, Z up)");
    r->add_option("--puppetry", o.puppetry, "Mix a recorded puppetry capture at priority 7: replay:FILE[#loop]");
    r->add_flag("--skeleton", o.skeleton, "Draw the skeleton");
    r->add_flag("--owners", o.owners, "Colour the skeleton by the motion owning each joint, with a legend");
    r->add_flag("--constraints", o.constraints, "Draw the constraint sources, targets and goals, with a legend");
    r->add_option("--yaw", o.yaw_deg, "Camera yaw, degrees (0: in front, default 25)");
    r->add_option("--pitch", o.pitch_deg, "Camera pitch, degrees (default 9)");
    r->add_option("--distance", o.distance, "Camera distance, metres (default 4)");
    return r;
}

int cmd_render(std::ostream& out, std::ostream& err, const GfxOptions& o) {
    int width = 0, height = 0;
    if (!parse_size(o.size, width, height)) {
        err << "slanim render: --size must be WxH with both in [16, 8192] (e.g. 800x600)\n";
        return 2;
    }
    if (!o.time || !(*o.time >= 0.0) || *o.time > 3600.0) {
        err << "slanim render: --time must be in [0, 3600] seconds\n";
        return 2;
    }
    if (auto e = check_camera("render", err, o)) return *e;
    Setup s;
    if (auto e = setup("render", err, o, s)) return *e;

    auto ctx = gfx::GlContext::create_offscreen();
    if (!ctx) {
        err << "slanim render: " << ctx.error().message << "\n";
        return 1;
    }
    auto renderer = gfx::Renderer::create();
    if (!renderer) {
        err << "slanim render: " << renderer.error().message << "\n";
        return 1;
    }
    gfx::Playback& pb = *s.playback;
    pb.seek(*o.time);
    gfx::GeneratedBody body(pb.skeleton());
    gfx::OverlayOptions ov;
    ov.skeleton = o.skeleton;
    ov.owners = o.owners;
    ov.constraints = o.constraints;
    ov.label_scale = label_scale(height);
    gfx::OrbitCamera cam = initial_camera(o);
    gfx::Scene scene;
    build_frame(scene, pb, body, s.mesh.get(), ov, cam);
    scene.labels.push_back(gfx::Label::at(fmt::format("{}  t = {:.3f} s", s.title, pb.time()), 10.f,
                                          -10.f, gfx::palette::kText, ov.label_scale));
    auto img = (*renderer)->render_image(scene, cam, width, height);
    if (!img) {
        err << "slanim render: " << img.error().message << "\n";
        return 1;
    }
    auto w = gfx::write_png(o.output, *img);
    if (!w) {
        err << "slanim render: " << w.error().message << "\n";
        return 1;
    }
    out << fmt::format("{}: {}x{} at t = {:.3f} s (frame {}, {}, {} {})\n", o.output, width, height,
                       pb.time(), pb.frame(), s.mesh ? "avatar mesh" : "generated body",
                       gfx::platform_name((*ctx)->platform()), (*ctx)->description());
    return 0;
}

int cmd_view(std::ostream& out, std::ostream& err, const GfxOptions& o) {
    if (auto e = check_camera("view", err, o)) return *e;
    Setup s;
    if (auto e = setup("view", err, o, s)) return *e;
    auto ctx = gfx::GlContext::create_window("slanim view - " + s.title, 1280, 800);
    if (!ctx) {
        err << "slanim view: cannot open a window: " << ctx.error().message
            << " (on a machine without a display, use `slanim render`)\n";
        return 1;
    }
    auto rr = gfx::Renderer::create();
    if (!rr) {
        err << "slanim view: " << rr.error().message << "\n";
        return 1;
    }
    gfx::Renderer& renderer = **rr;
    gfx::GlContext& gl = **ctx;
    gfx::Playback& pb = *s.playback;
    gfx::GeneratedBody body(pb.skeleton());
    gfx::OverlayOptions ov;
    ov.skeleton = o.skeleton;
    ov.owners = o.owners;
    ov.constraints = o.constraints;
    gfx::OrbitCamera cam = initial_camera(o);
    const gfx::OrbitCamera home = cam;
    gfx::Scene scene;
    bool paused = false, running = true;
    double speed = 1.0;
    // With --puppetry leap:stdin, standard output carries the plug-in's LEAP conversation.
    (o.puppetry == "leap:stdin" ? err : out)
        << "slanim view: " << platform_name(gl.platform()) << " " << gl.description() << "\n";

    const auto seek_frames = [&](long long frames) {
        pb.seek(static_cast<double>(std::max(0LL, pb.frame() + frames)) / pb.fps());
    };
    Uint64 last = SDL_GetPerformanceCounter();
    long long frames_drawn = 0;
    while (running) {
        SDL_Event ev;
        while (SDL_PollEvent(&ev)) {
            switch (ev.type) {
                case SDL_QUIT: running = false; break;
                case SDL_KEYDOWN: {
                    const SDL_Keycode k = ev.key.keysym.sym;
                    if (k == SDLK_ESCAPE || k == SDLK_q) running = false;
                    else if (k == SDLK_SPACE) paused = !paused;
                    else if (k == SDLK_PERIOD) { paused = true; seek_frames(1); }
                    else if (k == SDLK_COMMA) { paused = true; seek_frames(-1); }
                    else if (k == SDLK_RIGHTBRACKET) seek_frames(std::llround(0.5 * pb.fps()));
                    else if (k == SDLK_LEFTBRACKET) seek_frames(-std::llround(0.5 * pb.fps()));
                    else if (k == SDLK_PLUS || k == SDLK_EQUALS || k == SDLK_KP_PLUS) speed = std::min(speed * 2.0, 16.0);
                    else if (k == SDLK_MINUS || k == SDLK_KP_MINUS) speed = std::max(speed * 0.5, 1.0 / 16.0);
                    else if (k == SDLK_l) pb.set_loop(!pb.loop());
                    else if (k == SDLK_k) ov.skeleton = !ov.skeleton;
                    else if (k == SDLK_o) ov.owners = !ov.owners;
                    else if (k == SDLK_c) ov.constraints = !ov.constraints;
                    else if (k == SDLK_r) cam = home;
                    break;
                }
                case SDL_MOUSEMOTION: {
                    const auto dx = static_cast<float>(ev.motion.xrel);
                    const auto dy = static_cast<float>(ev.motion.yrel);
                    if (ev.motion.state & SDL_BUTTON_LMASK) {
                        cam.yaw -= dx * 0.008f;
                        cam.pitch = std::clamp(cam.pitch + dy * 0.008f, -1.5f, 1.5f);
                    } else if (ev.motion.state & (SDL_BUTTON_RMASK | SDL_BUTTON_MMASK)) {
                        const Vec3 fwd = cam.centre() - cam.eye();
                        const Vec3 right = cross(fwd, Vec3{0.f, 0.f, 1.f});
                        const float rl = length(right);
                        if (rl > 1e-6f) {
                            const Vec3 r = right * (1.f / rl);
                            const Vec3 up = cross(r, fwd * (1.f / length(fwd)));
                            cam.pan += (r * -dx + up * dy) * (cam.distance * 0.0015f);
                        }
                    }
                    break;
                }
                case SDL_MOUSEWHEEL:
                    cam.distance = std::clamp(cam.distance * std::pow(0.9f, static_cast<float>(ev.wheel.y)),
                                              0.3f, 50.f);
                    break;
                default: break;
            }
        }
        const Uint64 now = SDL_GetPerformanceCounter();
        const double real_dt = static_cast<double>(now - last) / static_cast<double>(SDL_GetPerformanceFrequency());
        last = now;
        if (!paused) pb.advance(real_dt * speed);

        int w = 0, h = 0;
        gl.drawable_size(w, h);
        ov.label_scale = label_scale(h);
        build_frame(scene, pb, body, s.mesh.get(), ov, cam);
        const float ls = ov.label_scale;
        scene.labels.push_back(gfx::Label::at(
            fmt::format("{}  t = {:.2f} / {:.2f} s  frame {}  speed x{:g}  {}{}", s.title, pb.time(),
                        pb.duration(), pb.frame(), speed, paused ? "paused" : "playing",
                        pb.loop() ? "  loop" : ""),
            -10.f, 10.f, gfx::palette::kText, ls));
        scene.labels.push_back(gfx::Label::at(
            "drag rotate | right-drag pan | wheel zoom | space play/pause | , . step | [ ] scrub | "
            "+ - speed | L loop | K skeleton | O owners | C constraints | R camera | Esc quit",
            10.f, -10.f, gfx::palette::kText, std::max(1.f, ls - 0.5f)));
        renderer.draw(scene, cam, w, h);
        gl.swap();
        if (o.quit_after > 0 && ++frames_drawn >= o.quit_after) running = false;
    }
    if (const auto& rt = *s.puppetry; rt && !rt->sources().empty())
        err << fmt::format("slanim view: puppetry {}: {}{}{}\n", rt->sources().front()->describe(),
                           rt->report(pb.avatar()), rt->sources().front()->counters().empty() ? "" : "; ",
                           rt->sources().front()->counters());
    return 0;
}

}  // namespace slanim::cli
