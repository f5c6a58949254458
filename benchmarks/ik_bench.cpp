// SPDX-License-Identifier: MIT
// Chain solver benchmarks on SL-arm-like chains (spec §4): CCD, FABRIK and the analytic two-bone
// solver. Not part of ctest; run
//
//     build/benchmarks/slanim_bench_ik --benchmark_filter='Ccd|Fabrik|TwoBone'
//
// The argument is the number of joints n: 2 = elbow→wrist, 3 = shoulder→elbow→wrist,
// 4 = collar→shoulder→elbow→wrist (bones 0.08, 0.25, 0.2 m along +Y as the left arm, the
// effector 5 cm past the wrist, J[0] keeping its world rotation as the viewer's constraints do).
// Each benchmark iteration solves one of 64 fixed pseudo-random reachable targets from the same
// slightly bent start pose; the time is per solve. Counters: "iterations" = mean iterations
// (sweeps) until the effector is within 0.5 mm (capped at 100), "error_mm" = mean final error,
// "converged_pct" = share of solves within 0.5 mm.
#include <benchmark/benchmark.h>

#include <array>
#include <cmath>
#include <random>

#include "slanim/core/math.hpp"
#include "slanim/ik/solvers.hpp"

namespace {

using namespace slanim;
using namespace slanim::ik;

constexpr int kTargets = 64;
constexpr int kMaxIterations = 100;

struct ArmCase {
    int n = 0;
    std::array<Vec3, 4> offsets{};  // offsets[k] = J[k] in J[k+1]'s frame
    std::array<Quat, 4> start{};
    std::array<Vec3, kTargets> targets{};
    ChainPose pose(std::array<Quat, 4>& rotations) const {
        const auto un = static_cast<std::size_t>(n);
        return {std::span<const Vec3>(offsets.data(), un), std::span<Quat>(rotations.data(), un),
                Vec3{-0.02f, 0.08f, 1.4f}, Quat::identity(), Vec3{0.f, 0.05f, 0.f}};
    }
};

Quat random_rotation(std::mt19937& rng, float max_angle) {
    std::normal_distribution<float> g(0.f, 1.f);
    std::uniform_real_distribution<float> a(0.f, max_angle);
    Vec3 axis{g(rng), g(rng), g(rng)};
    if (length(axis) < 1e-3f) axis = {0.f, 0.f, 1.f};
    return quat_from_axis_angle(a(rng), axis);
}

/// The n-joint arm and its targets: effectors of random arm poses (up to 1.5 rad per joint),
/// with the effector offset held at its start world direction (EndRotation::Keep), so every
/// target is reachable.
ArmCase make_case(int n) {
    static constexpr std::array<float, 3> kBones = {0.2f, 0.25f, 0.08f};  // J[0]'s bone first
    ArmCase c;
    c.n = n;
    for (std::size_t k = 0; k + 1 < static_cast<std::size_t>(n); ++k)
        c.offsets[k] = {0.f, kBones[k], 0.f};
    c.start.fill(Quat::identity());
    c.start[1] = quat_from_axis_angle(0.3f, {0.f, 0.f, 1.f});  // elbow slightly bent
    if (n > 2) c.start[2] = quat_from_axis_angle(0.2f, {1.f, 0.f, 0.f});
    std::array<Quat, 4> start = c.start;
    const ChainPose start_pose = c.pose(start);
    const Vec3 start_effector = effector_position(start_pose);
    std::array<Quat, 4> no_eff_rot = c.start;
    ChainPose no_effector = c.pose(no_eff_rot);
    no_effector.effector = {};
    const Vec3 keep_offset = start_effector - effector_position(no_effector);

    std::mt19937 rng(20240601u + static_cast<unsigned>(n));
    for (Vec3& t : c.targets) {
        std::array<Quat, 4> rots = c.start;
        for (std::size_t k = 1; k < static_cast<std::size_t>(n); ++k)
            rots[k] = random_rotation(rng, 1.5f);
        ChainPose p = c.pose(rots);
        p.effector = {};
        t = effector_position(p) + keep_offset;  // J[0] of the random pose + the kept offset
    }
    return c;
}

const ArmCase& arm(int n) {
    static const std::array<ArmCase, 3> cases = {make_case(2), make_case(3), make_case(4)};
    return cases[static_cast<std::size_t>(n - 2)];
}

template <class Solve>
void run_bench(benchmark::State& state, Solve solve) {
    const ArmCase& c = arm(static_cast<int>(state.range(0)));
    double iterations = 0.0, error_mm = 0.0, converged = 0.0;
    int i = 0;
    for (auto _ : state) {
        std::array<Quat, 4> rotations = c.start;
        SolveReport report;
        const Target target{TargetKind::Point, c.targets[static_cast<std::size_t>(i)], {}};
        solve(c.pose(rotations), target, &report);
        benchmark::DoNotOptimize(rotations);
        iterations += report.iterations;
        error_mm += 1000.0 * report.error;
        converged += report.converged ? 100.0 : 0.0;
        i = (i + 1) % kTargets;
    }
    using benchmark::Counter;
    state.counters["iterations"] = Counter(iterations, Counter::kAvgIterations);
    state.counters["error_mm"] = Counter(error_mm, Counter::kAvgIterations);
    state.counters["converged_pct"] = Counter(converged, Counter::kAvgIterations);
}

SolveSettings bench_settings() {
    SolveSettings s;
    s.tolerance = 0.0005f;
    s.max_iterations = kMaxIterations;
    s.end_rotation = EndRotation::Keep;
    return s;
}

void BM_Ccd(benchmark::State& state) {
    run_bench(state, [](ChainPose pose, Target target, SolveReport* report) {
        CcdJob{pose, target, bench_settings(), report}.run();
    });
}

void BM_Fabrik(benchmark::State& state) {
    run_bench(state, [](ChainPose pose, Target target, SolveReport* report) {
        FabrikJob{pose, target, bench_settings(), report}.run();
    });
}

void BM_TwoBone(benchmark::State& state) {
    run_bench(state, [](ChainPose pose, Target target, SolveReport* report) {
        TwoBoneJob job{pose, target};
        job.pole = {0.f, 0.f, -1.f};  // elbow down
        job.report = report;
        job.run();
    });
}

}  // namespace

BENCHMARK(BM_Ccd)->Arg(2)->Arg(3)->Arg(4);
BENCHMARK(BM_Fabrik)->Arg(2)->Arg(3)->Arg(4);
BENCHMARK(BM_TwoBone)->Arg(3);
