// SPDX-License-Identifier: MIT
// LOD rules of the world: hidden avatars (updateMotionsMinimal), reduced update rates with the
// display interpolated toward a pose evaluated one update ahead, thresholds, off by default.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "slanim/runtime/crowd.hpp"
#include "slanim/runtime/lod_feature.hpp"
#include "slanim/runtime/world.hpp"
#include "test_util.hpp"

using namespace slanim;

namespace {

const std::shared_ptr<const Skeleton>& skeleton() {
    static const std::shared_ptr<const Skeleton> s = Skeleton::default_skeleton();
    return s;
}

// The demo mix without its constrained motion (constraints keep history, so a reduced rate
// changes their fix-up path; they are covered by the thread test in crowd_test.cpp).
std::vector<std::shared_ptr<const MotionClip>> clips() {
    std::vector<std::shared_ptr<const MotionClip>> out;
    for (auto& d : make_crowd_demo_motions(*skeleton()))
        if (d.motion.constraints.empty()) out.push_back(MotionClip::build(d.motion, *skeleton(), d.name));
    return out;
}

float max_angle(const LocalPose& a, const LocalPose& b) {
    float worst = 0.f;
    for (std::size_t j = 0; j < a.rotations.size(); ++j) {
        const float d = std::min(1.f, std::fabs(dot(a.rotations[j], b.rotations[j])));
        worst = std::max(worst, 2.f * std::acos(d));
    }
    return worst;
}

float max_offset(const LocalPose& a, const LocalPose& b) {
    float worst = 0.f;
    for (std::size_t j = 0; j < a.positions.size(); ++j) worst = std::max(worst, length(a.positions[j] - b.positions[j]));
    return worst;
}

}  // namespace

TEST(Lod, OffByDefaultSoSmallAvatarsPlayExactly) {
    auto w_owner = World::create(WorldOptions{1, 8}).value();
    World& w = *w_owner;
    EXPECT_FALSE(LodFeature::of(w).settings().enabled);
    const auto cs = clips();
    const auto a = populate_crowd(w, skeleton(), cs, 2);
    w.controller(a[1]).set_pixel_area(10.f);  // tiny on screen, but LOD is off
    auto ref_owner = World::create(WorldOptions{1, 8}).value();
    World& ref = *ref_owner;
    const auto r = populate_crowd(ref, skeleton(), cs, 2);
    ref.controller(r[1]).set_pixel_area(10.f);
    for (int f = 0; f < 90; ++f) {
        w.step(1.f / 60.f);
        ref.step(1.f / 60.f);
        EXPECT_EQ(LodFeature::of(w).update_period_at(1), 1);
        const ModelPose& p = w.model_pose(a[1]);
        const ModelPose& q = ref.model_pose(r[1]);
        ASSERT_EQ(std::memcmp(p.rotations.data(), q.rotations.data(), p.rotations.size_bytes()), 0) << f;
    }
}

TEST(Lod, PixelAreaThresholdsChooseTheUpdatePeriod) {
    auto w_owner = World::create(WorldOptions{1, 8}).value();
    World& w = *w_owner;
    LodSettings lod;
    lod.enabled = true;
    LodFeature::of(w).set_settings(lod);
    const auto cs = clips();
    const auto a = populate_crowd(w, skeleton(), cs, 4);
    const float areas[] = {1e6f, 10000.f, 9999.f, 1999.f};
    const int expected[] = {1, 1, 2, 4};
    for (int k = 0; k < 4; ++k) w.controller(a[k]).set_pixel_area(areas[k]);
    w.step(1.f / 60.f);
    for (int k = 0; k < 4; ++k) EXPECT_EQ(LodFeature::of(w).update_period_at(static_cast<std::size_t>(k)), expected[k]) << areas[k];
    LodFeature::of(w).set_visible(a[0], false);
    w.step(1.f / 60.f);
    EXPECT_EQ(LodFeature::of(w).update_period_at(0), 0);
    EXPECT_FALSE(LodFeature::of(w).visible(a[0]));
    EXPECT_FALSE(LodFeature::of(w).set_visible(kNullEntity, true));
}

// A reduced-rate avatar shows, every Nth step, the pose a full-rate avatar has at the same time
// (the clock is continuous: no SL-763 speed-up), and in between a pose on the way to it.
TEST(Lod, ReducedRatesMeetTheFullRatePoseAtEveryUpdate) {
    for (const float area : {5000.f, 100.f}) {
        const int period = area >= 2000.f ? 2 : 4;
        auto w_owner = World::create(WorldOptions{1, 8}).value();
        auto ref_owner = World::create(WorldOptions{1, 8}).value();
        World& w = *w_owner;
        World& ref = *ref_owner;
        LodSettings lod;
        lod.enabled = true;
        LodFeature::of(w).set_settings(lod);
        const auto cs = clips();
        const Entity a = populate_crowd(w, skeleton(), cs, 1)[0];
        const Entity r = populate_crowd(ref, skeleton(), cs, 1)[0];
        w.controller(a).set_pixel_area(area);
        float worst_between = 0.f;
        for (int f = 1; f <= 120; ++f) {
            w.step(1.f / 60.f);
            ref.step(1.f / 60.f);
            const LocalPose& p = w.local_pose(a);
            const LocalPose& q = ref.local_pose(r);
            if (f % period == 0) {
                EXPECT_LT(max_angle(p, q), 2e-3f) << "area " << area << " step " << f;
                EXPECT_LT(max_offset(p, q), 1e-4f) << "area " << area << " step " << f;
                EXPECT_NEAR(w.controller(a).anim_time(), ref.controller(r).anim_time(), 1e-4f);
            } else if (f > period) {
                // (The first interval starts from the rest pose, where the full-rate avatar
                // already shows its motions' first-contributor rotations: a larger gap.)
                worst_between = std::max(worst_between, max_angle(p, q));
            }
            for (const Quat& qq : p.rotations) ASSERT_NEAR(dot(qq, qq), 1.f, 1e-4f);
        }
        // Between updates the display is close to, but not exactly at, the full-rate pose.
        EXPECT_GT(worst_between, 0.f) << area;
        EXPECT_LT(worst_between, 0.1f) << area;
    }
}

// updateMotionsMinimal: a hidden avatar's clock stands still, its stopped motions end at once,
// nothing is evaluated (the pose stays as it was), and it resumes where it was when shown.
TEST(Lod, HiddenAvatarsOnlyKeepTheirBooks) {
    auto w_owner = World::create(WorldOptions{2, 8}).value();
    World& w = *w_owner;
    const auto cs = clips();
    const Entity a = populate_crowd(w, skeleton(), cs, 1)[0];
    for (int f = 0; f < 30; ++f) w.step(1.f / 60.f);
    w.controller(a).stop(cs[0].get());  // easing out
    w.step(1.f / 60.f);
    const float t = w.controller(a).anim_time();
    const ModelPoseCopy before(w.model_pose(a));
    ASSERT_EQ(w.controller(a).active().size(), cs.size());
    LodFeature::of(w).set_visible(a, false);
    for (int f = 0; f < 20; ++f) w.step(1.f / 60.f);
    EXPECT_EQ(w.controller(a).anim_time(), t);
    EXPECT_EQ(w.controller(a).active().size(), cs.size() - 1);  // the stopped one deactivated
    EXPECT_FALSE(w.controller(a).is_active(cs[0].get()));
    const ModelPose& now = w.model_pose(a);
    EXPECT_EQ(std::memcmp(now.rotations.data(), before.rotations.data(), now.rotations.size_bytes()), 0);
    LodFeature::of(w).set_visible(a, true);
    w.step(1.f / 60.f);
    EXPECT_NEAR(w.controller(a).anim_time(), t + 1.f / 60.f, 1e-6f);
    EXPECT_NE(std::memcmp(w.model_pose(a).rotations.data(), before.rotations.data(), now.rotations.size_bytes()), 0);
}

// Changing rates mid-interpolation waits for the current target: the clock never drifts.
TEST(Lod, ChangingRatesKeepsTheClock) {
    auto w_owner = World::create(WorldOptions{1, 8}).value();
        auto ref_owner = World::create(WorldOptions{1, 8}).value();
        World& w = *w_owner;
        World& ref = *ref_owner;
    LodSettings lod;
    lod.enabled = true;
    LodFeature::of(w).set_settings(lod);
    const auto cs = clips();
    const Entity a = populate_crowd(w, skeleton(), cs, 1)[0];
    const Entity r = populate_crowd(ref, skeleton(), cs, 1)[0];
    const float areas[] = {100.f, 5000.f, 1e6f, 100.f, 1e6f};
    for (int f = 1; f <= 200; ++f) {
        w.controller(a).set_pixel_area(areas[(f / 7) % 5]);
        const float dt = (f % 3 == 0) ? 1.f / 30.f : 1.f / 60.f;  // uneven steps
        w.step(dt);
        ref.step(dt);
    }
    // Finish the interpolation at full rate, then both clocks agree.
    w.controller(a).set_pixel_area(1e6f);
    for (int f = 0; f < 8; ++f) {
        w.step(1.f / 60.f);
        ref.step(1.f / 60.f);
    }
    EXPECT_EQ(LodFeature::of(w).update_period_at(0), 1);
    EXPECT_NEAR(w.controller(a).anim_time(), ref.controller(r).anim_time(), 1e-4f);
    EXPECT_LT(max_angle(w.local_pose(a), ref.local_pose(r)), 2e-3f);
}
