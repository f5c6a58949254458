// SPDX-License-Identifier: MIT
// Puppetry playback (spec §9.3): clock mapping, jitter buffers, interpolation, stale queues,
// joint expiry, what a silent stream leaves, ease, stop, the per-frame block limit, priority against keyframe motions
// and target solving.
#include <gtest/gtest.h>

#include <cmath>

#include "slanim/core/local_to_model.hpp"
#include "slanim/runtime/puppetry.hpp"
#include "slanim/runtime/world.hpp"
#include "test_util.hpp"

using namespace slanim;

namespace {

Quat z_rot(float deg) { return maya_q(0.f, 0.f, deg, EulerOrder::XYZ); }

PuppetryJointSample local_rot(const char* joint, Quat q) {
    PuppetryJointSample s;
    s.joint = test::skel().find(joint);
    s.flags = kPuppetLocalRot;
    s.rotation = q;
    return s;
}

/// Rotation angle between two unit quaternions (radians), precise for small angles.
float angle_between(Quat a, Quat b) {
    const Quat r = hamilton(conjugate(a), b);
    const float v = std::sqrt(r.x * r.x + r.y * r.y + r.z * r.z);
    return 2.f * std::atan2(v, std::fabs(r.w));
}

/// A world with one avatar and a puppetry runtime on an injected clock.
struct Fixture {
    World world;
    Entity avatar;
    std::shared_ptr<PuppetryRuntime> rt;
    double clock = 0.0;

    explicit Fixture(PuppetryTiming timing = {},
                     std::shared_ptr<const Skeleton> skeleton = Skeleton::default_skeleton()) {
        avatar = world.create_avatar(std::move(skeleton));
        rt = PuppetryRuntime::install(world, timing);
        rt->set_clock([this] { return clock; });
        EXPECT_TRUE(rt->attach(world, avatar));
    }
    PuppetryPlayback& pb() { return *rt->playback(avatar); }
    /// Advances the clock to t and steps the world.
    void step_to(double t) {
        const float dt = static_cast<float>(t - clock);
        clock = t;
        world.step(dt);
    }
    Quat local(const char* joint) {
        return world.local_pose(avatar).rotations[static_cast<std::size_t>(test::skel().find(joint))];
    }
};

}  // namespace

TEST(PuppetryStream, JitterBufferQueuesAtLocalTimePlusPeriodPlusJitter) {
    Fixture f;
    const int head = test::skel().find("mHead");
    const auto ev = local_rot("mHead", z_rot(10.f));
    // First event: remote 1000 ms arriving at local 5 s → offset 4 s, due 5 + 0.1 + 0.05.
    f.clock = 5.0;
    f.rt->receive_event(f.avatar, 1000, {&ev, 1});
    EXPECT_DOUBLE_EQ(f.pb().clock_offset_s(), 4.0);
    ASSERT_EQ(f.pb().queued(head), 1u);
    EXPECT_NEAR(f.pb().queued_time(head, 0), 5.15, 1e-6);
    EXPECT_FLOAT_EQ(f.pb().period_s(head), 0.1f);
    EXPECT_FLOAT_EQ(f.pb().jitter_s(head), 0.05f);
    // Second event 60 ms later on the sender, arriving 80 ms later here:
    // skew = 5.08 − 1.06 = 4.02, offset = 0.95·4 + 0.05·4.02 = 4.001;
    // p = 0.06: jitter = 0.9·0.05 + 0.1·|0.1 − 0.06| = 0.049, period = 0.9·0.1 + 0.1·0.06 = 0.096.
    f.clock = 5.08;
    f.rt->receive_event(f.avatar, 1060, {&ev, 1});
    EXPECT_NEAR(f.pb().clock_offset_s(), 4.001, 1e-9);
    EXPECT_NEAR(f.pb().jitter_s(head), 0.049f, 1e-6f);
    EXPECT_NEAR(f.pb().period_s(head), 0.096f, 1e-6f);
    ASSERT_EQ(f.pb().queued(head), 2u);
    EXPECT_NEAR(f.pb().queued_time(head, 1), 1.06 + 4.001 + 0.096 + 0.049, 1e-6);
}

TEST(PuppetryStream, ClockOffsetIsSmoothedWithWeightPoint05) {
    Fixture f;
    const auto ev = local_rot("mHead", z_rot(0.f));
    f.clock = 10.0;
    f.rt->receive_event(f.avatar, 0, {&ev, 1});  // offset 10
    double expected = 10.0;
    for (int k = 1; k <= 20; ++k) {  // the sender's clock now runs 1 s behind: skew 11
        f.clock = 10.0 + 0.05 * k;
        f.rt->receive_event(f.avatar, 50 * k - 1000, {&ev, 1});
        expected = 0.95 * expected + 0.05 * 11.0;
        EXPECT_NEAR(f.pb().clock_offset_s(), expected, 1e-6) << k;
    }
    EXPECT_GT(f.pb().clock_offset_s(), 10.5);
}

TEST(PuppetryStream, InterpolatesBetweenEventsAndAppliesAFutureFirstEventAsIs) {
    PuppetryTiming t;
    t.ease_in_s = 0.f;  // full weight at once: the joint shows the puppet value exactly
    Fixture f(t);
    const auto a = local_rot("mHead", z_rot(0.f));
    const auto b = local_rot("mHead", z_rot(40.f));
    f.clock = 1.0;
    f.rt->receive_event(f.avatar, 0, {&a, 1});    // due 1.15
    f.clock = 1.1;
    // offset 1.0 (skew 1.0); p = 0.1: period 0.1, jitter 0.9·0.05 = 0.045 → due 1.245.
    f.rt->receive_event(f.avatar, 100, {&b, 1});
    const int head = test::skel().find("mHead");
    ASSERT_NEAR(f.pb().queued_time(head, 0), 1.15, 1e-6);
    ASSERT_NEAR(f.pb().queued_time(head, 1), 1.245, 1e-6);

    f.step_to(1.12);  // before the first event: applied as is
    EXPECT_LT(angle_between(f.local("mHead"), z_rot(0.f)), 1e-4f);
    f.step_to(1.20);  // del = 0.05 / 0.095 → slerp to 40°·del
    EXPECT_LT(angle_between(f.local("mHead"), z_rot(40.f * 0.05f / 0.095f)), 1e-4f);
    EXPECT_EQ(f.pb().queued(head), 2u);
    f.step_to(1.30);  // past the last: the older event is popped, the last one holds
    EXPECT_EQ(f.pb().queued(head), 1u);
    EXPECT_LT(angle_between(f.local("mHead"), z_rot(40.f)), 1e-4f);
}

TEST(PuppetryStream, DifferentPositionMasksAreNotInterpolated) {
    PuppetryTiming t;
    t.ease_in_s = 0.f;
    Fixture f(t);
    PuppetryJointSample a = local_rot("mHead", z_rot(0.f));
    a.flags |= kPuppetLocalPos;
    a.position = {0.f, 0.f, 0.1f};
    PuppetryJointSample b = local_rot("mHead", z_rot(40.f));  // no position
    f.clock = 1.0;
    f.rt->receive_event(f.avatar, 0, {&a, 1});
    f.clock = 1.1;
    f.rt->receive_event(f.avatar, 100, {&b, 1});
    f.step_to(1.2);
    const auto head = static_cast<std::size_t>(test::skel().find("mHead"));
    // Rotation masks equal → slerped; position masks differ → A's position copied.
    EXPECT_LT(angle_between(f.local("mHead"), z_rot(40.f * 0.05f / 0.095f)), 1e-4f);
    EXPECT_FLOAT_EQ(f.world.local_pose(f.avatar).positions[head].z, 0.1f);
}

TEST(PuppetryStream, StaleQueueIsClearedAndThePosedJointExpiresOneFrameAtLowThenGoes) {
    PuppetryTiming t;
    t.ease_in_s = 0.f;
    Fixture f(t);
    const int head = test::skel().find("mHead");
    const auto h = local_rot("mHead", z_rot(30.f));
    f.clock = 0.0;
    f.rt->receive_event(f.avatar, 0, {&h, 1});  // head due at 0.15, then never again
    // The neck keeps streaming so the motion stays active.
    double now = 0.0;
    int ms = 0;
    bool saw_low = false, removed = false, cleared = false;
    double clear_time = -1.0, low_time = -1.0;
    while (now < 8.0) {
        now += 0.05;
        ms += 50;
        const auto n = local_rot("mNeck", z_rot(5.f));
        f.clock = now;
        f.rt->receive_event(f.avatar, ms, {&n, 1});
        f.step_to(now);
        if (!cleared && f.pb().queued(head) == 0) {
            cleared = true;
            clear_time = now;
            EXPECT_EQ(f.pb().stats().stale_clears, 1u);
        }
        const auto states = f.pb().states();
        const auto joints = f.pb().joints();
        for (std::size_t k = 0; k < joints.size(); ++k) {
            if (joints[k] != head) continue;
            if (states[k].priority == 0) {
                EXPECT_FALSE(saw_low) << "the LOW frame lasts one frame";
                saw_low = true;
                low_time = now;
                EXPECT_EQ(*states[k].rotation, Quat::identity());
            } else {
                EXPECT_EQ(states[k].priority, kPuppetryPriority);
            }
        }
        if (saw_low && !f.pb().posed(head)) {
            removed = true;
            break;
        }
    }
    ASSERT_TRUE(cleared);
    // The last event was due at 0.15: the queue is cleared once it is more than 3 s old.
    EXPECT_GT(clear_time, 3.15);
    EXPECT_LT(clear_time, 3.15 + 0.051);
    ASSERT_TRUE(saw_low);
    ASSERT_TRUE(removed);
    // Posed for the last time on the frame before the clear: expires 3 s later.
    EXPECT_NEAR(low_time, clear_time - 0.05 + 3.0, 0.051);
    EXPECT_EQ(f.pb().stats().joints_expired, 1u);
    EXPECT_TRUE(f.pb().active());  // the neck still streams
    EXPECT_TRUE(f.pb().posed(test::skel().find("mNeck")));
}

TEST(PuppetryStream, EasesInOverOneSecond) {
    Fixture f;
    const auto h = local_rot("mHead", z_rot(30.f));
    f.clock = 0.0;
    f.rt->receive_event(f.avatar, 0, {&h, 1});
    EXPECT_TRUE(f.pb().active());
    f.step_to(0.5);
    EXPECT_NEAR(f.pb().weight(), cubic_step(0.5f), 1e-6f);
    f.step_to(1.01);
    EXPECT_FLOAT_EQ(f.pb().weight(), 1.f);
}

// The viewer's puppet motion is never stopped by a silent stream (its INACTIVITY_TIMEOUT only
// moves a stop timestamp that the controller ignores while the motion is not marked stopped):
// the joint holds its last value while the queue replays it (3 s) and while the posed state
// lives (3 s more), then the expiry frame writes the identity rotation at LOW priority, the
// state leaves the pose, and nothing writes the joint again: it stays at identity (rest).
TEST(PuppetryStream, ASilentStreamHoldsTheLastPoseThenTheExpiryFrameResetsTheJoint) {
    Fixture f;
    const int head = test::skel().find("mHead");
    const Quat rest = test::skel().rest_rotations()[static_cast<std::size_t>(head)];
    ASSERT_LT(angle_between(rest, Quat::identity()), 1e-6f);
    const auto h = local_rot("mHead", z_rot(30.f));
    f.clock = 0.0;
    f.rt->receive_event(f.avatar, 0, {&h, 1});  // due 0.15, the only event
    double reset_at = -1.0;
    for (double t = 0.05; t < 8.0; t += 0.05) {
        f.step_to(t);
        const float to_puppet = angle_between(f.local("mHead"), z_rot(30.f));
        if (t < 6.0) {
            ASSERT_LT(to_puppet, 1e-4f) << "held at t = " << t;
            ASSERT_TRUE(f.pb().active()) << t;
            if (t > 1.01) {
                ASSERT_FLOAT_EQ(f.pb().weight(), 1.f) << t;
            }
        }
        if (reset_at < 0.0 && angle_between(f.local("mHead"), Quat::identity()) < 1e-6f) reset_at = t;
    }
    // Stale after 3 s past 0.15, posed until 3 s after the last frame that replayed it.
    EXPECT_GT(reset_at, 6.15);
    EXPECT_LT(reset_at, 6.15 + 0.11);
    EXPECT_EQ(f.pb().stats().stale_clears, 1u);
    EXPECT_EQ(f.pb().stats().joints_expired, 1u);
    EXPECT_FALSE(f.pb().active()) << "nothing queued or posed: the motion ended";
    EXPECT_TRUE(f.pb().states().empty());
    EXPECT_LT(angle_between(f.local("mHead"), Quat::identity()), 1e-6f) << "and the joint stays reset";
    // New data starts the motion again with a fresh ease-in.
    f.clock = 8.0;
    f.rt->receive_event(f.avatar, 8000, {&h, 1});
    f.step_to(8.25);
    EXPECT_NEAR(f.pb().weight(), cubic_step(0.25f), 1e-6f);
}

TEST(PuppetryStream, AfterTheExpiryAKeyframeMotionDrivesTheJointAgain) {
    PuppetryTiming t;
    t.ease_in_s = 0.f;
    Fixture f(t);
    auto clip = test::clip(test::motion({test::rot_joint("mHead", {{0.f, 50.f}, {2.f, 50.f}})}, 2.f, 3,
                                        0.f, 0.f, true, 0.f, 2.f));
    f.world.controller(f.avatar).start(clip);
    const auto h = local_rot("mHead", z_rot(-10.f));
    f.clock = 0.0;
    f.rt->receive_event(f.avatar, 0, {&h, 1});
    f.step_to(0.2);
    EXPECT_LT(angle_between(f.local("mHead"), z_rot(-10.f)), 1e-4f);  // priority 7 over 3
    for (double now = 0.25; now < 5.0; now += 0.05) f.step_to(now);
    EXPECT_LT(angle_between(f.local("mHead"), z_rot(-10.f)), 1e-4f);  // held
    for (double now = 5.0; now < 7.0; now += 0.05) f.step_to(now);
    EXPECT_LT(angle_between(f.local("mHead"), z_rot(50.f)), 2e-3f);  // the expiry frame's
    EXPECT_FALSE(f.pb().active());  // identity at LOW sits under the keyframe motion
}

TEST(PuppetryStream, StopEasesOutAndTheJointKeepsItsLastBlendedTransform) {
    Fixture f;
    const auto h = local_rot("mHead", z_rot(30.f));
    f.clock = 0.0;
    f.rt->receive_event(f.avatar, 0, {&h, 1});
    f.step_to(1.5);
    f.pb().stop(1.5);
    f.step_to(2.0);  // residual 1 × cubic_step(1 − 0.5)
    EXPECT_NEAR(f.pb().weight(), cubic_step(0.5f), 1e-6f);
    EXPECT_TRUE(f.pb().active());
    f.step_to(2.6);
    EXPECT_FALSE(f.pb().active());
    EXPECT_TRUE(f.pb().states().empty());
    // The sole contributor was copied at any weight (the blender's first-contributor rule), and
    // nothing writes the joint after the motion ended.
    EXPECT_LT(angle_between(f.local("mHead"), z_rot(30.f)), 1e-4f);
}

TEST(PuppetryStream, DataDuringEaseOutRestartsTheEaseInFromTheCurrentWeight) {
    Fixture f;
    const auto h = local_rot("mHead", z_rot(30.f));
    f.clock = 0.0;
    f.rt->receive_event(f.avatar, 0, {&h, 1});
    f.step_to(1.5);
    f.pb().stop(2.0);
    f.step_to(2.5);
    const float w = f.pb().weight();
    ASSERT_NEAR(w, 0.5f, 1e-6f);
    f.clock = 2.6;
    f.rt->receive_event(f.avatar, 2600, {&h, 1});
    f.step_to(3.1);  // ease-in from residual w: w + (1 − w)·cubic_step(0.5)
    EXPECT_NEAR(f.pb().weight(), w + (1.f - w) * cubic_step(0.5f), 1e-5f);
}

TEST(PuppetryStream, OnlyTheNewestFiveBlocksPerFrameAreProcessed) {
    Fixture f;
    const std::uint8_t garbage[3] = {1, 2, 3};
    for (int k = 0; k < 8; ++k) f.rt->receive_block(f.avatar, garbage);
    EXPECT_EQ(f.pb().stats().blocks_received, 8u);
    EXPECT_EQ(f.pb().stats().blocks_dropped, 3u);
    f.step_to(0.05);
    EXPECT_EQ(f.pb().stats().blocks_malformed, 5u);  // the 5 kept were decoded (and rejected)
    f.rt->receive_block(f.avatar, garbage);
    f.step_to(0.1);
    EXPECT_EQ(f.pb().stats().blocks_dropped, 3u);  // the limit is per frame
    EXPECT_EQ(f.pb().stats().blocks_malformed, 6u);
    EXPECT_FALSE(f.rt->receive_block(kNullEntity, garbage));
}

TEST(PuppetryStream, UnknownJointsAreDroppedAndCounted) {
    Fixture f;
    PuppetryJointSample s[2] = {local_rot("mHead", z_rot(1.f)), {}};
    s[1].joint = 5000;
    s[1].flags = kPuppetLocalRot;
    f.rt->receive_event(f.avatar, 0, s);
    EXPECT_EQ(f.pb().stats().samples_unknown, 1u);
    EXPECT_EQ(f.pb().stats().samples_queued, 1u);
}

TEST(PuppetryStream, Priority7BeatsAPriority6KeyframeMotionOnlyOnTheSharedJoint) {
    PuppetryTiming t;
    t.ease_in_s = 0.f;
    Fixture f(t);
    auto clip = test::clip(test::motion({test::rot_joint("mHead", {{0.f, 50.f}, {2.f, 50.f}}),
                                         test::rot_joint("mNeck", {{0.f, -25.f}, {2.f, -25.f}})},
                                        2.f, 6, 0.f, 0.f, true, 0.f, 2.f));
    f.world.controller(f.avatar).start(clip);
    f.step_to(0.1);
    EXPECT_LT(angle_between(f.local("mHead"), z_rot(50.f)), 2e-3f);
    const auto h = local_rot("mHead", z_rot(-10.f));
    f.clock = 0.1;
    f.rt->receive_event(f.avatar, 0, {&h, 1});
    f.step_to(0.5);
    EXPECT_LT(angle_between(f.local("mHead"), z_rot(-10.f)), 1e-4f);  // puppet wins
    EXPECT_LT(angle_between(f.local("mNeck"), z_rot(-25.f)), 2e-3f);  // keyframe pose kept
}

TEST(PuppetryStream, DuringEaseInTheKeyframeMotionFillsTheRemainingWeight) {
    Fixture f;  // ease-in 1 s
    auto clip = test::clip(test::motion({test::rot_joint("mHead", {{0.f, 0.f}, {4.f, 0.f}})}, 4.f,
                                        6, 0.f, 0.f, true, 0.f, 4.f));
    f.world.controller(f.avatar).start(clip);
    f.step_to(0.05);
    const auto h = local_rot("mHead", z_rot(40.f));
    f.clock = 0.05;
    f.rt->receive_event(f.avatar, 0, {&h, 1});
    f.step_to(0.55);  // weight cubic_step(0.5) = 0.5: half way between the two (nlerp)
    const float w = f.pb().weight();
    ASSERT_NEAR(w, 0.5f, 1e-6f);
    EXPECT_LT(angle_between(f.local("mHead"), ll_nlerp(w, z_rot(0.f), z_rot(40.f))), 1e-3f);
}

TEST(PuppetryStream, WristPositionTargetIsSolvedOnTheArmChain) {
    PuppetryTiming t;
    t.ease_in_s = 0.f;
    Fixture f(t);
    f.step_to(0.0);
    const auto& sk = test::skel();
    const int wrist = sk.find("mWristLeft");
    const float span = f.pb().arm_span();
    ASSERT_GT(span, 1.f);
    ASSERT_LT(span, 2.5f);
    // A reachable target in front of the chest, in normalised root-frame units.
    PuppetryJointSample s;
    s.joint = wrist;
    s.flags = kPuppetTargetPos;
    s.position = {0.35f, 0.25f, 0.5f};
    const Vec3 goal = s.position * (0.5f * span);
    const float before = length(f.world.model_pose(f.avatar).positions[static_cast<std::size_t>(wrist)] - goal);
    double now = 0.0;
    for (int k = 0; k < 10; ++k) {
        f.clock = now;
        f.rt->receive_event(f.avatar, k * 50, {&s, 1});
        now += 0.05;
        f.step_to(now);
    }
    // The end effector is the end of the wrist's bone (spec §9.6), not the wrist joint.
    const ModelPose& mp = f.world.model_pose(f.avatar);
    const Vec3 p = mp.positions[static_cast<std::size_t>(wrist)] +
                   rotate(sk.desc(wrist).end, mp.rotations[static_cast<std::size_t>(wrist)]);
    EXPECT_TRUE(is_finite(p));
    const float after = length(p - goal);
    EXPECT_LT(after, 0.5f * before);
    EXPECT_LT(after, 0.05f);
    EXPECT_GT(f.pb().stats().targets_solved, 0u);
    EXPECT_TRUE(f.pb().posed(sk.find("mElbowLeft")));
    EXPECT_TRUE(f.pb().posed(sk.find("mShoulderLeft")));
    EXPECT_TRUE(f.pb().posed(wrist));  // the end joint turns to put its bone end on the target
    // A target on the root has no chain to move it: ignored and counted.
    PuppetryJointSample root = s;
    root.joint = sk.pelvis();
    f.clock = now;
    f.rt->receive_event(f.avatar, 600, {&root, 1});
    f.step_to(now + 0.2);
    EXPECT_GT(f.pb().stats().targets_unsupported, 0u);
}

// The same target on a custom skeleton whose arm chain sits 80 bones deeper (the default bones
// with 80 spine bones of 1 cm between mSpine2 and mTorso; attachment points and volumes are left
// out to stay within 216 joints). The chain root's world transform used to stop after 64
// ancestors: the arm was solved 19 cm too low.
TEST(PuppetryStream, TargetsAreSolvedOnAChainAtAnyDepth) {
    constexpr int kFillers = 80;
    SkeletonDesc d;
    for (const JointDesc& b : default_skeleton_desc().bones) {
        if (b.name == "mTorso") {
            for (int i = 0; i < kFillers; ++i) {
                JointDesc f;
                f.name = "mDeep" + std::to_string(i);
                f.parent = i == 0 ? "mSpine2" : "mDeep" + std::to_string(i - 1);
                f.position = {0.f, 0.f, 0.01f};
                d.bones.push_back(f);
            }
            d.bones.push_back(b);
            d.bones.back().parent = "mDeep" + std::to_string(kFillers - 1);
        } else {
            d.bones.push_back(b);
        }
    }
    auto deep = Skeleton::build(d);
    ASSERT_TRUE(deep) << deep.error().describe();
    PuppetryTiming t;
    t.ease_in_s = 0.f;
    Fixture f(t, *deep);
    f.step_to(0.0);
    const Skeleton& sk = **deep;
    const int wrist = sk.find("mWristLeft");
    int depth = 0;
    for (int j = sk.find("mCollarLeft"); j >= 0; j = sk.parent(j)) ++depth;
    ASSERT_GT(depth, 64);
    const float span = f.pb().arm_span();
    ASSERT_GT(span, 1.f);
    // The reachable target of WristPositionTargetIsSolvedOnTheArmChain, raised with the arm.
    const Vec3 goal = Vec3{0.35f, 0.25f, 0.5f} * (0.5f * span) + Vec3{0.f, 0.f, kFillers * 0.01f};
    PuppetryJointSample s;
    s.joint = wrist;
    s.flags = kPuppetTargetPos;
    s.position = goal * (1.f / (0.5f * span));
    const float before = length(f.world.model_pose(f.avatar).positions[static_cast<std::size_t>(wrist)] - goal);
    double now = 0.0;
    for (int k = 0; k < 10; ++k) {
        f.clock = now;
        f.rt->receive_event(f.avatar, k * 50, {&s, 1});
        now += 0.05;
        f.step_to(now);
    }
    const ModelPose& mp = f.world.model_pose(f.avatar);
    const float after = length(mp.positions[static_cast<std::size_t>(wrist)] +
                               rotate(sk.desc(wrist).end, mp.rotations[static_cast<std::size_t>(wrist)]) - goal);
    EXPECT_GT(f.pb().stats().targets_solved, 0u);
    EXPECT_LT(after, 0.5f * before);
    EXPECT_LT(after, 0.05f);
}

namespace {

/// The model-space end of `joint`'s bone (joint position + its bone end rotated by the joint).
Vec3 bone_end(const World& w, Entity e, int joint) {
    const ModelPose& mp = w.model_pose(e);
    const auto j = static_cast<std::size_t>(joint);
    return mp.positions[j] + rotate(test::skel().desc(joint).end, mp.rotations[j]);
}

}  // namespace

// An elbow target (arm_wave.py of the viewer's puppetry framework): the chain LLIK::Solver
// builds runs elbow → shoulder → collar, hanging from the sub-base mChest; the end of the
// elbow's bone (the forearm's tip at the wrist) reaches the target within 1 mm.
TEST(PuppetryStream, ElbowTargetIsReachedWithinAMillimetreAtTheBoneEnd) {
    PuppetryTiming t;
    t.ease_in_s = 0.f;
    Fixture f(t);
    f.step_to(0.0);
    const auto& sk = test::skel();
    const int elbow = sk.find("mElbowLeft");
    const float span = f.pb().arm_span();
    const Vec3 rest_end = bone_end(f.world, f.avatar, elbow);
    const Vec3 chest_before = f.world.model_pose(f.avatar).positions[static_cast<std::size_t>(sk.find("mChest"))];
    const Vec3 goal = rest_end + Vec3{0.12f, -0.05f, 0.10f};  // forward, in, up: within reach
    PuppetryJointSample s;
    s.joint = elbow;
    s.flags = kPuppetTargetPos;
    s.position = goal * (1.f / (0.5f * span));  // the avatar stands at the origin, unrotated
    double now = 0.0;
    for (int k = 0; k < 10; ++k) {
        f.clock = now;
        f.rt->receive_event(f.avatar, k * 50, {&s, 1});
        now += 0.05;
        f.step_to(now);
    }
    EXPECT_LT(length(bone_end(f.world, f.avatar, elbow) - goal), 0.001f);
    EXPECT_EQ(f.pb().stats().targets_unsupported, 0u);
    EXPECT_TRUE(f.pb().posed(sk.find("mShoulderLeft")));
    EXPECT_TRUE(f.pb().posed(sk.find("mCollarLeft")));
    EXPECT_FALSE(f.pb().posed(sk.find("mChest")));  // the sub-base stays
    EXPECT_LT(length(f.world.model_pose(f.avatar).positions[static_cast<std::size_t>(sk.find("mChest"))] -
                     chest_before), 1e-6f);
}

// Hand-computed: a position and a rotation target on the wrist. The rotation sets the wrist's
// world rotation; the joint then sits at target − rotation·bone, so the bone's end is on the
// target.
TEST(PuppetryStream, WristPositionAndRotationTargetPutTheBoneEndOnTheTarget) {
    PuppetryTiming t;
    t.ease_in_s = 0.f;
    Fixture f(t);
    f.step_to(0.0);
    const auto& sk = test::skel();
    const int wrist = sk.find("mWristLeft");
    const float span = f.pb().arm_span();
    const Vec3 goal = bone_end(f.world, f.avatar, wrist) + Vec3{0.15f, -0.1f, 0.15f};
    const Quat rot = quat_from_axis_angle(0.5f, {0.f, 0.f, 1.f});
    PuppetryJointSample s;
    s.joint = wrist;
    s.flags = kPuppetTargetPos | kPuppetTargetRot;
    s.position = goal * (1.f / (0.5f * span));
    s.rotation = rot;
    double now = 0.0;
    for (int k = 0; k < 10; ++k) {
        f.clock = now;
        f.rt->receive_event(f.avatar, k * 50, {&s, 1});
        now += 0.05;
        f.step_to(now);
    }
    const ModelPose& mp = f.world.model_pose(f.avatar);
    const auto w = static_cast<std::size_t>(wrist);
    EXPECT_GT(std::fabs(dot(mp.rotations[w], rot)), 1.f - 1e-5f);
    const Vec3 expect_joint = goal - rotate(sk.desc(wrist).end, rot);
    EXPECT_LT(length(mp.positions[w] - expect_joint), 0.001f);
    EXPECT_LT(length(bone_end(f.world, f.avatar, wrist) - goal), 0.001f);
}

// Chains end below an ancestor that has its own position target: a finger target with a wrist
// target moves only the finger joints (the wrist's chain is solved first).
TEST(PuppetryStream, AChainEndsBelowATargetedAncestor) {
    PuppetryTiming t;
    t.ease_in_s = 0.f;
    Fixture f(t);
    f.step_to(0.0);
    const auto& sk = test::skel();
    const int wrist = sk.find("mWristLeft"), tip = sk.find("mHandIndex3Left");
    const float span = f.pb().arm_span();
    const Vec3 wgoal = bone_end(f.world, f.avatar, wrist) + Vec3{0.1f, -0.05f, 0.1f};
    std::array<PuppetryJointSample, 2> s{};
    s[0].joint = wrist;
    s[0].flags = kPuppetTargetPos;
    s[0].position = wgoal * (1.f / (0.5f * span));
    s[1].joint = tip;
    s[1].flags = kPuppetTargetPos;
    double now = 0.0;
    for (int k = 0; k < 10; ++k) {
        // The finger tip target: 2 cm beside the index tip's current end, recomputed as it moves.
        const Vec3 tgoal = bone_end(f.world, f.avatar, tip) + Vec3{0.f, 0.f, 0.02f};
        if (k == 0) s[1].position = tgoal * (1.f / (0.5f * span));
        f.clock = now;
        f.rt->receive_event(f.avatar, k * 50, s);
        now += 0.05;
        f.step_to(now);
    }
    EXPECT_LT(length(bone_end(f.world, f.avatar, wrist) - wgoal), 0.002f);
    EXPECT_TRUE(f.pb().posed(sk.find("mHandIndex1Left")));
    EXPECT_EQ(f.pb().stats().targets_unsupported, 0u);
}

// disable_constraint (DISABLE_CONSTRAINT, alone on the shoulder) lifts that joint's limit in the
// chains through it: a wrist target across the chest, which the shoulder's π/2 cone keeps out of
// reach, is then reached.
TEST(PuppetryStream, DisableConstraintLiftsTheJointsLimit) {
    const auto miss = [](bool disable) {
        PuppetryTiming t;
        t.ease_in_s = 0.f;
        Fixture f(t);
        f.step_to(0.0);
        const auto& sk = test::skel();
        const int wrist = sk.find("mWristLeft"), shoulder = sk.find("mShoulderLeft");
        const float span = f.pb().arm_span();
        const Vec3 sp = f.world.model_pose(f.avatar).positions[static_cast<std::size_t>(shoulder)];
        const Vec3 goal = sp + Vec3{0.f, -0.4f, 0.2f};
        std::array<PuppetryJointSample, 2> s{};
        s[0].joint = wrist;
        s[0].flags = kPuppetTargetPos;
        s[0].position = goal * (1.f / (0.5f * span));
        s[1].joint = shoulder;
        s[1].flags = kPuppetDisableConstraint;
        double now = 0.0;
        for (int k = 0; k < 10; ++k) {
            f.clock = now;
            f.rt->receive_event(f.avatar, k * 50, std::span(s.data(), disable ? 2u : 1u));
            now += 0.05;
            f.step_to(now);
        }
        return length(bone_end(f.world, f.avatar, wrist) - goal);
    };
    const float limited = miss(false), free = miss(true);
    EXPECT_GT(limited, 0.02f);
    EXPECT_LT(free, 0.002f);
}

TEST(PuppetryStream, DestroyedAvatarsAreForgotten) {
    Fixture f;
    const auto h = local_rot("mHead", z_rot(1.f));
    f.rt->receive_event(f.avatar, 0, {&h, 1});
    f.world.destroy(f.avatar);
    f.step_to(0.1);
    EXPECT_EQ(f.rt->playback(f.avatar), nullptr);
}
