// SPDX-License-Identifier: MIT
// Curve sampling timelines (spec §2.1) and motion time → curve time (§2.2).
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "slanim/core/sampling.hpp"
#include "test_util.hpp"

using namespace slanim;
using namespace slanim::test;

namespace {

struct Sampler {
    std::shared_ptr<const MotionClip> c;
    SamplingCursor cur;
    std::vector<Quat> rot;
    std::vector<Vec3> pos;
    explicit Sampler(const Motion& m) : c(clip(m)) {
        cur.reset(*c);
        rot.assign(c->tracks().size(), Quat{});
        pos.assign(c->tracks().size(), Vec3{});
    }
    void at(float t) {
        SamplingJob job{c.get(), t, &cur, rot, pos};
        ASSERT_TRUE(job.run());
    }
};

}  // namespace

//  keys:      0.5 (10°)       1.0 (50°)          2.0 (90°)
//  t:   0 ----[hold 10°]-----*----nlerp----------*---- hold 90° ---->
TEST(Sampling, HoldsEndsHitsKeysAndInterpolates) {
    Sampler s(motion({rot_joint("mHead", {{0.5f, 10.f}, {1.f, 50.f}, {2.f, 90.f}})}, 3.f));
    s.at(0.f);
    EXPECT_NEAR(z_angle_deg(s.rot[0]), 10.f, 1e-4f);  // before the first key: first key held
    s.at(1.f);
    EXPECT_EQ(s.rot[0], maya_q(0, 0, 50.f, EulerOrder::XYZ));  // exact hit: the key itself
    s.at(1.5f);
    EXPECT_EQ(s.rot[0], ll_nlerp(0.5f, maya_q(0, 0, 50.f, EulerOrder::XYZ),
                                 maya_q(0, 0, 90.f, EulerOrder::XYZ)));
    s.at(2.9f);
    EXPECT_EQ(s.rot[0], maya_q(0, 0, 90.f, EulerOrder::XYZ));  // after the last key: held
}

TEST(Sampling, PositionsLerpAndOnlyUsedComponentsAreWritten) {
    MotionJoint j;
    j.name = "mPelvis";
    j.joint = 0;
    j.pos_keys = {{0.f, {0.f, 0.f, 0.f}}, {1.f, {1.f, -2.f, 0.5f}}};
    Sampler s(motion({j}, 1.f));
    s.rot[0] = Quat{0.1f, 0.2f, 0.3f, 0.4f};  // sentinel: no rotation keys, so untouched
    s.at(0.25f);
    EXPECT_EQ(s.pos[0], (Vec3{0.25f, -0.5f, 0.125f}));
    EXPECT_EQ(s.rot[0], (Quat{0.1f, 0.2f, 0.3f, 0.4f}));
    EXPECT_EQ(s.c->tracks()[0].usage, kUsagePos);
}

TEST(Sampling, CursorMatchesTheViewersMapLookupForwardBackwardAndRandom) {
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> angle(-170.f, 170.f), time(-0.5f, 5.5f);
    std::vector<std::pair<float, float>> keys;
    std::map<float, Quat> ref;
    for (int k = 0; k < 40; ++k) {
        const float t = static_cast<float>(k) * 0.125f;
        const float a = angle(rng);
        keys.push_back({t, a});
        ref[t] = maya_q(0, 0, a, EulerOrder::XYZ);
    }
    Sampler s(motion({rot_joint("mChest", keys)}, 5.f));
    for (float t = 0.f; t < 5.5f; t += 1.f / 30.f) {  // forward playback
        s.at(t);
        ASSERT_EQ(s.rot[0], viewer_rot(ref, t)) << "t=" << t;
    }
    for (float t = 5.f; t > -0.2f; t -= 0.07f) {  // backwards
        s.at(t);
        ASSERT_EQ(s.rot[0], viewer_rot(ref, t)) << "t=" << t;
    }
    for (int i = 0; i < 500; ++i) {  // random seeks
        const float t = time(rng);
        s.at(t);
        ASSERT_EQ(s.rot[0], viewer_rot(ref, t)) << "t=" << t;
    }
}

TEST(Sampling, JobValidation) {
    const auto c = clip(motion({rot_joint("mHead", {{0.f, 0.f}})}, 1.f));
    SamplingCursor cur;
    std::vector<Quat> r(1);
    std::vector<Vec3> p(1);
    SamplingJob job{c.get(), 0.f, &cur, r, p};
    EXPECT_FALSE(job.validate());  // cursor not reset for this clip
    cur.reset(*c);
    EXPECT_TRUE(job.validate());
    job.rotations = {};
    EXPECT_FALSE(job.validate());
    EXPECT_FALSE(job.run());
}

// Looping (§2.2): loop_in 1, loop_out 3, duration 4.
//   t: 0 ... 1 ......... 3 | 3.5 → 1.5 | 5 → 1 (fmod wraps) ...
TEST(CurveTime, LoopMapping) {
    const auto c = clip(motion({rot_joint("mHead", {{0.f, 0.f}})}, 4.f, 2, 0, 0, true, 1.f, 3.f));
    LoopState st;
    bool alive = false;
    EXPECT_EQ(motion_time_to_curve_time(*c, 0.5f, false, st, alive), 0.5f);  // first pass from 0
    EXPECT_TRUE(alive);
    EXPECT_EQ(motion_time_to_curve_time(*c, 3.5f, false, st, alive), 1.5f);
    EXPECT_EQ(motion_time_to_curve_time(*c, 5.f, false, st, alive), 1.f);
    // Stopped: runs forward past loop_out to the end, then holds at the duration.
    EXPECT_FLOAT_EQ(motion_time_to_curve_time(*c, 6.f, true, st, alive), 2.f);
    EXPECT_FLOAT_EQ(motion_time_to_curve_time(*c, 9.f, true, st, alive), 4.f);
    EXPECT_TRUE(alive);
    EXPECT_EQ(motion_time_to_curve_time(*c, -1.f, false, st, alive), 0.f);  // clamped at 0
}

TEST(CurveTime, ZeroLengthLoopAndZeroDurationAndNonLooping) {
    const auto same = clip(motion({rot_joint("mHead", {{0.f, 0.f}})}, 4.f, 2, 0, 0, true, 2.f, 2.f));
    LoopState st;
    bool alive = false;
    EXPECT_EQ(motion_time_to_curve_time(*same, 3.f, false, st, alive), 2.f);
    const auto zero = clip(motion({rot_joint("mHead", {{0.f, 0.f}})}, 0.f, 2, 0, 0, true));
    EXPECT_EQ(motion_time_to_curve_time(*zero, 3.f, false, st, alive), 0.f);
    EXPECT_TRUE(alive);
    const auto once = clip(motion({rot_joint("mHead", {{0.f, 0.f}})}, 1.f));
    EXPECT_EQ(motion_time_to_curve_time(*once, 1.5f, false, st, alive), 1.5f);  // not clamped
    EXPECT_FALSE(alive);  // onUpdate returns false past the duration
}

TEST(Clip, SignaturesAndPriorityResolution) {
    auto head = rot_joint("mHead", {{0.f, 0.f}}, -1);
    auto neck = rot_joint("mNeck", {{0.f, 0.f}}, 5);
    MotionJoint pelvis;
    pelvis.name = "mPelvis";
    pelvis.joint = 0;
    pelvis.priority = 9;  // > 6: clamped
    pelvis.pos_keys = {{0.f, {}}};
    const auto c = clip(motion({head, neck, pelvis}, 1.f, 3));
    const auto& s = skel();
    EXPECT_EQ(c->signature(1)[s.joint_num(s.find("mHead"))], 0x0F);  // base 3 → 0xFF >> 4
    EXPECT_EQ(c->signature(1)[s.joint_num(s.find("mNeck"))], 0x3F);  // 5 → 0xFF >> 2
    EXPECT_EQ(c->signature(0)[s.joint_num(s.find("mNeck"))], 0x00);  // no position keys
    EXPECT_EQ(c->signature(0)[0], 0x7F);                              // clamped to 6
    // Tracks are in joint order (the pelvis, joint 0, first) and the shape follows them.
    ASSERT_EQ(c->tracks()[0].joint, 0);
    EXPECT_EQ(c->tracks()[0].priority, 6);
    for (std::size_t k = 1; k < c->tracks().size(); ++k) EXPECT_LT(c->tracks()[k - 1].joint, c->tracks()[k].joint);
    ASSERT_EQ(c->layer_shape().size(), c->tracks().size());
    for (std::size_t k = 0; k < c->tracks().size(); ++k) {
        EXPECT_EQ(c->layer_shape().joints[k], c->tracks()[k].joint);
        EXPECT_EQ(c->layer_shape().priorities[k], c->tracks()[k].priority);
        EXPECT_EQ(c->layer_shape().usages[k], c->tracks()[k].usage);
    }
}
