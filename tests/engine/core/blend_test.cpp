// SPDX-License-Identifier: MIT
// LLJointStateBlender rules (spec §3.4).
#include <gtest/gtest.h>

#include "slanim/core/blend.hpp"
#include "slanim/core/clip.hpp"

using namespace slanim;

namespace {

struct Fixture {
    PoseBlender b;
    std::vector<Vec3> pos, scale;
    std::vector<Quat> rot;
    Fixture() : pos(1, Vec3{9.f, 9.f, 9.f}), scale(1, Vec3{1.f, 1.f, 1.f}), rot(1, Quat::identity()) {
        b.resize(1);
    }
    void apply() { b.blend_and_apply({pos, rot, scale}); }
};

JointStateRef state(const Vec3* p, float w, int prio, bool additive = false, const Quat* r = nullptr) {
    JointStateRef s;
    s.position = p;
    s.rotation = r;
    s.weight = w;
    s.priority = static_cast<std::int8_t>(prio);
    s.usage = static_cast<std::uint8_t>((p ? kUsagePos : 0) | (r ? kUsageRot : 0));
    s.additive = additive;
    return s;
}

}  // namespace

TEST(Blend, FirstContributorIsCopiedAtFullStrength) {
    Fixture f;
    const Vec3 a{1.f, 2.f, 3.f};
    f.b.add(0, state(&a, 0.2f, 3));
    f.apply();
    EXPECT_EQ(f.pos[0], a);  // weight 0.2 alone still drives the joint fully
}

TEST(Blend, CapacityLimitedWeightedAverage) {
    Fixture f;
    const Vec3 high{1.f, 0.f, 0.f}, low{0.f, 1.f, 0.f}, lower{0.f, 0.f, 1.f};
    f.b.add(0, state(&low, 1.f, 2));
    f.b.add(0, state(&high, 0.3f, 3));  // sorted before `low`
    f.b.add(0, state(&lower, 1.f, 1));  // capacity already full: contributes nothing
    f.apply();
    // sum 0.3 then min(1, 1.3) = 1: blended = lerp(low, high, 0.3 / 1)
    EXPECT_EQ(f.pos[0], lerp(low, high, 0.3f));
}

TEST(Blend, ZeroWeightStatesAreSkippedAndUntouchedJointsKeepTheirPose) {
    Fixture f;
    const Vec3 a{1.f, 2.f, 3.f};
    f.b.add(0, state(&a, 0.f, 3));
    f.apply();
    EXPECT_EQ(f.pos[0], (Vec3{9.f, 9.f, 9.f}));
    f.apply();  // nothing queued
    EXPECT_EQ(f.pos[0], (Vec3{9.f, 9.f, 9.f}));
}

TEST(Blend, SixSlotsDescendingPriorityNewestFirstOnTies) {
    Fixture f;
    Vec3 v[8];
    for (int i = 0; i < 8; ++i) v[i] = Vec3{static_cast<float>(i), 0.f, 0.f};
    EXPECT_TRUE(f.b.add(0, state(&v[0], 1.f, 2)));  // newest of priority 2
    EXPECT_TRUE(f.b.add(0, state(&v[1], 1.f, 2)));  // older, same priority: goes after
    EXPECT_TRUE(f.b.add(0, state(&v[2], 1.f, 4)));
    EXPECT_TRUE(f.b.add(0, state(&v[3], 1.f, 1)));
    EXPECT_TRUE(f.b.add(0, state(&v[4], 1.f, 3)));
    EXPECT_TRUE(f.b.add(0, state(&v[5], 1.f, 0)));
    EXPECT_EQ(f.b.count(0), 6);
    EXPECT_FALSE(f.b.add(0, state(&v[6], 1.f, 0)));  // all six ≥ 0: dropped
    EXPECT_TRUE(f.b.add(0, state(&v[7], 1.f, 5)));   // pushes the lowest (v5) out
    const int expect[6] = {7, 2, 4, 0, 1, 3};
    for (int s = 0; s < 6; ++s) EXPECT_EQ(f.b.slot(0, s).position, &v[expect[s]]) << s;
    f.apply();
    EXPECT_EQ(f.pos[0], v[7]);
}

TEST(Blend, AdditiveAfterAFullOverrideAddsNothingAndRotatesFirst) {
    Fixture f;
    const Vec3 base{1.f, 0.f, 0.f}, add{0.f, 0.f, 5.f};
    f.b.add(0, state(&base, 1.f, 4));
    f.b.add(0, state(&add, 1.f, 2, true));  // after a full-weight state: w' = min(1, 1+1) − 1 = 0
    f.apply();
    EXPECT_EQ(f.pos[0], base);

    Fixture g;
    const Quat base_rot = maya_q(0, 0, 30, EulerOrder::XYZ), add_rot = maya_q(20, 0, 0, EulerOrder::XYZ);
    g.b.add(0, state(nullptr, 1.f, 5, true, &add_rot));  // additive first (higher priority)
    g.b.add(0, state(nullptr, 0.5f, 3, false, &base_rot));
    g.apply();
    const Quat added = ll_mul(ll_nlerp(1.f, Quat::identity(), add_rot), Quat::identity());
    EXPECT_EQ(g.rot[0], ll_mul(added, base_rot));
}
