// SPDX-License-Identifier: MIT
// Motion controller timelines (spec §2.3, §3.1–§3.4).
#include <gtest/gtest.h>

#include "slanim/runtime/world.hpp"
#include "test_util.hpp"

using namespace slanim;
using namespace slanim::test;

namespace {

struct Avatar {
    World world;
    Entity e;
    Avatar() : e(world.create_avatar(Skeleton::default_skeleton())) {}
    MotionController& ctrl() { return world.controller(e); }
    void step(float dt) { world.step(dt); }
    Quat local_rot(const char* joint) { return world.local_pose(e).rotations[skel().find(joint)]; }
    const MotionInstance* inst(const MotionClip* c) {
        for (const auto& m : ctrl().active())
            if (m->clip.get() == c && !m->deprecated) return m.get();
        return nullptr;
    }
};

}  // namespace

// Ease in over 1 s from rest (residual 0): weight = cubic_step(T / 1).
//   T:      0     0.25        0.5       1.0   1.1
//   weight: 0     0.15625     0.5       1     1
TEST(Controller, EaseInWithCubicStep) {
    Avatar a;
    const auto c = clip(motion({rot_joint("mHead", {{0.f, 40.f}})}, 5.f, 2, 1.f, 0.5f, true, 0.f, 5.f));
    a.ctrl().start(c);
    a.step(0.f);
    EXPECT_EQ(a.inst(c.get())->pose_weight, 0.f);
    a.step(0.25f);
    EXPECT_FLOAT_EQ(a.inst(c.get())->pose_weight, 0.15625f);
    a.step(0.25f);
    EXPECT_FLOAT_EQ(a.inst(c.get())->pose_weight, 0.5f);
    a.step(0.5f);
    a.step(0.1f);
    EXPECT_EQ(a.inst(c.get())->pose_weight, 1.f);
    // A lone motion drives its joint fully even while easing in (first contributor rule).
    EXPECT_NEAR(z_angle_deg(a.local_rot("mHead")), 40.f, 1e-3f);
}

// Non-looping, duration 2, ease out 0.5: the stop is sent once T passes 2 − 0.5 = 1.5 s; the
// weight then falls as R·cubic_step(1 − (T − S)/0.5) and the motion deactivates after S + 0.5.
//   T:      1.5    1.75 (stop, S)   2.0 (R = 1)          2.25      2.5
//   weight: 1      1                cubic_step(0.5)      0         deactivated
TEST(Controller, AutoStopAtDurationMinusEaseOut) {
    Avatar a;
    const auto c = clip(motion({rot_joint("mHead", {{0.f, 0.f}, {2.f, 80.f}})}, 2.f, 2, 0.f, 0.5f));
    a.ctrl().start(c);
    a.step(0.f);
    for (int i = 0; i < 6; ++i) a.step(0.25f);  // T = 1.5 exactly: not past the send-stop time
    const MotionInstance* m = a.inst(c.get());
    ASSERT_NE(m, nullptr);
    EXPECT_FALSE(m->stopped);
    a.step(0.25f);  // T = 1.75
    EXPECT_TRUE(m->stopped);
    EXPECT_EQ(m->stop_time, 1.75f);
    EXPECT_EQ(m->pose_weight, 1.f);
    a.step(0.25f);  // T = 2.0: first ease-out frame, residual = 1
    EXPECT_EQ(m->pose_weight, cubic_step(0.5f));
    a.step(0.25f);  // T = 2.25 = S + ease out
    EXPECT_EQ(m->pose_weight, 0.f);
    EXPECT_TRUE(a.ctrl().is_active(c.get()));
    a.step(0.25f);
    EXPECT_FALSE(a.ctrl().is_active(c.get()));
    EXPECT_TRUE(a.ctrl().active().empty());
}

// Looping with loop_in 1, loop_out 2, duration 3, ease out 0.5, stopped at 2.5:
// frac = fmod(2.5 − 1, 1) = 0.5, stop = max(2.5, 2.5 − 0.5 + (3 − 1) − 0.5) = 3.5.
TEST(Controller, StopOfALoopingMotionIsDeferred) {
    Avatar a;
    const auto c = clip(motion({rot_joint("mHead", {{0.f, 0.f}, {3.f, 30.f}})}, 3.f, 2, 0.f, 0.5f, true, 1.f, 2.f));
    a.ctrl().start(c);
    a.step(0.f);
    for (int i = 0; i < 5; ++i) a.step(0.5f);  // T = 2.5
    a.ctrl().stop(c.get());
    EXPECT_FLOAT_EQ(a.inst(c.get())->stop_time, 3.5f);
}

TEST(Controller, NewestWinsAmongEqualPriorities) {
    Avatar a;
    const auto older = clip(motion({rot_joint("mHead", {{0.f, 10.f}})}, 1.f, 3), "older");
    const auto newer = clip(motion({rot_joint("mHead", {{0.f, 70.f}})}, 1.f, 3), "newer");
    a.ctrl().start(older);
    a.ctrl().start(newer);
    a.step(0.f);
    a.step(0.1f);
    EXPECT_NEAR(z_angle_deg(a.local_rot("mHead")), 70.f, 1e-3f);
}

TEST(Controller, JointPriorityOverridesBaseAndMinusOneUsesBase) {
    Avatar a;
    // Base 4, joint −1 → 4 beats a newer motion whose joint priority is 3.
    const auto strong = clip(motion({rot_joint("mHead", {{0.f, 10.f}}, -1)}, 1.f, 4), "strong");
    const auto weak = clip(motion({rot_joint("mHead", {{0.f, 70.f}}, 3)}, 1.f, 6), "weak");
    a.ctrl().start(strong);
    a.ctrl().start(weak);
    a.step(0.f);
    a.step(0.1f);
    EXPECT_NEAR(z_angle_deg(a.local_rot("mHead")), 10.f, 1e-3f);
}

TEST(Controller, FullyCoveredOlderMotionIsNotEvaluated) {
    Avatar a;
    const auto older = clip(motion({rot_joint("mHead", {{0.f, 10.f}})}, 1.f, 2), "older");
    const auto newer = clip(motion({rot_joint("mHead", {{0.f, 70.f}}), rot_joint("mNeck", {{0.f, 5.f}})}, 1.f, 4), "newer");
    a.ctrl().start(older);
    a.ctrl().start(newer);
    a.step(0.f);
    a.step(0.1f);  // both at weight 1 now (no ease)
    a.step(0.1f);
    EXPECT_TRUE(a.inst(newer.get())->evaluate);
    EXPECT_FALSE(a.inst(older.get())->evaluate);  // signature skip: idle this frame
    EXPECT_TRUE(a.ctrl().is_active(older.get()));
}

TEST(Controller, JointsKeepTheirLastPoseWhenNothingDrivesThem) {
    Avatar a;
    const auto c = clip(motion({rot_joint("mHead", {{0.f, 25.f}})}, 0.5f, 2));
    a.ctrl().start(c);
    a.step(0.f);
    for (int i = 0; i < 20; ++i) a.step(0.1f);
    EXPECT_FALSE(a.ctrl().is_active(c.get()));
    EXPECT_NEAR(z_angle_deg(a.local_rot("mHead")), 25.f, 1e-3f);
}

TEST(Controller, RestartWhileBlendingDeprecatesTheOldInstance) {
    Avatar a;
    const auto c = clip(motion({rot_joint("mHead", {{0.f, 25.f}})}, 3.f, 2, 1.f, 1.f, true, 0.f, 3.f));
    a.ctrl().start(c);
    a.step(0.f);
    a.step(0.2f);                 // easing in: weight < 1
    a.ctrl().start(c);            // deprecate + fresh instance
    ASSERT_EQ(a.ctrl().active().size(), 2u);
    EXPECT_TRUE(a.ctrl().active()[1]->deprecated);
    EXPECT_TRUE(a.ctrl().active()[1]->stopped);
    for (int i = 0; i < 30; ++i) a.step(0.1f);  // T = 3.2: fresh one active, old one gone
    ASSERT_EQ(a.ctrl().active().size(), 1u);
    EXPECT_FALSE(a.ctrl().active()[0]->deprecated);
    a.ctrl().start(c);  // full weight, never stopped: no restart
    EXPECT_EQ(a.ctrl().active().size(), 1u);
}

TEST(Controller, AdditiveMotionAddsOnTopOfTheBlend) {
    Avatar a;
    const auto base = clip(motion({rot_joint("mHead", {{0.f, 30.f}})}, 1.f, 2), "base");
    const auto add = clip(motion({rot_joint("mHead", {{0.f, 15.f}})}, 1.f, 4), "add");
    a.ctrl().start(base);
    StartOptions opt;
    opt.blend_type = BlendType::Additive;
    a.ctrl().start(add, opt);
    a.step(0.f);
    a.step(0.1f);
    EXPECT_NEAR(z_angle_deg(a.local_rot("mHead")), 45.f, 1e-3f);
}

TEST(Controller, EaseInResidualWhenANewMotionStartsDuringAnEaseOut) {
    Avatar a;
    // Duration 1, ease out 0.5: stop sent at 0.5. Start it again at T = 0.7 while it eases out.
    const auto c = clip(motion({rot_joint("mHead", {{0.f, 20.f}})}, 1.f, 2, 0.5f, 0.5f));
    a.ctrl().start(c);
    a.step(0.f);
    for (int i = 0; i < 7; ++i) a.step(0.1f);
    const float w_old = a.inst(c.get())->pose_weight;
    ASSERT_GT(w_old, 0.f);
    ASSERT_LT(w_old, 1.f);
    a.ctrl().start(c);  // the old instance is deprecated; the new one starts with residual 0
    const MotionInstance* fresh = a.inst(c.get());
    EXPECT_EQ(fresh->residual_weight, 0.f);
    a.step(0.1f);
    EXPECT_NEAR(fresh->pose_weight, cubic_step(0.1f / 0.5f), 1e-4f);
}

TEST(Controller, PelvisFixReturnsThePelvisToTheRoot) {
    Avatar a;
    MotionJoint pelvis;
    pelvis.name = "mPelvis";
    pelvis.joint = 0;
    pelvis.pos_keys = {{0.f, {0.f, 0.f, -0.5f}}};
    const auto sit = clip(motion({pelvis}, 0.5f, 2, 0.f, 0.2f));
    a.ctrl().start_pelvis_fix();
    a.ctrl().start(sit);
    a.step(0.f);
    a.step(0.1f);
    EXPECT_FLOAT_EQ(a.world.local_pose(a.e).positions[0].z, -0.5f);
    for (int i = 0; i < 20; ++i) a.step(0.1f);
    EXPECT_FLOAT_EQ(a.world.local_pose(a.e).positions[0].z, 0.f);
}

// LLMotionController::updateMotions' clock: a double frame clock advanced by each step, read
// as a float; the animation time adds the float difference of two readings (times the time
// factor). At 30 fps this differs from adding the float step, and decides on which side of an
// ease-out end a frame falls: a motion stopped at frame 60 with a 0.4 s ease-out is at weight 0
// (held, deactivated on the next frame) at frame 72 in the viewer.
TEST(Controller, AnimationTimeFollowsTheViewersFrameClock) {
    Avatar a;
    const float dt = static_cast<float>(1.0 / 30.0);
    double clock = 0.0;
    float prev = 0.f, viewer = 0.f, naive = 0.f;
    int differ = 0;
    a.step(0.f);
    for (int f = 1; f <= 300; ++f) {
        a.step(dt);
        clock += static_cast<double>(dt);
        const float cur = static_cast<float>(clock);
        viewer = viewer + (cur - prev);
        prev = cur;
        naive += dt;
        ASSERT_EQ(a.ctrl().anim_time(), viewer) << f;
        differ += naive != viewer;
    }
    EXPECT_GT(differ, 100);  // the two sums do part ways: the test tells them apart
    // The tie: stopped at T(60), ease-out 0.4 s, at frame 72 T == S + 0.4 exactly.
    Avatar b;
    const auto c = clip(motion({rot_joint("mHead", {{0.f, 0.f}, {5.f, 80.f}})}, 5.f, 2, 0.f, 0.4f));
    b.ctrl().start(c);
    b.step(0.f);
    for (int f = 1; f <= 60; ++f) b.step(dt);
    b.ctrl().stop(c.get());
    const float stop = b.inst(c.get())->stop_time;
    for (int f = 61; f <= 72; ++f) b.step(dt);
    ASSERT_EQ(b.ctrl().anim_time(), stop + 0.4f);
    ASSERT_NE(b.inst(c.get()), nullptr);
    EXPECT_EQ(b.inst(c.get())->pose_weight, 0.f);
}
