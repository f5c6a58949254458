// SPDX-License-Identifier: MIT
#include "crowd_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <numbers>
#include <optional>
#include <ostream>
#include <string_view>

#include "appearance_loading.hpp"
#include "crowd_mix.hpp"
#include "crowd_render.hpp"
#include "loading.hpp"
#include "mesh_export.hpp"
#include "slanim/core/clip.hpp"
#include "slanim/gfx/avatar_scene.hpp"
#include "slanim/gfx/gl_context.hpp"
#include "slanim/gfx/image.hpp"
#include "slanim/gfx/renderer.hpp"
#include "slanim/runtime/appearance.hpp"
#include "slanim/runtime/appearance_feature.hpp"
#include "slanim/runtime/crowd.hpp"
#include "slanim/runtime/ik_feature.hpp"
#include "slanim/runtime/lod_feature.hpp"
#include "slanim/runtime/world.hpp"

namespace slanim::cli {

namespace {

using Clock = std::chrono::steady_clock;
constexpr float kStep = Crowd::kStep;
/// The profiled run: this many steps at most, and at most this much wall time (or the measured
/// run's --seconds when shorter), at least one step.
constexpr int kProfileSteps = 60;
constexpr double kProfileSeconds = 1.0;

double seconds_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

/// A whole number in [lo, hi] written as plain decimal digits (an optional leading minus).
std::optional<long long> parse_whole(std::string_view s, long long lo, long long hi) {
    long long v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < lo || v > hi) return std::nullopt;
    return v;
}

std::optional<double> parse_number(std::string_view s) {
    double v = 0.0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
    return v;
}

/// Nearest-rank percentile of sorted values (p in (0, 1]).
double percentile(const std::vector<double>& sorted, double p) {
    if (sorted.empty()) return 0.0;
    const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
    return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

/// A one-line progress bar on standard error, redrawn at most 10 times a second; only when
/// standard error is a terminal.
class ProgressBar {
public:
    ProgressBar(std::ostream& err, bool enabled) : err_(err), enabled_(enabled) {}
    void update(Clock::time_point now, double done, double total, long long steps) {
        if (!enabled_ || now < next_) return;
        next_ = now + std::chrono::milliseconds(100);
        constexpr int kWidth = 30;
        const int filled = static_cast<int>(std::clamp(done / total, 0.0, 1.0) * kWidth);
        err_ << fmt::format("\rslanim crowd: [{}{}] {:.1f}/{:.1f} s, {} steps", std::string(filled, '#'),
                            std::string(kWidth - filled, ' '), std::min(done, total), total, steps)
             << std::flush;
        shown_ = true;
    }
    void finish() {
        if (shown_) err_ << "\r\033[K" << std::flush;
        shown_ = false;
    }

private:
    std::ostream& err_;
    bool enabled_;
    bool shown_ = false;
    Clock::time_point next_{};
};

}  // namespace

Vec3 CrowdView::spot(int k, int n) {
    const int cols = std::max(1, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(n)))));
    const int row = k / cols, col = k % cols;
    return {-kSpacing * static_cast<float>(row),
            kSpacing * (static_cast<float>(col) - 0.5f * static_cast<float>(cols - 1)), 0.f};
}

float CrowdView::focal_px() {
    return 0.5f * static_cast<float>(kHeight) / std::tan(kFovYDeg * std::numbers::pi_v<float> / 360.f);
}

bool CrowdView::visible(Vec3 spot) {
    const Vec3 c{spot.x, spot.y, 0.5f * kBoxHeight};
    const Vec3 d = c - eye();
    return eye().x - spot.x > 0.f && length(d) <= kDrawDistance;
}

float CrowdView::pixel_area(Vec3 spot) {
    if (!visible(spot)) return 0.f;
    const Vec3 c{spot.x, spot.y, 0.5f * kBoxHeight};
    const float d = length(c - eye());
    const float f = focal_px();
    return (kBoxWidth * f / d) * (kBoxHeight * f / d);
}

CLI::App* add_crowd_subcommand(CLI::App& app, CrowdOptions& o) {
    auto* c = app.add_subcommand(
        "crowd",
        "Measure the world at crowd scale: N avatars playing motions, stepped at 1/60 s for S seconds of "
        "wall time after warm-up steps (60; a churn crowd 420, 7 s simulated, so that its gestures are spread as in "
        "its steady state); prints a per-system table and the line 'crowd: N avatars, T threads, "
        "MODE, P50 ms/step p50, P99 ms/step p99, M KiB/avatar'. By default a churn crowd (MODE churn): every "
        "avatar keeps one base motion and starts a gesture (a motion with an emote and a hand pose) every 3-5 s "
        "at a staggered time, so starts, fades, stops, emotes and hand-pose morphs are always in flight; "
        "--settled: every avatar plays every motion, looped (MODE settled). The step times are measured with "
        "profiling off; the table comes from a separate run of up to 60 steps (at most 1 s, or S when shorter) "
        "with profiling on (its clock reads would distort the step times).");
    c->add_option("FILE", o.files,
                  "Animation files (.anim), each made looping: with --settled every avatar plays all (none: the "
                  "built-in crowd mix); churn: the base motions, one per avatar (none: the Linden mix beside "
                  "--character, DIR/../anims/linden: ANIM_AGENT_FEMALE_WALK_NEW, DANCE1, ANIM_AGENT_BENTO_IDLE, "
                  "when all are there; else the built-in crowd mix)")
        ->type_name("");
    c->add_option("--gesture", o.gestures,
                  "Churn: the gestures, started in turn (not looped; none: BLOWKISS beside --character as above, "
                  "else a generated gesture with the Express_Kiss emote and the salute_r hand pose)")
        ->type_name("FILE...");
    c->add_flag("--settled", o.settled,
                "Every avatar plays every FILE from the start (looped, staggered): nothing starts or stops after "
                "the ease-ins (the crowd before churn mode)");
    c->add_option("--character", o.character, "Viewer character folder (default: embedded skeleton)")
        ->type_name("DIR");
    c->add_option("--avatars", o.avatars, "Number of avatars, 1..1000000")->required()->type_name("N");
    c->add_option("--seconds", o.seconds, "Wall time of the measured run, seconds (default 5; at least one step)")
        ->type_name("S");
    c->add_option("--threads", o.threads, "Worker threads, 0..256 (default 0: one per core)")->type_name("T");
    c->add_option("--solver", o.solver, "Constraint solver: ccd (default), fabrik, viewer or none")
        ->check(CLI::IsMember({"ccd", "fabrik", "viewer", "none"}));
    c->add_flag("--skin", o.skin,
                "Give every avatar an Appearance (base mesh of --character, required) so the morph and skin "
                "phases run");
    c->add_flag("--lod", o.lod,
                "Enable LOD: avatars stand in a square grid 1.5 m apart seen by a camera 3 m in front of the "
                "first row, 1.8 m high, 60-degree vertical field of view on 1280x720; each gets the pixel "
                "area of a 0.5 m x 1.8 m box at distance d: 0.9 f^2 / d^2 with f = 360 / tan(30 deg) px; "
                "avatars behind the camera or beyond 64 m are hidden");
    c->add_option("--render", o.render,
                  "After stepping, draw the crowd once from that camera offscreen to a 1280x720 PNG (written "
                  "atomically)")
        ->type_name("OUT.png");
    return c;
}

namespace {

/// A step's verdict: nullopt to go on, else the exit status to end with.
using Exit = std::optional<int>;

/// The checked numbers of the command line.
struct CrowdArgs {
    int avatars = 0;
    double seconds = 0.0;
    int threads = 0;
};

/// Usage errors first: nothing is loaded, run or written.
Exit parse_crowd_args(std::ostream& err, const CrowdOptions& o, CrowdArgs& a) {
    const auto avatars = parse_whole(o.avatars, 1, kMaxCrowdAvatars);
    if (!avatars) {
        err << fmt::format("slanim crowd: --avatars must be a whole number from 1 to {} (got \"{}\")\n",
                           kMaxCrowdAvatars, o.avatars);
        return 2;
    }
    const auto seconds = parse_number(o.seconds);
    if (!seconds || !(*seconds > 0.0) || *seconds > 3600.0) {
        err << fmt::format("slanim crowd: --seconds must be a number of seconds in (0, 3600] (got \"{}\")\n",
                           o.seconds);
        return 2;
    }
    const auto threads = parse_whole(o.threads, 0, 256);
    if (!threads) {
        err << fmt::format(
            "slanim crowd: --threads must be a whole number from 0 (one per core) to 256 (got \"{}\")\n", o.threads);
        return 2;
    }
    if (o.settled && !o.gestures.empty()) {
        err << "slanim crowd: --gesture is for the churn crowd: it cannot be used with --settled\n";
        return 2;
    }
    if (o.skin && o.character.empty()) {
        err << "slanim crowd: --skin needs --character DIR: the skinned avatar mesh comes from the character "
               "folder (the embedded default is a skeleton only)\n";
        return 2;
    }
    a = {static_cast<int>(*avatars), *seconds, static_cast<int>(*threads)};
    return std::nullopt;
}

/// --skin: the character's appearance, its bind poses shared by the whole crowd. Without --skin
/// the avatars keep the folder's skeleton unshaped (the one exception to the viewer's default
/// shape of the other commands, docs/mesh-output.md): a morph-only appearance per avatar made a
/// 200-avatar crowd 3× slower per step with 6× the memory, and the crowd measures the runtime.
Exit load_crowd_appearance(std::ostream& err, const CrowdOptions& o, const std::shared_ptr<const Skeleton>& skel,
                           std::optional<LoadedAppearance>& appearance) {
    if (!o.skin) return std::nullopt;
    auto la = load_cli_appearance(o.character, skel, {});
    if (!la) {
        err << "slanim crowd: " << la.error().describe() << "\n";
        return 1;
    }
    appearance.emplace(std::move(*la));
    // One shape for the whole crowd: the bind poses are shared (BindPoseCache), so each
    // avatar's skinning reads a cached copy and writes only its own output.
    appearance->bind_poses = std::make_shared<BindPoseCache>();
    return std::nullopt;
}

/// --render: the GL context before stepping, so a machine without one fails at once.
Exit open_render_context(std::ostream& err, const CrowdOptions& o, std::unique_ptr<gfx::GlContext>& gl) {
    if (o.render.empty()) return std::nullopt;
    auto ctx = gfx::GlContext::create_offscreen();
    if (!ctx) {
        err << "slanim crowd: --render: cannot create an OpenGL context: " << ctx.error().message << "\n";
        return 1;
    }
    gl = std::move(*ctx);
    return std::nullopt;
}

/// The crowd's World features, in one place: the constraint solver, the appearances (--skin)
/// and the LOD inputs (--lod).
Exit configure(std::ostream& err, const CrowdOptions& o, World& world, Crowd& crowd,
               std::optional<LoadedAppearance>& appearance) {
    ik::IkSettings ik_settings;
    ik_settings.enabled = o.solver != "none";
    if (ik_settings.enabled) ik_settings.solver = ik::parse_solver(o.solver).value_or(ik::Solver::Ccd);
    IkFeature::of(world).set_default_settings(ik_settings);
    if (appearance) {
        const auto e = crowd.set_appearances([&](int) -> Result<std::shared_ptr<Appearance>> {
            auto made = appearance->make();
            if (!made) return Error{o.character + ": " + made.error().describe()};
            return std::shared_ptr<Appearance>(std::move(*made));
        });
        if (e) {
            err << "slanim crowd: " << e->message << "\n";
            return 1;
        }
    }
    if (o.lod) {
        LodSettings lod;
        lod.enabled = true;
        LodFeature::of(world).set_settings(lod);
        const auto ents = crowd.avatars();
        const int n = static_cast<int>(ents.size());
        for (int k = 0; k < n; ++k) {
            const Vec3 s = CrowdView::spot(k, n);
            world.controller(ents[static_cast<std::size_t>(k)]).set_pixel_area(CrowdView::pixel_area(s));
            LodFeature::of(world).set_visible(ents[static_cast<std::size_t>(k)], CrowdView::visible(s));
        }
    }
    return std::nullopt;
}

/// The measured run: profiling off, one clock read per step, for `seconds` of wall time.
struct MeasuredRun {
    std::vector<double> step_ms;  // per step, in order
    double wall = 0.0;            // seconds
};

MeasuredRun measure_steps(std::ostream& err, Crowd& crowd, double seconds) {
    const bool tty = &err == &std::cerr && ::isatty(STDERR_FILENO) == 1;
    ProgressBar progress(err, tty);
    MeasuredRun run;
    run.step_ms.reserve(1 << 16);
    crowd.set_profiling(false);
    crowd.warm_up();
    const auto run_start = Clock::now();
    auto last = run_start;
    do {
        run.step_ms.push_back(1e3 * crowd.timed_step());  // the step alone, not the bar
        last = Clock::now();
        progress.update(last, seconds_between(run_start, last), seconds, static_cast<long long>(run.step_ms.size()));
    } while (seconds_between(run_start, last) < seconds);
    progress.finish();
    run.wall = seconds_between(run_start, last);
    return run;
}

/// The profiled run, separate so its clock reads do not distort the step times.
struct ProfiledRun {
    std::vector<SystemProfile> profile;
    double schedule_seconds = 0.0;  // the churn schedule, before World::step
    bool churn = false;
    int steps = 0;
};

ProfiledRun profile_steps(Crowd& crowd, double seconds) {
    crowd.reset_profile();
    crowd.set_profiling(true);
    const double profile_limit = std::min(kProfileSeconds, seconds);
    const auto prof_start = Clock::now();
    ProfiledRun run;
    do {
        crowd.step();
        ++run.steps;
    } while (run.steps < kProfileSteps && seconds_between(prof_start, Clock::now()) < profile_limit);
    crowd.set_profiling(false);
    run.profile = crowd.world().profile();
    run.schedule_seconds = crowd.schedule_seconds();
    run.churn = crowd.mode() == CrowdMode::Churn;
    return run;
}

/// The steps line, and the lod, skin and render lines when they apply.
void print_run(std::ostream& out, const CrowdOptions& o, const Crowd& crowd, const MeasuredRun& run,
               const std::vector<double>& sorted, const std::optional<LoadedAppearance>& appearance, int n) {
    const auto measured_steps = static_cast<long long>(run.step_ms.size());
    double sum = 0.0;
    for (double v : sorted) sum += v;
    out << fmt::format("steps: {} of 1/60 s in {:.2f} s of wall time ({:.1f} s simulated), profiling off; "
                       "mean {:.3f} ms/step, max {:.3f} ms/step\n",
                       measured_steps, run.wall, static_cast<double>(measured_steps) * kStep,
                       sum / static_cast<double>(measured_steps), sorted.back());
    if (crowd.mode() == CrowdMode::Churn)
        out << fmt::format("churn: {} gestures started in {:.1f} s simulated ({:.2f} per avatar per second)\n",
                           crowd.gestures_started(), crowd.time(),
                           static_cast<double>(crowd.gestures_started()) / crowd.time() / static_cast<double>(n));
    if (o.lod) {
        int by_period[5] = {0, 0, 0, 0, 0};
        World& world = crowd.world();
        for (std::size_t i = 0; i < world.size(); ++i) ++by_period[std::clamp(LodFeature::of(world).update_period_at(i), 0, 4)];
        out << fmt::format("lod: {} avatars every step, {} every 2nd, {} every 4th, {} hidden\n", by_period[1],
                           by_period[2], by_period[4], by_period[0]);
    }
    if (appearance) {
        const BindPoseCache::Stats b = appearance->bind_poses->stats();
        out << fmt::format("skin: {} avatars read {} shared bind poses ({} in use, {:.1f} MiB with {} free for reuse)\n",
                           n, b.shared, b.in_use, static_cast<double>(b.bytes) / (1024.0 * 1024.0),
                           b.entries - b.in_use);
    }
}

void print_render(std::ostream& out, const CrowdOptions& o, const CrowdRenderReport& rendered,
                  const gfx::GlContext& gl, int n) {
    out << fmt::format("render: {}: {}x{}, {} of {} avatars drawn ({}){}, {} {}\n", o.render, CrowdView::kWidth,
                       CrowdView::kHeight, rendered.drawn, n, rendered.meshes ? "avatar meshes" : "generated bodies",
                       rendered.over_budget
                           ? fmt::format(", {} more in view left out (vertex budget)", rendered.over_budget)
                           : std::string(),
                       gfx::platform_name(gl.platform()), gl.description());
}

/// The per-system table of the profiled run.
void print_profile(std::ostream& out, const ProfiledRun& prof) {
    double total = prof.schedule_seconds;
    for (const SystemProfile& p : prof.profile) total += p.seconds;
    out << fmt::format("per system: {} steps with profiling on (a separate run), mean µs per step summed over "
                       "threads\n",
                       prof.steps);
    out << fmt::format("{:<20} {:<15} {:>12} {:>7}\n", "system", "phase", "µs/step", "share");
    for (const SystemProfile& p : prof.profile) {
        const double us = 1e6 * p.seconds / prof.steps;
        out << fmt::format("{:<20} {:<15} {:>12.1f} {:>6.1f}%\n", p.system->name, phase_name(p.system->phase), us,
                           total > 0.0 ? 100.0 * p.seconds / total : 0.0);
    }
    if (prof.churn)  // on the stepping thread before World::step: the crowd's own row
        out << fmt::format("{:<20} {:<15} {:>12.1f} {:>6.1f}%\n", "gesture_schedule", "host",
                           1e6 * prof.schedule_seconds / prof.steps,
                           total > 0.0 ? 100.0 * prof.schedule_seconds / total : 0.0);
    out << fmt::format("{:<20} {:<15} {:>12.1f} {:>6.1f}%\n", "total", "", 1e6 * total / prof.steps, 100.0);
}

}  // namespace

int cmd_crowd(std::ostream& out, std::ostream& err, const CrowdOptions& o) {
    CrowdArgs args;
    if (auto e = parse_crowd_args(err, o, args)) return *e;
    const int n = args.avatars;
    auto skel = pick_skeleton(o.character);
    if (!skel) {
        err << "slanim crowd: " << skel.error().describe() << "\n";
        return 1;
    }
    CrowdMix mix;
    if (auto e = load_crowd_mix(err, o, **skel, mix)) return *e;
    std::optional<LoadedAppearance> appearance;
    if (auto e = load_crowd_appearance(err, o, *skel, appearance)) return *e;
    std::unique_ptr<gfx::GlContext> gl;
    if (auto e = open_render_context(err, o, gl)) return *e;

    WorldOptions wo;
    wo.threads = args.threads;
    auto created = World::create(wo);
    if (!created) {
        err << "slanim crowd: " << created.error().message << "\n";
        return 1;
    }
    World& world = **created;
    CrowdSettings settings;
    settings.mode = o.settled ? CrowdMode::Settled : CrowdMode::Churn;
    auto crowd = Crowd::create(world, *skel, std::move(mix), settings, n);
    if (!crowd) {
        err << "slanim crowd: " << crowd.error().message << "\n";
        return 1;
    }
    if (auto e = configure(err, o, world, **crowd, appearance)) return *e;
    const MeasuredRun run = measure_steps(err, **crowd, args.seconds);
    const ProfiledRun prof = profile_steps(**crowd, args.seconds);
    const double sim_time = (*crowd)->time();
    std::optional<CrowdRenderReport> rendered;
    if (gl) {
        auto r = render_crowd(world, (*crowd)->avatars(), o.render, sim_time);
        if (!r) {
            err << "slanim crowd: --render: " << r.error().message << "\n";
            return 1;
        }
        rendered = *r;
    }

    std::vector<double> sorted = run.step_ms;
    std::sort(sorted.begin(), sorted.end());
    print_run(out, o, **crowd, run, sorted, appearance, n);
    if (rendered) print_render(out, o, *rendered, *gl, n);
    print_profile(out, prof);
    const double kib = static_cast<double>(world.avatar_state_bytes()) / static_cast<double>(n) / 1024.0;
    out << fmt::format("crowd: {} avatars, {} threads, {}, {:.2f} ms/step p50, {:.2f} ms/step p99, {:.1f} KiB/avatar\n",
                       n, world.threads(), crowd_mode_name(settings.mode), percentile(sorted, 0.50),
                       percentile(sorted, 0.99), kib);
    return 0;
}

}  // namespace slanim::cli
