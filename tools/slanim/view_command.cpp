// SPDX-License-Identifier: MIT
// `slanim view`. See view_command.hpp.
#include "view_command.hpp"

#include <CLI/CLI.hpp>
#include <SDL.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "gfx_setup.hpp"
#include "slanim/gfx/gl_context.hpp"

namespace slanim::cli {

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

namespace {

/// The window's interactive state: playback control, overlays and the camera.
struct ViewState {
    gfx::Playback& pb;
    gfx::OverlayOptions ov;
    gfx::OrbitCamera cam, home;
    bool paused = false, running = true;
    double speed = 1.0;

    void seek_frames(long long frames) {
        pb.seek(static_cast<double>(std::max(0LL, pb.frame() + frames)) / pb.fps());
    }

    void on_key(SDL_Keycode k) {
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
    }

    /// Left drag rotates, right or middle drag pans.
    void on_mouse_motion(const SDL_MouseMotionEvent& m) {
        const auto dx = static_cast<float>(m.xrel);
        const auto dy = static_cast<float>(m.yrel);
        if (m.state & SDL_BUTTON_LMASK) {
            cam.yaw -= dx * 0.008f;
            cam.pitch = std::clamp(cam.pitch + dy * 0.008f, -1.5f, 1.5f);
        } else if (m.state & (SDL_BUTTON_RMASK | SDL_BUTTON_MMASK)) {
            const Vec3 fwd = cam.centre() - cam.eye();
            const Vec3 right = cross(fwd, Vec3{0.f, 0.f, 1.f});
            const float rl = length(right);
            if (rl > 1e-6f) {
                const Vec3 r = right * (1.f / rl);
                const Vec3 up = cross(r, fwd * (1.f / length(fwd)));
                cam.pan += (r * -dx + up * dy) * (cam.distance * 0.0015f);
            }
        }
    }

    void handle_events() {
        SDL_Event ev;
        while (SDL_PollEvent(&ev)) {
            switch (ev.type) {
                case SDL_QUIT: running = false; break;
                case SDL_KEYDOWN: on_key(ev.key.keysym.sym); break;
                case SDL_MOUSEMOTION: on_mouse_motion(ev.motion); break;
                case SDL_MOUSEWHEEL:
                    cam.distance = std::clamp(cam.distance * std::pow(0.9f, static_cast<float>(ev.wheel.y)), 0.3f, 50.f);
                    break;
                default: break;
            }
        }
    }
};

/// The frame's scene with its two captions: the playback state and the controls.
void build_view_frame(gfx::Scene& scene, const GfxSetup& s, gfx::GeneratedBody& body, ViewState& v) {
    build_frame(scene, v.pb, body, s.mesh.get(), v.ov, v.cam);
    const float ls = v.ov.label_scale;
    scene.labels.push_back(gfx::Label::at(
        fmt::format("{}  t = {:.2f} / {:.2f} s  frame {}  speed x{:g}  {}{}", s.title, v.pb.time(), v.pb.duration(),
                    v.pb.frame(), v.speed, v.paused ? "paused" : "playing", v.pb.loop() ? "  loop" : ""),
        -10.f, 10.f, gfx::palette::kText, ls));
    scene.labels.push_back(gfx::Label::at(
        "drag rotate | right-drag pan | wheel zoom | space play/pause | , . step | [ ] scrub | "
        "+ - speed | L loop | K skeleton | O owners | C constraints | R camera | Esc quit",
        10.f, -10.f, gfx::palette::kText, std::max(1.f, ls - 0.5f)));
}

}  // namespace

int cmd_view(std::ostream& out, std::ostream& err, const GfxOptions& o) {
    if (auto e = check_camera("view", err, o)) return *e;
    GfxSetup s;
    if (auto e = setup_playback("view", err, o, s)) return *e;
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
    ViewState v{pb, {}, initial_camera(o), {}};
    v.ov.skeleton = o.skeleton;
    v.ov.owners = o.owners;
    v.ov.constraints = o.constraints;
    v.home = v.cam;
    gfx::Scene scene;
    // With --puppetry leap:stdin, standard output carries the plug-in's LEAP conversation.
    (o.puppetry == "leap:stdin" ? err : out)
        << "slanim view: " << platform_name(gl.platform()) << " " << gl.description() << "\n";

    Uint64 last = SDL_GetPerformanceCounter();
    long long frames_drawn = 0;
    while (v.running) {
        v.handle_events();
        const Uint64 now = SDL_GetPerformanceCounter();
        const double real_dt = static_cast<double>(now - last) / static_cast<double>(SDL_GetPerformanceFrequency());
        last = now;
        if (!v.paused) pb.advance(real_dt * v.speed);
        int w = 0, h = 0;
        gl.drawable_size(w, h);
        v.ov.label_scale = label_scale(h);
        build_view_frame(scene, s, body, v);
        renderer.draw(scene, v.cam, w, h);
        gl.swap();
        if (o.quit_after > 0 && ++frames_drawn >= o.quit_after) v.running = false;
    }
    if (const auto& rt = *s.puppetry; rt && !rt->sources().empty())
        err << fmt::format("slanim view: puppetry {}: {}{}{}\n", rt->sources().front()->describe(),
                           rt->report(pb.avatar()), rt->sources().front()->counters().empty() ? "" : "; ",
                           rt->sources().front()->counters());
    return 0;
}

}  // namespace slanim::cli
