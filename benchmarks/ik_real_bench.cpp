// SPDX-License-Identifier: MIT
// Every solver on the real constraint set: the chain problems that Linden's constrained
// animations pose frame by frame (../shared/anims, played at 30 fps with CCD to record them),
// solved again from the same inputs by CCD, FABRIK and the viewer's relaxation in one run.
// Counters: us per solve (the benchmark time), mean iterations, mean and max residual (mm),
// share of problems within 0.5 mm.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "slanim/core/clip.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/ik/constraints.hpp"
#include "slanim/runtime/world.hpp"
#include "slanim/formats/anim_codec.hpp"

namespace fs = std::filesystem;
using namespace slanim;

namespace {

const std::vector<ik::ChainInput>& real_cases() {
    static const std::vector<ik::ChainInput> cases = [] {
        std::vector<ik::ChainInput> out;
        const fs::path dir = fs::path(SLANIM_SHARED_DIR) / "anims";
        if (!fs::exists(dir)) return out;
        auto skel = Skeleton::default_skeleton();
        std::vector<fs::path> files;
        for (const auto& e : fs::recursive_directory_iterator(dir))
            if (e.path().extension() == ".anim") files.push_back(e.path());
        std::sort(files.begin(), files.end());
        for (const auto& f : files) {
            auto m = load_motion(f.string(), *skel);
            if (!m || m->constraints.empty()) continue;
            World w;
            const Entity a = w.create_avatar(skel);
            auto clip = MotionClip::build(*m, *skel, f.string());
            w.controller(a).start(clip);
            for (int i = 0; static_cast<float>(i) / 30.f <= clip->duration(); ++i) {
                w.step(i ? 1.f / 30.f : 0.f);
                for (const auto& inst : w.controller(a).active()) {
                    if (!inst->ik) continue;
                    for (const auto& r : inst->ik->reports)
                        if (r.outcome == ik::ConstraintOutcome::Applied && r.input.joints >= 2)
                            out.push_back(r.input);
                }
            }
        }
        return out;
    }();
    return cases;
}

void BM_RealConstraintSet(benchmark::State& state) {
    const auto solver = static_cast<ik::Solver>(state.range(0));
    const auto& cases = real_cases();
    if (cases.empty()) {
        state.SkipWithError("../shared/anims is absent: no real constraint set");
        return;
    }
    std::array<Quat, ik::kMaxViewerChainLength> rots{};
    double iterations = 0, residual = 0, worst = 0, within = 0;
    std::size_t solves = 0, i = 0;
    for (auto _ : state) {
        const ik::ChainInput& c = cases[i];
        i = (i + 1) % cases.size();
        rots = c.local_rotations;
        const auto n = static_cast<std::size_t>(c.joints);
        ik::ChainPose pose{std::span<const Vec3>(c.offsets.data(), n), std::span<Quat>(rots.data(), n),
                           c.root_position, c.root_parent_rotation, c.effector};
        ik::SolveReport rep;
        if (solver == ik::Solver::Viewer) {
            ik::ViewerRelaxationJob job;
            job.pose = pose;
            job.goal = c.goal;
            job.report = &rep;
            job.run();
        } else {
            ik::Target t;
            t.point = c.goal;
            ik::SolveSettings s;
            s.max_iterations = 128;
            if (solver == ik::Solver::Ccd)
                ik::CcdJob{pose, t, s, &rep}.run();
            else
                ik::FabrikJob{pose, t, s, &rep}.run();
        }
        benchmark::DoNotOptimize(rots);
        iterations += rep.iterations;
        residual += rep.error;
        worst = std::max(worst, static_cast<double>(rep.error));
        within += rep.error <= 0.0005f;
        ++solves;
    }
    const double n = static_cast<double>(solves);
    state.counters["problems"] = static_cast<double>(cases.size());
    state.counters["iterations"] = iterations / n;
    state.counters["residual_mm"] = residual / n * 1000.0;
    state.counters["max_residual_mm"] = worst * 1000.0;
    state.counters["within_0.5mm"] = within / n;
    state.SetLabel(ik::solver_name(solver));
}
BENCHMARK(BM_RealConstraintSet)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

}  // namespace
