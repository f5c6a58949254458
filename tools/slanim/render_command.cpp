// SPDX-License-Identifier: MIT
// `slanim render`. See render_command.hpp.
#include "render_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <exception>
#include <ostream>
#include <string>

#include "gfx_setup.hpp"
#include "slanim/gfx/gl_context.hpp"
#include "slanim/gfx/image.hpp"

namespace slanim::cli {

namespace {

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
    GfxSetup s;
    if (auto e = setup_playback("render", err, o, s)) return *e;

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

}  // namespace slanim::cli
