// SPDX-License-Identifier: MIT
// The viewer's constraint relaxation (LLKeyframeMotion::applyConstraint chain case, spec §4.2).
#include <gtest/gtest.h>

#include <vector>

#include "slanim/ik/solvers.hpp"

namespace slanim::ik {
namespace {

/// A 2-bone arm along +Y: root at the origin, bones of 0.25 m and 0.2 m, end joint at the end.
struct Arm {
    std::vector<Vec3> offsets{{0.f, 0.2f, 0.f}, {0.f, 0.25f, 0.f}, {}};
    std::vector<Quat> rots{Quat::identity(), Quat::identity(), Quat::identity()};
    ChainPose pose() { return {offsets, rots, {}, Quat::identity(), {}}; }
};

Quat world_rot0(const std::vector<Quat>& r) { return ll_mul(r[0], ll_mul(r[1], r[2])); }

TEST(ViewerRelaxation, ReachableGoalWithoutEffectorOffsetIsReached) {
    Arm a;
    std::vector<Vec3> relaxed(1);
    SolveReport rep;
    ViewerRelaxationJob job;
    job.pose = a.pose();
    job.goal = {0.2f, 0.25f, 0.1f};
    job.relaxed_points = relaxed;
    job.report = &rep;
    ASSERT_TRUE(job.run());
    // The relaxation stops once each interior spring force is below 0.5 mm while the point may
    // still be moving (velocity is damped, not zeroed): lengths hold to a few millimetres.
    EXPECT_GT(rep.initial_error, 0.1f);
    EXPECT_LT(rep.error, 0.005f);
    EXPECT_NEAR(length(relaxed[0]), 0.25f, 0.005f);
    EXPECT_NEAR(length(job.goal - relaxed[0]), 0.2f, 0.005f);
    EXPECT_TRUE(rep.reachable);
    EXPECT_GE(rep.iterations, 3);  // never stops before MIN_ITERATION_COUNT
    EXPECT_LE(rep.iterations, 20);
    // Keep: the end joint's world rotation is what it was (identity).
    const Quat w0 = world_rot0(a.rots);
    EXPECT_NEAR(std::fabs(w0.w), 1.f, 1e-5f);
}

TEST(ViewerRelaxation, ZeroWeightLeavesThePoseAlone) {
    Arm a;
    a.rots[1] = quat_from_axis_angle(0.4f, {0.f, 0.f, 1.f});
    const std::vector<Quat> before = a.rots;
    ViewerRelaxationJob job;
    job.pose = a.pose();
    job.goal = {0.2f, 0.25f, 0.1f};
    job.weight = 0.f;
    ASSERT_TRUE(job.run());
    for (std::size_t k = 0; k < before.size(); ++k)
        EXPECT_GT(std::fabs(dot(before[k], a.rots[k])), 1.f - 1e-6f) << k;
}

TEST(ViewerRelaxation, SingleBoneAimsStraightAtTheGoal) {
    // L = 1: no interior points; the loop still runs MIN_ITERATION_COUNT + 1 times.
    std::vector<Vec3> offsets{{0.f, 0.3f, 0.f}, {}};
    std::vector<Quat> rots(2);
    SolveReport rep;
    ViewerRelaxationJob job;
    job.pose = {offsets, rots, {}, Quat::identity(), {}};
    job.goal = {0.f, 0.f, 0.5f};
    job.report = &rep;
    ASSERT_TRUE(job.run());
    EXPECT_EQ(rep.iterations, 3);
    const Vec3 e = effector_position(job.pose);
    EXPECT_NEAR(e.x, 0.f, 1e-5f);
    EXPECT_NEAR(e.y, 0.f, 1e-5f);
    EXPECT_NEAR(e.z, 0.3f, 1e-5f);  // as close as a 0.3 m bone gets
    EXPECT_FALSE(rep.reachable);
}

TEST(ViewerRelaxation, EffectorOffsetMissesByTheRestoredHandRotation) {
    // With a hand offset, the aim pass turns the hand with the forearm, then the end joint's
    // world rotation is restored: the volume point swings back (the viewer's residual).
    Arm a;
    SolveReport rep;
    ViewerRelaxationJob job;
    job.pose = a.pose();
    job.pose.effector = {0.f, 0.1f, 0.f};
    job.goal = {0.25f, 0.3f, 0.f};
    job.report = &rep;
    ASSERT_TRUE(job.run());
    EXPECT_GT(rep.error, 0.005f);
    EXPECT_LT(rep.error, rep.initial_error);
    // Follow keeps the hand turned with the forearm and so lands on the relaxed goal.
    Arm b;
    SolveReport rep2;
    ViewerRelaxationJob follow = job;
    follow.pose = b.pose();
    follow.pose.effector = {0.f, 0.1f, 0.f};
    follow.end_rotation = EndRotation::Follow;
    follow.report = &rep2;
    ASSERT_TRUE(follow.run());
    EXPECT_LT(rep2.error, 0.007f);
    EXPECT_LT(rep2.error, 0.5f * rep.error);
}

TEST(ViewerRelaxation, IterationBudgetIsHonoured) {
    Arm a;
    SolveReport rep;
    ViewerRelaxationJob job;
    job.pose = a.pose();
    job.goal = {0.3f, 0.1f, 0.1f};
    job.max_iterations = 1;
    job.report = &rep;
    ASSERT_TRUE(job.run());
    EXPECT_EQ(rep.iterations, 1);
    for (const Quat& q : a.rots) EXPECT_TRUE(is_finite(q));
}

TEST(ViewerRelaxation, ValidateRejectsBadInput) {
    Arm a;
    ViewerRelaxationJob job;
    job.pose = a.pose();
    job.goal = {0.1f, 0.1f, 0.1f};
    EXPECT_TRUE(job.validate());
    std::vector<float> lengths{0.2f};  // needs L = 2 entries
    job.lengths = lengths;
    EXPECT_FALSE(job.validate());
    job.lengths = {};
    job.weight = 1.5f;
    EXPECT_FALSE(job.validate());
    job.weight = 1.f;
    job.goal = {std::nanf(""), 0.f, 0.f};
    EXPECT_FALSE(job.validate());
    EXPECT_FALSE(job.run());
    job.goal = {};
    job.max_iterations = 0;
    EXPECT_FALSE(job.validate());
}

}  // namespace
}  // namespace slanim::ik
