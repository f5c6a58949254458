// SPDX-License-Identifier: MIT
// Chain IK solvers: CCD, FABRIK, the analytic two-bone solver and swing-twist limits.
// Results are checked with this file's own forward kinematics, not the library's.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "slanim/core/math.hpp"
#include "slanim/ik/solvers.hpp"

using namespace slanim;
using namespace slanim::ik;

namespace {

constexpr float kTol = 0.0005f;  // 0.5 mm

// ---- Test chains and independent forward kinematics -----------------------------------------

struct TestChain {
    std::vector<Vec3> offsets;
    std::vector<Quat> rot;
    Vec3 root{};
    Quat root_parent = Quat::identity();
    Vec3 effector{};

    [[nodiscard]] int n() const { return static_cast<int>(rot.size()); }
    ChainPose pose() { return {offsets, rot, root, root_parent, effector}; }
};

struct Fk {
    std::vector<Vec3> pos;
    std::vector<Quat> rot;
    Vec3 effector;
};

Fk fk(const TestChain& c) {
    const auto n = c.rot.size();
    Fk f;
    f.pos.resize(n);
    f.rot.resize(n);
    f.pos[n - 1] = c.root;
    f.rot[n - 1] = ll_mul(c.rot[n - 1], c.root_parent);
    for (std::size_t k = n - 1; k-- > 0;) {
        f.pos[k] = f.pos[k + 1] + rotate(c.offsets[k], f.rot[k + 1]);
        f.rot[k] = ll_mul(c.rot[k], f.rot[k + 1]);
    }
    f.effector = f.pos[0] + rotate(c.effector, f.rot[0]);
    return f;
}

float angle_between(Vec3 a, Vec3 b) { return std::atan2(length(cross(a, b)), dot(a, b)); }
Vec3 unit_vec(Vec3 v) { return v * (1.f / length(v)); }

Quat axis_angle(float angle, Vec3 axis) { return quat_from_axis_angle(angle, axis); }

/// Same rotation (q and −q) within eps per component.
bool same_rotation(Quat a, Quat b, float eps) {
    const float s = dot(a, b) < 0.f ? -1.f : 1.f;
    return std::fabs(a.x - s * b.x) <= eps && std::fabs(a.y - s * b.y) <= eps &&
           std::fabs(a.z - s * b.z) <= eps && std::fabs(a.w - s * b.w) <= eps;
}

bool all_unit_and_finite(const TestChain& c) {
    for (const Quat& q : c.rot) {
        if (!is_finite(q) || std::fabs(dot(q, q) - 1.f) > 1e-4f) return false;
    }
    return true;
}

/// Swing angle of `q` about `forward`: how far the bone axis turned.
float swing_angle(Quat q, Vec3 forward) {
    return angle_between(forward, rotate(forward, q));
}

/// Twist angle of `q` about unit `forward` in [−π, π] (q = swing ⊗ twist), computed directly.
float twist_angle(Quat q, Vec3 forward) {
    if (q.w < 0.f) q = {-q.x, -q.y, -q.z, -q.w};
    return 2.f * std::atan2(dot(Vec3{q.x, q.y, q.z}, forward), q.w);
}

Vec3 random_unit(std::mt19937& rng) {
    std::normal_distribution<float> g(0.f, 1.f);
    for (;;) {
        const Vec3 v{g(rng), g(rng), g(rng)};
        if (length(v) > 1e-3f) return unit_vec(v);
    }
}

Quat random_rotation(std::mt19937& rng, float max_angle) {
    std::uniform_real_distribution<float> a(0.f, max_angle);
    return axis_angle(a(rng), random_unit(rng));
}

/// n joints with bone lengths in [0.1, 0.35] m roughly along +X, a random root and parent
/// rotation, a small effector offset and a random start pose.
TestChain random_chain(std::mt19937& rng, int n, float start_angle = 1.f) {
    std::uniform_real_distribution<float> len(0.1f, 0.35f);
    std::uniform_real_distribution<float> jitter(-0.2f, 0.2f);
    std::uniform_real_distribution<float> pos(-1.f, 1.f);
    TestChain c;
    for (int k = 0; k < n; ++k) {
        c.offsets.push_back(k + 1 < n ? unit_vec({1.f, jitter(rng), jitter(rng)}) * len(rng)
                                      : Vec3{});
        c.rot.push_back(k == 0 ? random_rotation(rng, kPi) : random_rotation(rng, start_angle));
    }
    c.root = {pos(rng), pos(rng), pos(rng)};
    c.root_parent = random_rotation(rng, kPi);
    c.effector = unit_vec({1.f, jitter(rng), jitter(rng)}) * 0.05f;
    return c;
}

/// A straight chain along +X from the origin with the given bone lengths (root first).
TestChain straight_chain(std::vector<float> lengths_root_first) {
    TestChain c;
    const std::size_t n = lengths_root_first.size() + 1;
    c.offsets.assign(n, Vec3{});
    c.rot.assign(n, Quat::identity());
    for (std::size_t i = 0; i < lengths_root_first.size(); ++i) {
        c.offsets[n - 2 - i] = {lengths_root_first[i], 0.f, 0.f};
    }
    return c;
}

/// A target reachable by `c` in `mode`: the effector of a random pose of the same chain. With
/// Keep the effector offset is fixed in world space at its start value, as the solvers keep it.
Vec3 reachable_target(std::mt19937& rng, const TestChain& c, EndRotation mode) {
    TestChain other = c;
    for (std::size_t k = 1; k < other.rot.size(); ++k) other.rot[k] = random_rotation(rng, kPi);
    const Fk start = fk(c);
    const Fk f = fk(other);
    if (mode == EndRotation::Follow) return f.effector;
    return f.pos[0] + rotate(c.effector, start.rot[0]);
}

/// Distance of the goal from the boundary of the chain's reach, in the rigid-segment model the
/// solvers use (Follow: J[1]→effector is one segment; Keep: J[0] must reach goal − d).
float boundary_margin(const TestChain& c, Vec3 goal, EndRotation mode) {
    float sum = 0.f, longest = 0.f;
    for (int k = 0; k + 1 < c.n(); ++k) {
        Vec3 seg = c.offsets[static_cast<std::size_t>(k)];
        if (k == 0 && mode == EndRotation::Follow) seg = seg + rotate(c.effector, c.rot[0]);
        sum += length(seg);
        longest = std::fmax(longest, length(seg));
    }
    const Vec3 d = mode == EndRotation::Keep ? rotate(c.effector, fk(c).rot[0]) : Vec3{};
    const float dist = length(goal - d - c.root);
    return std::fmin(sum - dist, dist - std::fmax(0.f, 2.f * longest - sum));
}

float chain_reach(const TestChain& c) {
    float sum = 0.f;
    for (int k = 0; k + 1 < c.n(); ++k) sum += length(c.offsets[static_cast<std::size_t>(k)]);
    return sum;
}

enum class Algo { Ccd, Fabrik };
std::string name(Algo a) { return a == Algo::Ccd ? "CCD" : "FABRIK"; }

bool solve(Algo algo, TestChain& c, const Target& t, const SolveSettings& s, SolveReport* r) {
    if (algo == Algo::Ccd) return CcdJob{c.pose(), t, s, r}.run();
    return FabrikJob{c.pose(), t, s, r}.run();
}

Target point(Vec3 p) { return {TargetKind::Point, p, {0.f, 0.f, 1.f}}; }

SolveSettings settings(int max_iterations, EndRotation mode = EndRotation::Keep,
                       std::span<const JointLimit> limits = {}) {
    SolveSettings s;
    s.tolerance = kTol;
    s.max_iterations = max_iterations;
    s.end_rotation = mode;
    s.limits = limits;
    return s;
}

constexpr Algo kAlgos[] = {Algo::Ccd, Algo::Fabrik};

}  // namespace

// ---- apply_limit ----------------------------------------------------------------------------

TEST(LimitApply, DisabledReturnsInputUnchanged) {
    const JointLimit off;
    const Quat q{0.3f, -0.2f, 0.5f, 1.5f};  // not even unit
    EXPECT_EQ(apply_limit(off, q), q);
}

TEST(LimitApply, IdentityStaysIdentity) {
    JointLimit l;
    l.enabled = true;
    l.cone = 0.3f;
    l.min_twist = -0.1f;
    l.max_twist = 0.1f;
    EXPECT_TRUE(same_rotation(apply_limit(l, Quat::identity()), Quat::identity(), 1e-7f));
    l.cone = 0.f;
    l.min_twist = l.max_twist = 0.f;
    EXPECT_TRUE(same_rotation(apply_limit(l, Quat::identity()), Quat::identity(), 1e-7f));
}

TEST(LimitApply, WithinBoundsIsUnchanged) {
    JointLimit l;
    l.enabled = true;
    l.cone = 0.5f;
    l.min_twist = -0.2f;
    l.max_twist = 0.2f;
    const Quat q = hamilton(axis_angle(0.3f, {0.f, 1.f, 0.f}), axis_angle(0.1f, {1.f, 0.f, 0.f}));
    const Quat r = apply_limit(l, q);
    EXPECT_TRUE(same_rotation(r, q, 1e-6f));
    EXPECT_GE(dot(r, q), 0.f);
    const Quat neg{-q.x, -q.y, -q.z, -q.w};  // same rotation, other hemisphere
    const Quat rn = apply_limit(l, neg);
    EXPECT_TRUE(same_rotation(rn, q, 1e-6f));
    EXPECT_GT(dot(rn, neg), 0.f);
}

TEST(LimitApply, ClampsSwingToTheConeKeepingItsDirection) {
    JointLimit l;
    l.enabled = true;
    l.cone = 0.3f;
    const Quat r = apply_limit(l, axis_angle(1.f, {0.f, 0.f, 1.f}));
    const Vec3 fwd = rotate({1.f, 0.f, 0.f}, r);
    EXPECT_NEAR(angle_between({1.f, 0.f, 0.f}, fwd), 0.3f, 1e-5f);
    EXPECT_GT(fwd.y, 0.f);  // still swung toward +Y
    EXPECT_NEAR(fwd.z, 0.f, 1e-6f);
    EXPECT_NEAR(dot(r, r), 1.f, 1e-6f);
}

TEST(LimitApply, ClampsTwistToItsRange) {
    JointLimit l;
    l.enabled = true;
    l.min_twist = -0.2f;
    l.max_twist = 0.25f;
    const Vec3 x{1.f, 0.f, 0.f};
    EXPECT_TRUE(same_rotation(apply_limit(l, axis_angle(0.5f, x)), axis_angle(0.25f, x), 1e-6f));
    EXPECT_TRUE(same_rotation(apply_limit(l, axis_angle(-1.f, x)), axis_angle(-0.2f, x), 1e-6f));
}

TEST(LimitApply, HalfTurnTwist) {
    const Vec3 x{1.f, 0.f, 0.f};
    const Quat half{1.f, 0.f, 0.f, 0.f};  // π about +X (= −π about +X)
    JointLimit l;
    l.enabled = true;
    l.min_twist = -0.5f;
    l.max_twist = 0.5f;
    const Quat r = apply_limit(l, half);
    EXPECT_TRUE(is_finite(r));
    EXPECT_NEAR(std::fabs(twist_angle(r, x)), 0.5f, 1e-5f);
    EXPECT_NEAR(swing_angle(r, x), 0.f, 1e-5f);
    // ±π are the same rotation: a range that contains either end keeps the half turn.
    l.min_twist = -kPi;
    l.max_twist = 0.2f;
    EXPECT_TRUE(same_rotation(apply_limit(l, half), half, 1e-6f));
    l.min_twist = -0.2f;
    l.max_twist = kPi;
    EXPECT_TRUE(same_rotation(apply_limit(l, Quat{-1.f, 0.f, 0.f, 0.f}), half, 1e-6f));
    // Outside a narrow range just past −π, the nearer bound (−2.5) wins over +0.1.
    l.min_twist = -2.5f;
    l.max_twist = 0.1f;
    EXPECT_NEAR(twist_angle(apply_limit(l, axis_angle(-2.9f, x)), x), -2.5f, 1e-5f);
}

TEST(LimitApply, HalfTurnSwingIsClamped) {
    JointLimit l;
    l.enabled = true;
    l.cone = 0.3f;
    const Quat r = apply_limit(l, Quat{0.f, 0.f, 1.f, 0.f});  // π about Z: forward → −X
    EXPECT_NEAR(swing_angle(r, {1.f, 0.f, 0.f}), 0.3f, 1e-5f);
    EXPECT_NEAR(twist_angle(r, {1.f, 0.f, 0.f}), 0.f, 1e-5f);
}

TEST(LimitApply, SwingAndTwistClampedTogetherOnAnOffAxisForward) {
    const Vec3 f = unit_vec({1.f, 1.f, 0.f});
    JointLimit l;
    l.enabled = true;
    l.forward = {2.f, 2.f, 0.f};  // normalised inside
    l.cone = 0.4f;
    l.min_twist = -0.3f;
    l.max_twist = 0.3f;
    const Vec3 swing_axis = unit_vec(cross(f, {0.f, 0.f, 1.f}));
    const Quat q = hamilton(axis_angle(1.2f, swing_axis), axis_angle(1.f, f));
    const Quat r = apply_limit(l, q);
    EXPECT_NEAR(swing_angle(r, f), 0.4f, 1e-5f);
    EXPECT_NEAR(twist_angle(r, f), 0.3f, 1e-5f);
    // The swing keeps its direction: the bone still tilts toward where q sent it.
    EXPECT_GT(dot(rotate(f, r), rotate(f, q) - f * dot(rotate(f, q), f)), 0.f);
}

TEST(LimitApply, KeepsTheInputHemisphereAndReturnsUnit) {
    JointLimit l;
    l.enabled = true;
    l.cone = 0.2f;
    Quat q = hamilton(axis_angle(1.f, {0.f, 1.f, 0.f}), axis_angle(0.4f, {1.f, 0.f, 0.f}));
    q = {-2.f * q.x, -2.f * q.y, -2.f * q.z, -2.f * q.w};  // w < 0 and length 2
    const Quat r = apply_limit(l, q);
    EXPECT_NEAR(dot(r, r), 1.f, 1e-6f);
    EXPECT_GE(dot(r, q), 0.f);
    EXPECT_NEAR(swing_angle(r, {1.f, 0.f, 0.f}), 0.2f, 1e-5f);
}

// ---- Validation -----------------------------------------------------------------------------

TEST(SolverValidate, RejectsBadInputsAndLeavesThePoseUntouched) {
    std::mt19937 rng(7);
    for (Algo algo : kAlgos) {
        SCOPED_TRACE(name(algo));
        auto valid = [&](TestChain& c, Target t, SolveSettings s) {
            if (algo == Algo::Ccd) return CcdJob{c.pose(), t, s, nullptr}.validate();
            return FabrikJob{c.pose(), t, s, nullptr}.validate();
        };
        const TestChain base = random_chain(rng, 4);
        const Target t = point({0.1f, 0.2f, 0.3f});
        const SolveSettings s = settings(20);
        TestChain c = base;
        EXPECT_TRUE(valid(c, t, s));

        const float nan = std::numeric_limits<float>::quiet_NaN();
        TestChain one = base;
        one.offsets.resize(1);
        one.rot.resize(1);
        EXPECT_FALSE(valid(one, t, s)) << "n = 1";
        TestChain big = random_chain(rng, 33);
        EXPECT_FALSE(valid(big, t, s)) << "n = 33";
        TestChain max = random_chain(rng, kMaxSolverJoints);
        EXPECT_TRUE(valid(max, t, s)) << "n = 32";
        TestChain mismatched = base;
        mismatched.offsets.pop_back();
        EXPECT_FALSE(valid(mismatched, t, s));
        TestChain empty;
        EXPECT_FALSE(valid(empty, t, s));

        c = base;
        c.offsets[1].y = nan;
        EXPECT_FALSE(valid(c, t, s)) << "NaN offset";
        c = base;
        c.rot[2].w = nan;
        EXPECT_FALSE(valid(c, t, s)) << "NaN rotation";
        c = base;
        c.root.x = std::numeric_limits<float>::infinity();
        EXPECT_FALSE(valid(c, t, s)) << "inf root";
        c = base;
        c.root_parent.z = nan;
        EXPECT_FALSE(valid(c, t, s)) << "NaN root parent";
        c = base;
        c.effector.z = nan;
        EXPECT_FALSE(valid(c, t, s)) << "NaN effector";
        c = base;
        EXPECT_FALSE(valid(c, point({nan, 0.f, 0.f}), s)) << "NaN target";
        EXPECT_FALSE(valid(c, Target{TargetKind::Plane, {}, {0.f, 0.f, 0.f}}, s)) << "zero normal";
        EXPECT_TRUE(valid(c, Target{TargetKind::Plane, {}, {0.f, 0.f, 3.f}}, s));

        SolveSettings bad = s;
        bad.max_iterations = 0;
        EXPECT_FALSE(valid(c, t, bad));
        bad = s;
        bad.tolerance = -1e-3f;
        EXPECT_FALSE(valid(c, t, bad));
        bad = s;
        bad.tolerance = nan;
        EXPECT_FALSE(valid(c, t, bad));

        std::vector<JointLimit> limits(4);
        for (auto& l : limits) l.enabled = true;
        bad = s;
        bad.limits = limits;
        EXPECT_TRUE(valid(c, t, bad));
        bad.limits = std::span<const JointLimit>(limits).first(3);
        EXPECT_FALSE(valid(c, t, bad)) << "limits size";
        bad.limits = limits;
        limits[1].cone = 3.5f;
        EXPECT_FALSE(valid(c, t, bad)) << "cone > π";
        limits[1].cone = -0.1f;
        EXPECT_FALSE(valid(c, t, bad)) << "cone < 0";
        limits[1].cone = 1.f;
        limits[2].min_twist = 0.5f;
        limits[2].max_twist = 0.2f;
        EXPECT_FALSE(valid(c, t, bad)) << "min > max twist";
        limits[2].min_twist = -0.5f;
        limits[3].forward = {};
        EXPECT_FALSE(valid(c, t, bad)) << "zero forward";
        limits[3].forward = {nan, 0.f, 0.f};
        EXPECT_FALSE(valid(c, t, bad)) << "NaN forward";

        // run() refuses and writes nothing.
        c = base;
        c.effector.x = nan;
        const std::vector<Quat> before = c.rot;
        SolveReport r;
        r.iterations = -7;
        EXPECT_FALSE(solve(algo, c, t, s, &r));
        for (std::size_t k = 0; k < before.size(); ++k) EXPECT_EQ(c.rot[k], before[k]);
        EXPECT_EQ(r.iterations, -7);
    }
}

TEST(SolverValidate, TwoBoneNeedsThreeJointsAPointTargetAndAPole) {
    std::mt19937 rng(8);
    TestChain c3 = random_chain(rng, 3);
    TestChain c2 = random_chain(rng, 2);
    TestChain c4 = random_chain(rng, 4);
    const Target t = point({0.1f, 0.f, 0.f});
    EXPECT_TRUE((TwoBoneJob{c3.pose(), t}.validate()));
    EXPECT_FALSE((TwoBoneJob{c2.pose(), t}.validate()));
    EXPECT_FALSE((TwoBoneJob{c4.pose(), t}.validate()));
    const Target plane{TargetKind::Plane, {}, {0.f, 0.f, 1.f}};
    EXPECT_FALSE((TwoBoneJob{c3.pose(), plane}.validate()));
    TwoBoneJob j{c3.pose(), t};
    j.pole = {0.f, 0.f, 0.f};
    EXPECT_FALSE(j.validate());
    j.pole = {std::numeric_limits<float>::quiet_NaN(), 0.f, 1.f};
    EXPECT_FALSE(j.validate());
    j.pole = {0.f, 0.f, 1.f};
    j.twist = std::numeric_limits<float>::infinity();
    EXPECT_FALSE(j.validate());
    j.twist = 0.f;
    j.use_b_axis = true;
    j.b_axis = {};
    EXPECT_FALSE(j.validate());
    EXPECT_FALSE(j.run());
    j.b_axis = {0.f, 1.f, 0.f};
    EXPECT_TRUE(j.validate());
}

// ---- Known answers --------------------------------------------------------------------------

// Unit bones along +X, goal (1, 1, 0): the elbow must bend 90°. CCD turns J[1] first and is done
// in one sweep with the shoulder untouched; FABRIK may pick another shoulder angle but the same
// elbow angle; the two-bone solver with the default +X pole puts the elbow at (1, 0, 0).
TEST(SolverKnownAnswer, PlanarArmReachesAPointAtKnownAngles) {
    const Vec3 goal{1.f, 1.f, 0.f};
    const Quat elbow90 = axis_angle(kPi / 2.f, {0.f, 0.f, 1.f});
    {
        TestChain c = straight_chain({1.f, 1.f});
        SolveReport r;
        ASSERT_TRUE(solve(Algo::Ccd, c, point(goal), settings(20), &r));
        EXPECT_EQ(r.iterations, 1);
        EXPECT_TRUE(same_rotation(c.rot[2], Quat::identity(), 1e-6f));
        EXPECT_TRUE(same_rotation(c.rot[1], elbow90, 1e-6f));
        EXPECT_LT(length(fk(c).effector - goal), 1e-5f);
    }
    {
        TestChain c = straight_chain({1.f, 1.f});
        SolveReport r;
        ASSERT_TRUE(solve(Algo::Fabrik, c, point(goal), settings(50), &r));
        EXPECT_TRUE(r.converged);
        const Fk f = fk(c);
        EXPECT_NEAR(angle_between(f.pos[1] - f.pos[2], f.pos[0] - f.pos[1]), kPi / 2.f, 1e-3f);
        EXPECT_NEAR(f.pos[0].z, 0.f, 1e-5f);  // stays in its plane
    }
    for (float start_bend : {0.3f, -0.3f}) {
        SCOPED_TRACE(start_bend);
        TestChain c = straight_chain({1.f, 1.f});
        c.rot[1] = axis_angle(start_bend, {0.f, 0.f, 1.f});
        SolveReport r;
        TwoBoneJob j{c.pose(), point(goal)};
        j.report = &r;
        ASSERT_TRUE(j.run());
        EXPECT_EQ(r.iterations, 1);
        const Fk f = fk(c);
        EXPECT_LT(length(f.pos[1] - Vec3{1.f, 0.f, 0.f}), 1e-5f);
        EXPECT_LT(length(f.pos[0] - goal), 1e-5f);
        if (start_bend > 0.f) {
            // Already bent in the pole plane: only the elbow turns.
            EXPECT_TRUE(same_rotation(c.rot[2], Quat::identity(), 1e-5f));
            EXPECT_TRUE(same_rotation(c.rot[1], elbow90, 1e-5f));
        } else {
            // Bent away from the pole: the plane turns a half turn about A→goal, so the shoulder
            // ends rolled by π about its bone (+X), the same positions.
            EXPECT_TRUE(same_rotation(c.rot[2], Quat{1.f, 0.f, 0.f, 0.f}, 1e-5f));
        }
    }
}

TEST(SolverKnownAnswer, AlreadyWithinToleranceDoesNothing) {
    std::mt19937 rng(3);
    for (Algo algo : kAlgos) {
        TestChain c = random_chain(rng, 4);
        const std::vector<Quat> before = c.rot;
        const Vec3 e = fk(c).effector;
        SolveReport r;
        ASSERT_TRUE(solve(algo, c, point(e + Vec3{0.0001f, 0.f, 0.f}), settings(20), &r));
        EXPECT_EQ(r.iterations, 0);
        EXPECT_TRUE(r.converged);
        EXPECT_NEAR(r.initial_error, 0.0001f, 1e-6f);
        for (std::size_t k = 0; k < before.size(); ++k)
            EXPECT_TRUE(same_rotation(c.rot[k], before[k], 1e-6f));
    }
}

// ---- Convergence ----------------------------------------------------------------------------

// Targets at least 2 cm inside the reach boundary. Next to the boundary the chain must end up
// nearly straight (or folded) and CCD slows to a crawl: each sweep shrinks the error by about
// cos² of the angle between the last moving bone and the root→goal line, so a goal 1 mm from
// full reach can take thousands of sweeps (Wang & Chen's method is linear at best). Those goals
// have their own tests below.
class SolverConvergence : public ::testing::TestWithParam<int> {};

TEST_P(SolverConvergence, ReachableRandomTargetsWithinHalfAMillimetre) {
    const int n = GetParam();
    for (Algo algo : kAlgos) {
        for (EndRotation mode : {EndRotation::Keep, EndRotation::Follow}) {
            std::mt19937 rng(1234u + static_cast<unsigned>(n));
            int total_iterations = 0;
            constexpr int kTrials = 60;
            for (int trial = 0; trial < kTrials; ++trial) {
                SCOPED_TRACE(name(algo) + (mode == EndRotation::Keep ? " keep" : " follow") +
                             " trial " + std::to_string(trial));
                TestChain c = random_chain(rng, n);
                Vec3 goal = reachable_target(rng, c, mode);
                // A single joint reaches only a sphere: every goal lies on the boundary.
                while (n > 2 && boundary_margin(c, goal, mode) < 0.02f) {
                    goal = reachable_target(rng, c, mode);
                }
                const Quat world0 = fk(c).rot[0];
                const Quat local0 = c.rot[0];
                const std::vector<Quat> before = c.rot;
                SolveReport r;
                ASSERT_TRUE(solve(algo, c, point(goal), settings(500, mode), &r));
                const Fk f = fk(c);
                // Solved locals stay in their input hemisphere, so blending them (nlerp) with
                // the input pose never takes the long way round.
                for (std::size_t k = 1; k < before.size(); ++k)
                    EXPECT_GE(dot(c.rot[k], before[k]), 0.f) << k;
                EXPECT_LE(length(f.effector - goal), kTol);
                EXPECT_TRUE(r.converged);
                EXPECT_TRUE(r.reachable);
                EXPECT_NEAR(r.error, length(f.effector - goal), 1e-5f);
                EXPECT_TRUE(all_unit_and_finite(c));
                if (mode == EndRotation::Keep) {
                    EXPECT_TRUE(same_rotation(f.rot[0], world0, 1e-5f));
                } else {
                    EXPECT_EQ(c.rot[0], local0);
                }
                total_iterations += r.iterations;
            }
            RecordProperty(name(algo) + "_mean_iterations_n" + std::to_string(n),
                           std::to_string(total_iterations / kTrials));
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Solver, SolverConvergence, ::testing::Values(2, 3, 4, 10));

TEST(SolverConvergence, FabrikConvergesNextToTheReachBoundary) {
    std::mt19937 rng(77);
    int tested = 0;
    while (tested < 40) {
        TestChain c = random_chain(rng, 3 + tested % 2);
        const Vec3 goal = reachable_target(rng, c, EndRotation::Follow);
        if (boundary_margin(c, goal, EndRotation::Follow) > 0.002f) continue;
        ++tested;
        SolveReport r;
        ASSERT_TRUE(solve(Algo::Fabrik, c, point(goal), settings(1000, EndRotation::Follow), &r));
        EXPECT_LE(length(fk(c).effector - goal), kTol) << r.iterations;
    }
}

// Each CCD step is the exact best turn of one joint, so without limits the error can only fall
// from sweep to sweep, however slowly next to the boundary.
TEST(SolverConvergence, CcdErrorNeverIncreasesFromSweepToSweep) {
    std::mt19937 rng(78);
    int tested = 0;
    while (tested < 20) {
        const TestChain start = random_chain(rng, 3 + tested % 3);
        const Vec3 goal = reachable_target(rng, start, EndRotation::Keep);
        if (boundary_margin(start, goal, EndRotation::Keep) > 0.005f) continue;
        ++tested;
        float previous = std::numeric_limits<float>::infinity();
        float initial = 0.f;
        for (int sweeps = 1; sweeps <= 60; ++sweeps) {
            TestChain c = start;
            SolveReport r;
            ASSERT_TRUE(solve(Algo::Ccd, c, point(goal), settings(sweeps), &r));
            EXPECT_LE(r.error, previous + 1e-6f) << "sweep " << sweeps;
            previous = r.error;
            initial = r.initial_error;
        }
        EXPECT_LT(previous, 0.5f * initial);
    }
}

// Next to full reach plain CCD crawls (each sweep adds a sliver of bend: a 2-bone arm at 99 %
// of its reach took ~100 sweeps for 0.5 mm); after a slow sweep J[1] is turned by
// triangulation, and the root's aim then lands the effector on the goal.
TEST(SolverConvergence, CcdNearFullReachConvergesInAFewSweeps) {
    std::mt19937 rng(31);
    for (int trial = 0; trial < 40; ++trial) {
        SCOPED_TRACE("trial " + std::to_string(trial));
        // SL arm lengths (upper arm 0.205 m, forearm 0.248 m), elbow bent 5–20 degrees.
        TestChain c = straight_chain({0.205f, 0.248f});
        c.rot[1] = axis_angle((5.f + 15.f * std::uniform_real_distribution<float>(0.f, 1.f)(rng)) * kPi / 180.f,
                              Vec3{0.f, 0.f, 1.f});
        const float reach = chain_reach(c);
        const float fraction = std::uniform_real_distribution<float>(0.985f, 0.999f)(rng);
        const Vec3 goal = c.root + random_unit(rng) * (reach * fraction);
        SolveReport r;
        ASSERT_TRUE(solve(Algo::Ccd, c, point(goal), settings(128, EndRotation::Follow), &r));
        EXPECT_TRUE(r.converged);
        EXPECT_LE(r.error, 0.0005f);
        EXPECT_LE(r.iterations, 6);
        ASSERT_TRUE(all_unit_and_finite(c));
    }
}

TEST(SolverPlane, CcdAndFabrikReachPlanes) {
    std::mt19937 rng(99);
    for (Algo algo : kAlgos) {
        for (EndRotation mode : {EndRotation::Keep, EndRotation::Follow}) {
            for (int trial = 0; trial < 40; ++trial) {
                SCOPED_TRACE(name(algo) + " trial " + std::to_string(trial));
                TestChain c = random_chain(rng, 2 + trial % 4);
                const Vec3 on_plane = reachable_target(rng, c, mode);
                const Vec3 normal = random_unit(rng) * 2.f;  // not unit on purpose
                const Target t{TargetKind::Plane, on_plane + cross(normal, random_unit(rng)),
                               normal};
                SolveReport r;
                ASSERT_TRUE(solve(algo, c, t, settings(500, mode), &r));
                const float err = std::fabs(dot(fk(c).effector - t.point, unit_vec(normal)));
                EXPECT_LE(err, kTol) << "after " << r.iterations << " iterations";
                EXPECT_TRUE(r.reachable);
                EXPECT_NEAR(r.error, err, 1e-5f);
                EXPECT_TRUE(all_unit_and_finite(c));
            }
        }
    }
}

TEST(SolverPlane, UnreachablePlaneIsApproachedStraight) {
    for (Algo algo : kAlgos) {
        TestChain c = straight_chain({0.3f, 0.2f});
        c.rot[2] = axis_angle(0.4f, {0.f, 1.f, 0.f});
        c.rot[1] = axis_angle(0.7f, {0.f, 0.f, 1.f});
        const Target t{TargetKind::Plane, {0.f, 0.f, 1.f}, {0.f, 0.f, 1.f}};
        SolveReport r;
        ASSERT_TRUE(solve(algo, c, t, settings(200, EndRotation::Follow), &r));
        EXPECT_FALSE(r.reachable);
        EXPECT_NEAR(fk(c).effector.z, 0.5f, 1e-4f) << name(algo);
    }
}

// ---- Keep vs Follow -------------------------------------------------------------------------

TEST(SolverEndRotation, KeepHoldsTheEndJointsWorldRotationFollowItsLocal) {
    std::mt19937 rng(5);
    for (int trial = 0; trial < 10; ++trial) {
        const TestChain base = random_chain(rng, 3);
        const Quat world0 = fk(base).rot[0];
        for (EndRotation mode : {EndRotation::Keep, EndRotation::Follow}) {
            const Vec3 goal = reachable_target(rng, base, mode);
            for (int solver = 0; solver < 3; ++solver) {
                TestChain c = base;
                SolveReport r;
                if (solver < 2) {
                    ASSERT_TRUE(solve(kAlgos[solver], c, point(goal), settings(500, mode), &r));
                } else {
                    TwoBoneJob j{c.pose(), point(goal)};
                    j.end_rotation = mode;
                    j.report = &r;
                    ASSERT_TRUE(j.run());
                }
                const Fk f = fk(c);
                EXPECT_LE(length(f.effector - goal), kTol) << solver;
                if (mode == EndRotation::Keep) {
                    EXPECT_TRUE(same_rotation(f.rot[0], world0, 1e-5f)) << solver;
                    // The parent moved, so the local rotation had to change to hold the world one.
                    EXPECT_FALSE(same_rotation(c.rot[0], base.rot[0], 1e-4f)) << solver;
                } else {
                    EXPECT_EQ(c.rot[0], base.rot[0]) << solver;
                }
            }
        }
    }
}

// ---- Limits ---------------------------------------------------------------------------------

namespace {
/// Limits for J[1..L] whose forward axis is each joint's bone (offsets[k−1]).
std::vector<JointLimit> bone_limits(const TestChain& c, float cone, float min_twist,
                                    float max_twist) {
    std::vector<JointLimit> limits(c.rot.size());
    for (std::size_t k = 1; k < limits.size(); ++k) {
        limits[k].enabled = true;
        limits[k].forward = unit_vec(c.offsets[k - 1]);
        limits[k].cone = cone;
        limits[k].min_twist = min_twist;
        limits[k].max_twist = max_twist;
    }
    return limits;
}
}  // namespace

TEST(SolverLimits, ConeIsNeverExceeded) {
    std::mt19937 rng(11);
    for (Algo algo : kAlgos) {
        for (int trial = 0; trial < 40; ++trial) {
            SCOPED_TRACE(name(algo) + " trial " + std::to_string(trial));
            TestChain c = random_chain(rng, 3 + trial % 4, 0.f);  // start at rest
            const auto limits = bone_limits(c, 0.3f, -kPi, kPi);
            const Vec3 goal = reachable_target(rng, c, EndRotation::Keep);
            SolveReport r;
            ASSERT_TRUE(solve(algo, c, point(goal), settings(50, EndRotation::Keep, limits), &r));
            EXPECT_TRUE(std::isfinite(r.error));
            EXPECT_TRUE(all_unit_and_finite(c));
            for (std::size_t k = 1; k < c.rot.size(); ++k) {
                EXPECT_LE(swing_angle(c.rot[k], limits[k].forward), 0.3f + 1e-4f) << k;
            }
        }
    }
}

TEST(SolverLimits, TwistBoundsAreRespected) {
    std::mt19937 rng(12);
    for (Algo algo : kAlgos) {
        for (int trial = 0; trial < 40; ++trial) {
            SCOPED_TRACE(name(algo) + " trial " + std::to_string(trial));
            TestChain c = random_chain(rng, 3 + trial % 3, 0.f);
            const auto limits = bone_limits(c, kPi, -0.2f, 0.25f);
            const Vec3 goal = reachable_target(rng, c, EndRotation::Follow);
            ASSERT_TRUE(solve(algo, c, point(goal), settings(50, EndRotation::Follow, limits),
                              nullptr));
            for (std::size_t k = 1; k < c.rot.size(); ++k) {
                const float tw = twist_angle(c.rot[k], limits[k].forward);
                EXPECT_GE(tw, -0.2f - 1e-4f) << k;
                EXPECT_LE(tw, 0.25f + 1e-4f) << k;
            }
        }
    }
}

// A limited chain reaching a target that a limited pose produced: the solvers should get there
// (not guaranteed in general, so this asserts most, not all, trials).
TEST(SolverLimits, LimitedReachableTargetsMostlyConverge) {
    std::mt19937 rng(13);
    for (Algo algo : kAlgos) {
        int converged = 0;
        constexpr int kTrials = 40;
        for (int trial = 0; trial < kTrials; ++trial) {
            TestChain c = random_chain(rng, 4, 0.f);
            const auto limits = bone_limits(c, 0.8f, -0.5f, 0.5f);
            TestChain other = c;
            for (std::size_t k = 1; k < c.rot.size(); ++k)
                other.rot[k] = apply_limit(limits[k], random_rotation(rng, 0.8f));
            const Vec3 goal = fk(other).effector;
            SolveReport r;
            ASSERT_TRUE(
                solve(algo, c, point(goal), settings(200, EndRotation::Follow, limits), &r));
            converged += r.converged ? 1 : 0;
        }
        EXPECT_GE(converged, kTrials * 3 / 4) << name(algo);
    }
}

// ---- Degenerate cases -----------------------------------------------------------------------

TEST(SolverDegenerate, UnreachableTargetStraightensTheChainTowardIt) {
    std::mt19937 rng(21);
    for (int trial = 0; trial < 12; ++trial) {
        for (int solver = 0; solver < 3; ++solver) {
            SCOPED_TRACE("solver " + std::to_string(solver) + " trial " + std::to_string(trial));
            TestChain c = random_chain(rng, solver == 2 ? 3 : 3 + trial % 4);
            c.effector = {};
            const Fk start = fk(c);
            const float reach = chain_reach(c);
            const Vec3 goal = c.root + random_unit(rng) * (reach * (1.2f + 0.3f * float(trial)));
            SolveReport r;
            if (solver < 2) {
                // The default iteration budget: a goal out of reach is met by the straight chain
                // directly, not by sweeps creeping toward it.
                ASSERT_TRUE(solve(kAlgos[solver], c, point(goal),
                                  settings(SolveSettings{}.max_iterations, EndRotation::Follow),
                                  &r));
            } else {
                TwoBoneJob j{c.pose(), point(goal)};
                j.end_rotation = EndRotation::Follow;
                j.report = &r;
                ASSERT_TRUE(j.run());
            }
            ASSERT_TRUE(all_unit_and_finite(c));
            const Fk f = fk(c);
            for (int k = 0; k + 2 < c.n(); ++k) {
                const auto i = static_cast<std::size_t>(k);
                EXPECT_LT(angle_between(f.pos[i + 1] - f.pos[i + 2], f.pos[i] - f.pos[i + 1]),
                          1e-3f)
                    << k;
            }
            EXPECT_LT(angle_between(f.pos[0] - c.root, goal - c.root), 1e-3f);
            EXPECT_NEAR(length(f.effector - goal), length(goal - c.root) - reach, 1e-4f);
            EXPECT_FALSE(r.reachable);
            EXPECT_FALSE(r.converged);
            EXPECT_NEAR(r.initial_error, length(start.effector - goal), 1e-5f);
            // Once straight, aiming again only turns joints by rounding noise: the solve ends
            // when a pass brings the effector no closer, not at the iteration budget.
            if (solver < 2) {
                EXPECT_LE(r.iterations, 4);
            }
        }
    }
}

// A goal at exactly full reach needs the chain exactly straight: CCD and FABRIK approach that
// only asymptotically, so they must recognise it.
TEST(SolverDegenerate, GoalAtFullReachConvergesWithinTheDefaultBudget) {
    std::mt19937 rng(23);
    for (Algo algo : kAlgos) {
        for (int trial = 0; trial < 10; ++trial) {
            SCOPED_TRACE(name(algo) + " trial " + std::to_string(trial));
            TestChain c = random_chain(rng, 3 + trial % 3);
            TestChain straight = c;
            for (std::size_t k = 1; k < c.rot.size(); ++k) straight.rot[k] = Quat::identity();
            c.offsets = {};
            for (std::size_t k = 0; k < straight.offsets.size(); ++k)
                c.offsets.push_back(k + 1 < straight.offsets.size() ? Vec3{0.2f, 0.f, 0.f}
                                                                     : Vec3{});
            straight.offsets = c.offsets;
            // Straight chain along its parent's +X, then a random turn of the whole chain.
            const Quat turn = random_rotation(rng, kPi);
            straight.rot.back() = turn;
            const Vec3 goal = fk(straight).pos[0];
            c.effector = {};
            SolveReport r;
            ASSERT_TRUE(solve(algo, c, point(goal), settings(SolveSettings{}.max_iterations), &r));
            EXPECT_TRUE(r.converged) << r.error;
            EXPECT_TRUE(r.reachable);
            EXPECT_LE(r.iterations, 2);
        }
    }
}

TEST(SolverDegenerate, ZeroLengthBone) {
    std::mt19937 rng(22);
    for (Algo algo : kAlgos) {
        for (int trial = 0; trial < 20; ++trial) {
            SCOPED_TRACE(name(algo) + " trial " + std::to_string(trial));
            TestChain c = random_chain(rng, 5);
            c.offsets[static_cast<std::size_t>(1 + trial % 3)] = {};  // J[k] sits on J[k+1]
            const Vec3 goal = reachable_target(rng, c, EndRotation::Keep);
            SolveReport r;
            ASSERT_TRUE(solve(algo, c, point(goal), settings(500), &r));
            EXPECT_TRUE(all_unit_and_finite(c));
            EXPECT_LE(length(fk(c).effector - goal), kTol);
        }
    }
    // Every bone zero: nothing can move, nothing may break.
    TestChain z = straight_chain({0.f, 0.f, 0.f});
    for (Algo algo : kAlgos) {
        SolveReport r;
        ASSERT_TRUE(solve(algo, z, point({1.f, 0.f, 0.f}), settings(20), &r));
        EXPECT_TRUE(all_unit_and_finite(z));
        EXPECT_NEAR(r.error, 1.f, 1e-6f);
    }
    TestChain z3 = straight_chain({0.f, 0.3f});
    TwoBoneJob j{z3.pose(), point({0.f, 0.2f, 0.1f})};
    ASSERT_TRUE(j.run());
    EXPECT_TRUE(all_unit_and_finite(z3));
}

TEST(SolverDegenerate, TargetExactlyAtTheRoot) {
    for (int solver = 0; solver < 3; ++solver) {
        SCOPED_TRACE(solver);
        // Equal bones can fold back onto the root exactly.
        TestChain c = straight_chain({0.3f, 0.3f});
        c.root = {0.1f, -0.2f, 0.3f};
        c.rot[1] = axis_angle(0.5f, {0.f, 0.f, 1.f});
        SolveReport r;
        if (solver < 2) {
            ASSERT_TRUE(solve(kAlgos[solver], c, point(c.root), settings(500, EndRotation::Follow),
                              &r));
        } else {
            TwoBoneJob j{c.pose(), point(c.root)};
            j.report = &r;
            ASSERT_TRUE(j.run());
        }
        EXPECT_TRUE(all_unit_and_finite(c));
        EXPECT_TRUE(r.reachable);
        EXPECT_LE(length(fk(c).effector - c.root), kTol);
    }
    for (Algo algo : kAlgos) {
        TestChain c = straight_chain({0.3f, 0.2f, 0.2f});
        c.rot[2] = axis_angle(0.4f, {0.f, 1.f, 0.f});
        SolveReport r;
        ASSERT_TRUE(solve(algo, c, point(c.root), settings(500, EndRotation::Follow), &r));
        EXPECT_TRUE(all_unit_and_finite(c));
        EXPECT_LE(length(fk(c).effector - c.root), kTol) << name(algo);
    }
}

// A straight chain on the line through the goal is a stationary point of CCD and keeps FABRIK's
// points on that line: the solvers must still bend it.
TEST(SolverDegenerate, CollinearStraightChain) {
    const Vec3 behind{-0.3f, 0.f, 0.f};
    const Vec3 ahead{0.4f, 0.f, 0.f};
    for (Algo algo : kAlgos) {
        for (Vec3 goal : {behind, ahead}) {
            for (EndRotation mode : {EndRotation::Keep, EndRotation::Follow}) {
                TestChain c = straight_chain({0.3f, 0.25f, 0.2f});
                SolveReport r;
                ASSERT_TRUE(solve(algo, c, point(goal), settings(500, mode), &r));
                EXPECT_TRUE(all_unit_and_finite(c));
                EXPECT_TRUE(r.reachable);
                EXPECT_LE(length(fk(c).effector - goal), kTol)
                    << name(algo) << " goal.x " << goal.x;
            }
        }
    }
    for (Vec3 goal : {Vec3{-0.2f, 0.f, 0.f}, Vec3{0.3f, 0.f, 0.f}}) {
        TestChain c = straight_chain({0.3f, 0.25f});
        TwoBoneJob j{c.pose(), point(goal)};
        ASSERT_TRUE(j.run());
        EXPECT_LT(length(fk(c).effector - goal), 1e-4f) << goal.x;
    }
}

TEST(SolverDegenerate, ReachableFlagAccountsForTheInnerRadius) {
    // Bones 0.4 and 0.1: nothing closer than 0.3 to the root can be reached.
    TestChain c = straight_chain({0.4f, 0.1f});
    for (Algo algo : kAlgos) {
        TestChain d = c;
        SolveReport r;
        ASSERT_TRUE(solve(algo, d, point({0.f, 0.1f, 0.f}), settings(100), &r));
        EXPECT_FALSE(r.reachable);
        EXPECT_NEAR(r.error, 0.2f, 1e-3f) << name(algo);  // folded: effector 0.3 from the root
    }
}

// ---- Two-bone -------------------------------------------------------------------------------

TEST(TwoBoneSolver, ExactForReachableTargetsElbowTowardThePole) {
    std::mt19937 rng(31);
    for (int trial = 0; trial < 200; ++trial) {
        SCOPED_TRACE(trial);
        TestChain c = random_chain(rng, 3, 1.5f);
        const EndRotation mode = trial % 2 ? EndRotation::Keep : EndRotation::Follow;
        const Vec3 goal = reachable_target(rng, c, mode);
        TwoBoneJob j{c.pose(), point(goal)};
        j.pole = random_unit(rng);
        j.end_rotation = mode;
        SolveReport r;
        j.report = &r;
        ASSERT_TRUE(j.run());
        const Fk f = fk(c);
        EXPECT_LT(length(f.effector - goal), 1e-4f);
        EXPECT_EQ(r.iterations, 1);
        EXPECT_TRUE(all_unit_and_finite(c));
        // B lies in the plane of A→goal and the pole, on the pole's side.
        const Vec3 a = f.pos[2];
        const Vec3 ag = unit_vec((mode == EndRotation::Keep ? f.pos[0] : f.effector) - a);
        const Vec3 pole_w = rotate(j.pole, c.root_parent);
        const Vec3 pole_perp = pole_w - ag * dot(pole_w, ag);
        const Vec3 b_off = (f.pos[1] - a) - ag * dot(f.pos[1] - a, ag);
        if (length(b_off) > 1e-3f && length(pole_perp) > 0.05f) {
            EXPECT_LT(angle_between(b_off, pole_perp), 2e-3f);
        }
    }
}

TEST(TwoBoneSolver, TwistTurnsTheElbowPlaneAboutTheGoalAxis) {
    TestChain c = straight_chain({0.25f, 0.2f});
    c.root_parent = axis_angle(0.7f, unit_vec({1.f, 2.f, 3.f}));
    const Vec3 goal = c.root + Vec3{0.2f, 0.15f, -0.1f};
    TwoBoneJob j{c.pose(), point(goal)};
    j.pole = {0.f, 0.f, 1.f};
    j.twist = 0.3f;
    ASSERT_TRUE(j.run());
    const Fk f = fk(c);
    EXPECT_LT(length(f.pos[0] - goal), 1e-4f);
    const Vec3 ag = unit_vec(goal - c.root);
    const Vec3 pole_w = rotate(j.pole, c.root_parent);
    const Vec3 pole_perp = unit_vec(pole_w - ag * dot(pole_w, ag));
    const Vec3 b_off = unit_vec((f.pos[1] - c.root) - ag * dot(f.pos[1] - c.root, ag));
    EXPECT_LT(length(b_off - rotate(pole_perp, axis_angle(0.3f, ag))), 1e-3f);
}

TEST(TwoBoneSolver, BAxisChoosesThePlaneAndStillReaches) {
    TestChain c = straight_chain({0.25f, 0.2f});
    c.rot[1] = axis_angle(0.6f, {0.f, 0.f, 1.f});
    const Vec3 goal{0.1f, 0.2f, 0.25f};
    TwoBoneJob j{c.pose(), point(goal)};
    j.use_b_axis = true;
    j.b_axis = {0.f, 1.f, 0.f};
    ASSERT_TRUE(j.run());
    EXPECT_LT(length(fk(c).pos[0] - goal), 1e-4f);
    EXPECT_TRUE(all_unit_and_finite(c));
}

TEST(TwoBoneSolver, PoleAlongTheGoalAxisStillReaches) {
    TestChain c = straight_chain({0.25f, 0.2f});
    c.rot[1] = axis_angle(0.6f, {0.f, 0.f, 1.f});
    TwoBoneJob j{c.pose(), point({0.3f, 0.f, 0.f})};  // pole +X is along A→goal
    SolveReport r;
    j.report = &r;
    ASSERT_TRUE(j.run());
    EXPECT_LT(r.error, 1e-4f);
    EXPECT_TRUE(r.converged);
}
