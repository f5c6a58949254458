// SPDX-License-Identifier: MIT
// Custom motions (custom_motion.hpp) and the viewer's procedural motions built on them
// (procedural.hpp; llheadrotmotion.cpp, llvoavatar.cpp): hand-computed cases.
#include <gtest/gtest.h>

#include <cmath>
#include <array>
#include <cstring>
#include <vector>

#include "slanim/runtime/procedural_feature.hpp"
#include "slanim/runtime/world.hpp"
#include "test_util.hpp"

using namespace slanim;
using namespace slanim::test;

namespace {

constexpr float kDeg = 0.01745329251994329577f;

struct Avatar {
    std::unique_ptr<World> world_owner = World::create(WorldOptions{1, 8}).value();
    World& world = *world_owner;
    Entity e;
    Avatar() : e(world.create_avatar(Skeleton::default_skeleton())) {}
    MotionController& ctrl() { return world.controller(e); }
    int joint(const char* name) const { return skel().find(name); }
    Quat local_rot(const char* name) { return world.local_pose(e).rotations[static_cast<std::size_t>(joint(name))]; }
    Vec3 model_pos(const char* name) const { return world.model_pose(e).positions[static_cast<std::size_t>(joint(name))]; }
    Quat model_rot(const char* name) const { return world.model_pose(e).rotations[static_cast<std::size_t>(joint(name))]; }
    const MotionInstance* inst(const MotionClip* c) {
        for (const auto& m : ctrl().active())
            if (m->clip.get() == c && !m->deprecated) return m.get();
        return nullptr;
    }
};

// Angle of a rotation about one axis (x, y or z component), radians.
float angle_about(Quat q, int axis) {
    const float c = axis == 0 ? q.x : axis == 1 ? q.y : q.z;
    return 2.f * std::atan2(c, q.w);
}
// Yaw of the direction a rotation turns X (forward) to.
float heading(Quat q) {
    const Vec3 f = rotate({1.f, 0.f, 0.f}, q);
    return std::atan2(f.y, f.x);
}
// nlerp(t, identity, rotation of theta about one axis) is a rotation about that axis by this.
float nlerp_angle(float t, float theta) {
    return 2.f * std::atan2(t * std::sin(theta / 2.f), (1.f - t) + t * std::cos(theta / 2.f));
}

// A custom motion writing fixed rotations (z angle) and counting its calls.
struct FixedMotion : CustomMotion {
    float z_deg = 0.f;
    int* updates = nullptr;
    int* deactivations = nullptr;
    float stop_after = -1.f;  // update returns false from this motion time on
    bool update(const CustomMotionContext& ctx, CustomMotionStates& s) override {
        if (updates) ++*updates;
        for (Quat& q : s.rotations) q = maya_q(0.f, 0.f, z_deg, EulerOrder::XYZ);
        return !(stop_after >= 0.f && ctx.time >= stop_after);
    }
    void on_deactivate() override {
        if (deactivations) ++*deactivations;
    }
};

struct FixedSetup {
    float z_deg = 0.f;
    int updates = 0, deactivations = 0, made = 0;
    float stop_after = -1.f;
};

std::shared_ptr<const CustomMotionType> fixed_type(FixedSetup& setup, std::vector<CustomJoint> joints, int priority,
                                                   BlendType blend = BlendType::Normal, float ease_in = 0.f,
                                                   float ease_out = 0.f) {
    CustomMotionSpec spec;
    spec.joints = std::move(joints);
    spec.priority = priority;
    spec.blend_type = blend;
    spec.ease_in = ease_in;
    spec.ease_out = ease_out;
    auto r = CustomMotionType::create(spec, skel(), [&setup](std::uint64_t) {
        auto m = std::make_unique<FixedMotion>();
        m->z_deg = setup.z_deg;
        m->updates = &setup.updates;
        m->deactivations = &setup.deactivations;
        m->stop_after = setup.stop_after;
        ++setup.made;
        return m;
    }, "fixed");
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().describe());
    return r.ok() ? r.value() : nullptr;
}

CustomJoint rot(const char* name, int priority = -1) { return {skel().find(name), kUsageRot, priority}; }

}  // namespace

// ---------------------------------------------------------------------------------------------
// Custom motions
// ---------------------------------------------------------------------------------------------

// Keyframe motion: mHead 40°, mNeck 20° at priority 2. A custom motion at priority 3 on mHead
// (10°) wins there and leaves mNeck alone; one at priority 1 is fully covered by the newer
// keyframe motion at weight 1, so the joint-signature test leaves it idle (never updated).
TEST(CustomMotion, HigherPriorityOverridesAKeyframeMotionOnItsJointsOnly) {
    Avatar a;
    FixedSetup high{10.f}, low{-30.f};
    const auto t_high = fixed_type(high, {rot("mHead")}, 3);
    const auto t_low = fixed_type(low, {rot("mHead")}, 1);
    ASSERT_TRUE(a.ctrl().start_custom(t_low));
    const auto kf = clip(motion({rot_joint("mHead", {{0.f, 40.f}}), rot_joint("mNeck", {{0.f, 20.f}})}, 1.f, 2, 0.f, 0.f,
                                true, 0.f, 1.f));
    a.ctrl().start(kf);
    a.world.step(0.1f);  // weight 0 → 1: evaluated once
    a.world.step(0.1f);
    a.world.step(0.1f);
    EXPECT_NEAR(z_angle_deg(a.local_rot("mHead")), 40.f, 1e-4f);
    EXPECT_EQ(low.updates, 1);  // then idle: covered by the newer priority-2 motion
    ASSERT_TRUE(a.ctrl().start_custom(t_high));
    a.world.step(0.1f);
    EXPECT_NEAR(z_angle_deg(a.local_rot("mHead")), 10.f, 1e-4f);
    EXPECT_NEAR(z_angle_deg(a.local_rot("mNeck")), 20.f, 1e-4f);
    EXPECT_EQ(high.updates, 1);
    EXPECT_EQ(low.updates, 1);
}

// ADDITIVE: rotation = added · blended. An additive state in a slot above a full-weight
// regular state adds its whole rotation (40° + 10°); below it, the capacity left is 0.
TEST(CustomMotion, AdditiveMotionAddsOnTopOfTheBlend) {
    for (int priority : {3, 1}) {
        Avatar a;
        FixedSetup add{10.f};
        const auto kf = clip(motion({rot_joint("mHead", {{0.f, 40.f}})}, 1.f, 2, 0.f, 0.f, true, 0.f, 1.f));
        a.ctrl().start(kf);
        ASSERT_TRUE(a.ctrl().start_custom(fixed_type(add, {rot("mHead")}, priority, BlendType::Additive)));
        a.world.step(0.1f);
        a.world.step(0.1f);
        EXPECT_NEAR(z_angle_deg(a.local_rot("mHead")), priority == 3 ? 50.f : 40.f, 1e-4f) << priority;
        EXPECT_GE(add.updates, 1);  // additive motions are evaluated in their own pass
    }
}

// Ease in 1 s, ease out 0.5 s over a keyframe motion at 40° (lower priority): the custom motion
// (0°) takes slot 0 with weight w, the keyframe motion fills the rest, so the head is at
// nlerp(w, 40°, 0°). w(T) = cubic_step(T) while easing in: 0.15625 at 0.25 s, 0.5 at 0.5 s;
// stopped at T = 2: cubic_step(1 − (T − 2)/0.5), 0.5 at 2.25 s, 0 at 2.5 s, then deactivated.
TEST(CustomMotion, EasesInAndOutWithTheControllerWeights) {
    Avatar a;
    FixedSetup s{0.f};
    const auto kf = clip(motion({rot_joint("mHead", {{0.f, 40.f}})}, 1.f, 1, 0.f, 0.f, true, 0.f, 1.f));
    a.ctrl().start(kf);
    a.world.step(0.f);
    const auto type = fixed_type(s, {rot("mHead")}, 3, BlendType::Normal, 1.f, 0.5f);
    ASSERT_TRUE(a.ctrl().start_custom(type));
    const auto expect_head = [&](float w) {
        const float expected = nlerp_angle(w, -40.f * kDeg) + 40.f * kDeg;  // from 40° toward 0°
        EXPECT_NEAR(z_angle_deg(a.local_rot("mHead")), expected / kDeg, 1e-3f) << w;
    };
    a.world.step(0.25f);
    ASSERT_NE(a.inst(&type->shape()), nullptr);
    EXPECT_FLOAT_EQ(a.inst(&type->shape())->pose_weight, 0.15625f);
    expect_head(0.15625f);
    a.world.step(0.25f);
    EXPECT_FLOAT_EQ(a.inst(&type->shape())->pose_weight, 0.5f);
    EXPECT_NEAR(z_angle_deg(a.local_rot("mHead")), 20.f, 1e-3f);  // halfway exactly
    a.world.step(0.75f);
    a.world.step(0.75f);  // T = 2
    EXPECT_EQ(a.inst(&type->shape())->pose_weight, 1.f);
    EXPECT_NEAR(z_angle_deg(a.local_rot("mHead")), 0.f, 1e-4f);
    EXPECT_TRUE(a.ctrl().stop(&type->shape()));
    // T = 2.125: weight cubic_step(0.75) = 0.84375, but the signature test reads last frame's
    // weight (1), so the older keyframe motion is still covered and idle: the custom motion
    // alone drives the head (spec §3.3).
    a.world.step(0.125f);
    EXPECT_FLOAT_EQ(a.inst(&type->shape())->pose_weight, 0.84375f);
    EXPECT_NEAR(z_angle_deg(a.local_rot("mHead")), 0.f, 1e-4f);
    a.world.step(0.125f);  // T = 2.25: weight 0.5, the keyframe motion blends in again
    EXPECT_FLOAT_EQ(a.inst(&type->shape())->pose_weight, 0.5f);
    EXPECT_NEAR(z_angle_deg(a.local_rot("mHead")), 20.f, 1e-3f);
    a.world.step(0.25f);  // T = 2.5 = S + ease out
    EXPECT_EQ(a.inst(&type->shape())->pose_weight, 0.f);
    EXPECT_EQ(s.deactivations, 0);
    a.world.step(0.25f);
    EXPECT_FALSE(a.ctrl().is_active(&type->shape()));
    EXPECT_EQ(s.deactivations, 1);
    EXPECT_NEAR(z_angle_deg(a.local_rot("mHead")), 40.f, 1e-4f);
}

// update() returning false stops the motion like the viewer's onUpdate: it eases out from the
// frame it returned false.
TEST(CustomMotion, UpdateReturningFalseStopsTheMotion) {
    Avatar a;
    FixedSetup s{10.f};
    s.stop_after = 0.5f;
    const auto type = fixed_type(s, {rot("mHead")}, 3, BlendType::Normal, 0.f, 0.25f);
    ASSERT_TRUE(a.ctrl().start_custom(type));
    a.world.step(0.25f);
    EXPECT_FALSE(a.inst(&type->shape())->stopped);
    a.world.step(0.25f);  // T = 0.5: returns false, stop time 0.5
    const MotionInstance* m = a.inst(&type->shape());
    ASSERT_NE(m, nullptr);
    EXPECT_TRUE(m->stopped);
    EXPECT_EQ(m->stop_time, 0.5f);
    a.world.step(0.125f);  // ease out: cubic_step(1 − 0.125/0.25) = 0.5
    EXPECT_FLOAT_EQ(m->pose_weight, 0.5f);
    a.world.step(0.25f);
    a.world.step(0.25f);
    EXPECT_FALSE(a.ctrl().is_active(&type->shape()));
}

// Restarting an instance that is still easing in deprecates it (it eases out with its own
// object) and a fresh instance comes from the factory; restarting a fully weighted one does
// nothing.
TEST(CustomMotion, RestartWhileBlendingMakesAFreshInstance) {
    Avatar a;
    FixedSetup s{10.f};
    const auto type = fixed_type(s, {rot("mHead")}, 3, BlendType::Normal, 1.f, 1.f);
    ASSERT_TRUE(a.ctrl().start_custom(type));
    a.world.step(0.25f);
    ASSERT_TRUE(a.ctrl().start_custom(type));
    EXPECT_EQ(s.made, 2);
    EXPECT_EQ(a.ctrl().active().size(), 2u);
    a.world.step(2.f);
    a.world.step(0.1f);
    ASSERT_EQ(a.ctrl().active().size(), 1u);
    ASSERT_TRUE(a.ctrl().start_custom(type));  // full weight: keeps playing
    EXPECT_EQ(s.made, 2);
}

// Positions and scales are channels too; a scale makes the avatar own its scales.
TEST(CustomMotion, PositionAndScaleChannelsAreBlended) {
    struct PosScale : CustomMotion {
        bool update(const CustomMotionContext&, CustomMotionStates& s) override {
            s.positions[0] = {0.f, 0.f, 0.25f};
            s.scales[1] = {1.5f, 1.5f, 1.5f};
            return true;
        }
    };
    Avatar a;
    CustomMotionSpec spec;
    spec.joints = {{skel().find("mPelvis"), kUsagePos, -1}, {skel().find("mChest"), kUsageScale, -1}};
    spec.priority = 3;
    auto type = CustomMotionType::create(spec, skel(), [](std::uint64_t) { return std::make_unique<PosScale>(); });
    ASSERT_TRUE(type.ok()) << type.error().describe();
    ASSERT_TRUE(a.ctrl().start_custom(type.value()));
    EXPECT_TRUE(a.ctrl().offers_scale());
    a.world.step(0.1f);
    EXPECT_EQ(a.world.local_pose(a.e).positions[static_cast<std::size_t>(a.joint("mPelvis"))], (Vec3{0.f, 0.f, 0.25f}));
    EXPECT_EQ(a.world.local_pose(a.e).scales[static_cast<std::size_t>(a.joint("mChest"))], (Vec3{1.5f, 1.5f, 1.5f}));
    // Another avatar keeps the shared rest scales.
    const Entity b = a.world.create_avatar(Skeleton::default_skeleton());
    a.world.step(0.1f);
    EXPECT_EQ(a.world.local_pose(b).scales[static_cast<std::size_t>(a.joint("mChest"))],
              skel().rest_scales()[static_cast<std::size_t>(a.joint("mChest"))]);
}

// What a C API adapter looks like: callbacks with a user pointer and plain float arrays (the
// layout custom_motion.hpp asserts). The callback turns mHead by 15° about Z, in float[4]s.
namespace {
struct CCallbacks {
    void* user;
    int (*update)(void* user, float time, float dt, int n, float* rot_xyzw, float* pos_xyz);
};
struct CAdapter : CustomMotion {
    CCallbacks cb;
    explicit CAdapter(CCallbacks c) : cb(c) {}
    bool update(const CustomMotionContext& ctx, CustomMotionStates& s) override {
        return cb.update(cb.user, ctx.time, ctx.dt, static_cast<int>(s.rotations.size()),
                         reinterpret_cast<float*>(s.rotations.data()),
                         s.positions.empty() ? nullptr : reinterpret_cast<float*>(s.positions.data())) != 0;
    }
};
int c_update(void* user, float time, float, int n, float* rot, float*) {
    *static_cast<float*>(user) = time;
    for (int k = 0; k < n; ++k) {
        rot[4 * k + 0] = 0.f;
        rot[4 * k + 1] = 0.f;
        rot[4 * k + 2] = std::sin(7.5f * kDeg);
        rot[4 * k + 3] = std::cos(7.5f * kDeg);
    }
    return 1;
}
}  // namespace

TEST(CustomMotion, ACCallbackAdapterIsAThinSubclass) {
    Avatar a;
    float last_time = -1.f;
    CustomMotionSpec spec;
    spec.joints = {rot("mHead")};
    spec.priority = 4;
    auto type = CustomMotionType::create(spec, skel(), [&last_time](std::uint64_t) {
        return std::make_unique<CAdapter>(CCallbacks{&last_time, &c_update});
    }, "c");
    ASSERT_TRUE(type.ok());
    ASSERT_TRUE(a.ctrl().start_custom(type.value()));
    a.world.step(0.25f);
    a.world.step(0.25f);
    EXPECT_EQ(last_time, 0.5f);
    EXPECT_NEAR(z_angle_deg(a.local_rot("mHead")), 15.f, 1e-4f);
}

TEST(CustomMotion, CreateRejectsBadSpecsWithTheEntryAtFault) {
    const auto factory = [](std::uint64_t) -> std::unique_ptr<CustomMotion> { return nullptr; };
    const auto err = [&](CustomMotionSpec spec, CustomMotionType::Factory f = nullptr) {
        auto r = CustomMotionType::create(std::move(spec), skel(), f ? f : CustomMotionType::Factory(factory), "bad");
        return r.ok() ? std::string() : r.error().message;
    };
    CustomMotionSpec ok;
    ok.joints = {rot("mHead")};
    EXPECT_EQ(err(ok), "");
    CustomMotionSpec s = ok;
    s.joints.push_back({9999, kUsageRot, -1});
    EXPECT_NE(err(s).find("joints[1]: joint index 9999 outside"), std::string::npos) << err(s);
    s = ok;
    s.joints.push_back(rot("mHead"));
    EXPECT_NE(err(s).find("joints[1]: joint"), std::string::npos) << err(s);
    EXPECT_NE(err(s).find("given twice"), std::string::npos);
    s = ok;
    s.joints[0].usage = 0;
    EXPECT_NE(err(s).find("joints[0] (mHead): usage 0"), std::string::npos) << err(s);
    s = ok;
    s.joints[0].priority = 7;
    EXPECT_NE(err(s).find("priority 7 outside [-1, 6]"), std::string::npos) << err(s);
    s = ok;
    s.priority = -1;
    EXPECT_NE(err(s).find("priority -1 outside [0, 6]"), std::string::npos) << err(s);
    s = ok;
    s.ease_out = -1.f;
    EXPECT_NE(err(s).find("must be finite and >= 0"), std::string::npos) << err(s);
    s = ok;
    s.joints.clear();
    EXPECT_NE(err(s).find("no joints"), std::string::npos) << err(s);
    EXPECT_FALSE(CustomMotionType::create(ok, skel(), nullptr).ok());
    Avatar a;
    EXPECT_FALSE(a.ctrl().start_custom(nullptr));
}

// ---------------------------------------------------------------------------------------------
// Procedural motions
// ---------------------------------------------------------------------------------------------

// LLBreatheMotionRot: mChest about Y by sin(T − A) × 0.05 rad; alone on the chest, it drives it
// fully. T = 0.5: 0.05·sin 0.5 = 0.0239713 rad; T = 1: 0.0420735 rad; T = π/2 ≈ 1.5708: 0.05.
TEST(Procedural, BreathingRotatesTheChestAboutY) {
    Avatar a;
    ASSERT_TRUE(ProceduralFeature::of(a.world).set_motions(a.e, {.breathe = true}));
    a.world.step(0.5f);
    Quat q = a.local_rot("mChest");
    EXPECT_NEAR(q.x, 0.f, 1e-7f);
    EXPECT_NEAR(q.z, 0.f, 1e-7f);
    EXPECT_NEAR(angle_about(q, 1), 0.0239713f, 1e-6f);
    a.world.step(0.5f);
    EXPECT_NEAR(angle_about(a.local_rot("mChest"), 1), 0.0420735f, 1e-6f);
    a.world.step(1.5707963f - 1.f);
    EXPECT_NEAR(angle_about(a.local_rot("mChest"), 1), 0.05f, 1e-6f);
    // Disabled: it stops (ease out 0) and the chest keeps its last rotation (nobody drives it).
    ASSERT_TRUE(ProceduralFeature::of(a.world).set_motions(a.e, {}));
    a.world.step(0.1f);
    a.world.step(0.1f);
    EXPECT_TRUE(a.ctrl().active().empty());
}

// noise2 is zero on lattice points and bounded by 0.5 on lattice lines; LLBodyNoiseMotion adds
// roll = 1°·noise2(0.2t, 0)/0.42 and pitch = 1°·noise2(0, 0.2t)/0.42 to mTorso (here over
// the head motion's torso, which stays at identity without a target).
TEST(Procedural, BodyNoiseIsDeterministicAndWithinTheViewerAmplitude) {
    for (int k = -3; k <= 300; ++k) {
        EXPECT_EQ(procedural::noise2(static_cast<float>(k), 0.f), 0.f);
        EXPECT_EQ(procedural::noise2(0.f, static_cast<float>(k)), 0.f);
    }
    float biggest = 0.f;
    for (int k = 0; k < 20000; ++k) {
        const float x = static_cast<float>(k) * 0.0137f;
        biggest = std::max({biggest, std::fabs(procedural::noise2(x, 0.f)), std::fabs(procedural::noise2(0.f, x))});
    }
    EXPECT_LE(biggest, 0.5f);
    EXPECT_GT(biggest, 0.25f);  // it does vary

    const auto run = [](std::vector<Quat>& torso) {
        Avatar a;
        EXPECT_TRUE(ProceduralFeature::of(a.world).set_motions(a.e, {.body_noise = true, .head_rot = true}));
        for (int f = 0; f < 600; ++f) {
            a.world.step(1.f / 10.f);
            torso.push_back(a.local_rot("mTorso"));
        }
    };
    std::vector<Quat> first, second;
    run(first);
    run(second);
    ASSERT_EQ(first.size(), second.size());
    EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(Quat)), 0);
    const float bound = 0.5f / procedural::kTorsoNoiseScale * kDeg;
    // The controller's time as the viewer keeps it: a double frame clock read as a float, the
    // float differences added up (LLMotionController::updateMotions).
    float t = 0.f, max_angle = 0.f, prev = 0.f;
    double clock = 0.0;
    for (const Quat& q : first) {
        clock += static_cast<double>(0.1f);
        const float cur = static_cast<float>(clock);
        t = t + (cur - prev);
        prev = cur;
        const float rx = procedural::kTorsoNoiseAmountDeg * kDeg * procedural::noise2(t * 0.2f, 0.f) / 0.42f;
        const float ry = procedural::kTorsoNoiseAmountDeg * kDeg * procedural::noise2(0.f, t * 0.2f) / 0.42f;
        const Quat expected = quat_from_roll_pitch_yaw(rx, ry, 0.f);
        EXPECT_NEAR(q.x, expected.x, 2e-6f);
        EXPECT_NEAR(q.y, expected.y, 2e-6f);
        EXPECT_NEAR(q.z, expected.z, 2e-6f);
        EXPECT_LE(std::fabs(rx), bound);
        EXPECT_LE(std::fabs(ry), bound);
        max_angle = std::max(max_angle, 2.f * std::asin(std::min(1.f, std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z))));
    }
    EXPECT_LE(max_angle, bound * std::sqrt(2.f) + 1e-6f);
    EXPECT_GT(max_angle, 0.2f * bound);
}

// LLHeadRotMotion toward a target 45° to the left: the first frame moves the head by the
// critical-damp interpolants (head: 1 − 2^(−dt/0.15), torso: 1 − 2^(−dt/0.27) of 35 %); neck
// and head split the head's share equally, so the head's heading is torso + head share. Once
// settled the head faces the target; a target at 120° is clamped to 72° (0.8 · 90°).
TEST(Procedural, HeadTurnsTowardTheTargetClampedAndEased) {
    const float dt = 1.f / 30.f;
    Avatar a;
    ASSERT_TRUE(ProceduralFeature::of(a.world).set_motions(a.e, {.head_rot = true}));
    const Vec3 head = a.model_pos("mHead");
    const float theta = 45.f * kDeg;
    ASSERT_TRUE(ProceduralFeature::of(a.world).set_look_at(a.e, head + Vec3{2.f * std::cos(theta), 2.f * std::sin(theta), 0.f}));
    a.world.step(dt);
    const float h = 1.f - std::pow(2.f, -dt / 0.15f);
    const float tt = 1.f - std::pow(2.f, -dt / 0.27f);
    const float torso = nlerp_angle(tt, nlerp_angle(0.35f, theta));
    const float head_share = nlerp_angle(h, theta);
    EXPECT_NEAR(angle_about(a.local_rot("mTorso"), 2), torso, 1e-5f);
    EXPECT_NEAR(angle_about(a.local_rot("mNeck"), 2), head_share / 2.f, 1e-5f);
    EXPECT_NEAR(angle_about(a.local_rot("mHead"), 2), head_share / 2.f, 1e-5f);
    EXPECT_NEAR(heading(a.model_rot("mHead")), torso + head_share, 1e-5f);
    for (int f = 0; f < 300; ++f) a.world.step(dt);
    // Settled: the head faces the point as seen from where the head now is (the turned torso
    // moved it a little; the head's position is subtracted every frame).
    const Vec3 d = head + Vec3{2.f * std::cos(theta), 2.f * std::sin(theta), 0.f} - a.model_pos("mHead");
    const float settled = std::atan2(d.y, d.x);
    EXPECT_NEAR(settled, theta, 0.01f);
    EXPECT_NEAR(heading(a.model_rot("mHead")), settled, 1e-4f);
    EXPECT_NEAR(angle_about(a.local_rot("mTorso"), 2), nlerp_angle(0.35f, settled), 1e-4f);

    // Behind-left at 120°: clamped to 72°.
    const float behind = 120.f * kDeg;
    ASSERT_TRUE(ProceduralFeature::of(a.world).set_look_at(a.e, Vec3{2.f * std::cos(behind), 2.f * std::sin(behind), 0.f}, LookAtFrame::HeadOffset));
    for (int f = 0; f < 300; ++f) a.world.step(dt);
    EXPECT_NEAR(heading(a.model_rot("mHead")), 72.f * kDeg, 1e-4f);

    // Closer than 0.3 m: the head takes the pelvis orientation (here the rest, identity).
    ASSERT_TRUE(ProceduralFeature::of(a.world).set_look_at(a.e, Vec3{0.f, 0.2f, 0.f}, LookAtFrame::HeadOffset));
    for (int f = 0; f < 300; ++f) a.world.step(dt);
    EXPECT_NEAR(heading(a.model_rot("mHead")), 0.f, 1e-4f);
    // No target: the head follows the root.
    ASSERT_TRUE(ProceduralFeature::of(a.world).set_look_at(a.e, Vec3{2.f, 2.f, 0.f}, LookAtFrame::HeadOffset));
    for (int f = 0; f < 30; ++f) a.world.step(dt);
    ASSERT_TRUE(ProceduralFeature::of(a.world).clear_look_at(a.e));
    for (int f = 0; f < 300; ++f) a.world.step(dt);
    EXPECT_NEAR(heading(a.model_rot("mHead")), 0.f, 1e-4f);
    EXPECT_FALSE(ProceduralFeature::of(a.world).set_look_at(a.e, Vec3{NAN, 0.f, 0.f}));
    EXPECT_FALSE(ProceduralFeature::of(a.world).set_look_at(kNullEntity, Vec3{}));
}

// LLEyeMotion toward a target 0.2 m ahead of the head: target rotation identity, vergence
// v = −atan2(interocular/2, 0.2) + 4° (below −0.05 rad, so no saccade is added): the left eye
// turns by v about Z, the right one by −v. At (0.1, 0.2, 0): 63.4° to the left, limited to
// 27° (0.3 · 90°), plus the vergence. Both eye pairs (mEyeLeft/Right and the Bento
// mFaceEyeAltLeft/Right, each with its own interocular distance).
TEST(Procedural, EyesTurnTowardTheTargetWithVergence) {
    Avatar a;
    ASSERT_TRUE(ProceduralFeature::of(a.world).set_motions(a.e, {.eye = true}));
    for (const Vec3 offset : {Vec3{0.2f, 0.f, 0.f}, Vec3{0.1f, 0.2f, 0.f}}) {
        ASSERT_TRUE(ProceduralFeature::of(a.world).set_look_at(a.e, offset, LookAtFrame::HeadOffset));
        a.world.step(1.f / 30.f);
        a.world.step(1.f / 30.f);
        const float target = std::min(std::atan2(offset.y, offset.x), 27.f * kDeg);
        for (auto [l, r] : {std::pair{"mEyeLeft", "mEyeRight"}, std::pair{"mFaceEyeAltLeft", "mFaceEyeAltRight"}}) {
            const float iod = length(a.model_pos(l) - a.model_pos(r));
            const float v = -std::atan2(iod / 2.f, length(offset)) + 4.f * kDeg;
            ASSERT_LT(v, -0.05f);
            EXPECT_NEAR(angle_about(a.local_rot(l), 2), target + v, 1e-5f) << l;
            EXPECT_NEAR(angle_about(a.local_rot(r), 2), target - v, 1e-5f) << r;
            EXPECT_NEAR(a.local_rot(l).x, 0.f, 1e-6f);
            EXPECT_NEAR(a.local_rot(l).y, 0.f, 1e-6f);
        }
    }
    // Far ahead: saccades and look-aways are added, bounded by their maxima.
    ASSERT_TRUE(ProceduralFeature::of(a.world).set_look_at(a.e, Vec3{10.f, 0.f, 0.f}, LookAtFrame::HeadOffset));
    float max_yaw = 0.f;
    for (int f = 0; f < 3000; ++f) {
        a.world.step(1.f / 30.f);
        const float yaw = angle_about(a.local_rot("mEyeLeft"), 2);
        const float v = -std::atan2(length(a.model_pos("mEyeLeft") - a.model_pos("mEyeRight")) / 2.f, 10.f) + 4.f * kDeg;
        max_yaw = std::max(max_yaw, std::fabs(yaw - v));
        // (the z angle of the combined rotation, within 0.01 rad of the yaw sum)
        EXPECT_LE(std::fabs(yaw - v), procedural::kEyeJitterMaxYaw + procedural::kEyeLookAwayMaxYaw + 0.01f);
    }
    EXPECT_GT(max_yaw, 0.02f);
    // Disabled: the eyes ease out over 0.5 s and are reset to identity on deactivation.
    ASSERT_TRUE(ProceduralFeature::of(a.world).set_motions(a.e, {}));
    for (int f = 0; f < 30; ++f) a.world.step(1.f / 30.f);
    EXPECT_TRUE(a.ctrl().active().empty());
    EXPECT_EQ(a.local_rot("mEyeLeft"), Quat::identity());
    EXPECT_EQ(a.local_rot("mFaceEyeAltRight"), Quat::identity());
}

// Blink timing at dt = 1/128 s (exact in binary), driving an EyeMotion directly. The first
// blink starts at once (mEyeBlinkTime = 0): each eye closes over 0.015 s, the right one 0.005 s
// behind:
//   t = 1/128: left 0.52083, right 0.1875;  2/128: 1, 0.70833;  3/128: 1, 1 → closed.
// It stays closed 0.03 s (no requests), then opens: at 0.00125 s past: 0.91667, 1;
// 0.0090625: 0.39583, 0.72917; 0.016875: 0, 0.20833; 0.0246875: 0, 0 → open. The second
// frame is the first look-away (mEyeLookAwayTime starts at 0 and the first saccade lowers it):
// with its ll_frand() ≤ 0.1 nothing changes; above 0.1 (90 %) the blink restarts there
// (mEyeBlinkTime = elapsed: 0, 0), so the table is one frame later.
TEST(Procedural, EyesBlinkAtTheViewersIntervals) {
    const float dt = 1.f / 128.f;
    const float table[][2] = {{0.52083f, 0.1875f}, {1.f, 0.70833f}, {1.f, 1.f},       {-1.f, -1.f},
                              {-1.f, -1.f},        {-1.f, -1.f},    {0.91667f, 1.f}, {0.39583f, 0.72917f},
                              {0.f, 0.20833f},     {0.f, 0.f},      {-1.f, -1.f}};
    for (const bool restart : {false, true}) {
        // A seed whose fourth draw (after the saccade's three) is ≤ 0.1, or above it.
        std::uint64_t seed = 0;
        for (;; ++seed) {
            procedural::FrandGenerator g(seed);
            g.frand(), g.frand(), g.frand();
            if ((g.frand() > 0.1f) == restart) break;
        }
        EyeMotion eye(seed, -1, {-1, -1, -1, -1}, 1);
        AnimationOutputs out;
        CustomMotionContext ctx;
        ctx.dt = dt;
        ctx.outputs = &out;
        std::vector<Quat> rot(2);
        CustomMotionStates states{rot, {}, {}};
        std::vector<std::array<float, 2>> expected;
        for (const auto& e : table) expected.push_back({e[0], e[1]});
        if (restart) expected.insert(expected.begin() + 1, {{0.f, 0.f}, expected[0]});
        for (std::size_t f = 0; f < expected.size(); ++f) {
            out = {};
            EXPECT_TRUE(eye.update(ctx, states));
            if (expected[f][0] < 0.f) {
                EXPECT_FALSE(out.blink_set) << f;
                continue;
            }
            ASSERT_TRUE(out.blink_set) << f;
            EXPECT_NEAR(out.blink_left, expected[f][0], 1e-4f) << f << " restart " << restart;
            EXPECT_NEAR(out.blink_right, expected[f][1], 1e-4f) << f << " restart " << restart;
        }
        EXPECT_FALSE(eye.eyes_closed());
    }

    // In a world, for ten minutes: the gap from a blink's end (both open) to the next blink's
    // start is at most 8 s; blinks come at irregular intervals.
    Avatar a;
    ASSERT_TRUE(ProceduralFeature::of(a.world).set_motions(a.e, {.eye = true}));
    // Ten minutes: the gap from a blink's end (both open) to the next blink's start is at most
    // 8 s; blinks come at irregular intervals.
    float t = 0.f, opened = 0.f, longest = 0.f;
    bool closing = false;
    int blinks = 0;
    for (int f = 0; f < 128 * 600; ++f) {
        a.world.step(dt);
        t += dt;
        const AnimationOutputs& out = a.ctrl().animation_outputs();
        if (!out.blink_set) continue;
        if (!closing && out.blink_left > 0.f) {  // a blink starts
            closing = true;
            ++blinks;
            longest = std::max(longest, t - opened);
            EXPECT_LE(t - opened, procedural::kEyeBlinkMaxTime + 2.f * dt);
        }
        if (closing && out.blink_left == 0.f && out.blink_right == 0.f) {
            closing = false;
            opened = t;
        }
    }
    EXPECT_GT(blinks, 600 / 8);
    EXPECT_GT(longest, 4.f);
}

// Everything on, with a target: every joint's pose is finite, the look-at motions leave the
// legs alone, and the outputs reach an Appearance-less avatar's controller only.
TEST(Procedural, AllMotionsTogetherStayFiniteAndLeaveOtherJointsAlone) {
    Avatar a;
    ASSERT_TRUE(ProceduralFeature::of(a.world).set_motions(a.e, ProceduralSet::all()));
    ASSERT_TRUE(ProceduralFeature::of(a.world).set_look_at(a.e, Vec3{1.f, -0.5f, 1.2f}));
    EXPECT_EQ(a.ctrl().active().size(), 4u);
    for (int f = 0; f < 600; ++f) a.world.step(1.f / 60.f);
    for (std::size_t j = 0; j < a.world.model_pose(a.e).rotations.size(); ++j)
        EXPECT_TRUE(is_finite(a.world.model_pose(a.e).rotations[j]) && is_finite(a.world.model_pose(a.e).positions[j]));
    EXPECT_EQ(a.local_rot("mKneeLeft"), skel().rest_rotations()[static_cast<std::size_t>(a.joint("mKneeLeft"))]);
    // Enabling twice does not restart anything.
    ASSERT_TRUE(ProceduralFeature::of(a.world).set_motions(a.e, ProceduralSet::all()));
    EXPECT_EQ(a.ctrl().active().size(), 4u);
    EXPECT_FALSE(ProceduralFeature::of(a.world).set_motions(kNullEntity, ProceduralSet::all()));
}
