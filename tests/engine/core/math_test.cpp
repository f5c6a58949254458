// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include <cmath>

#include "slanim/core/math.hpp"
#include "slanim/core/quantize.hpp"

using namespace slanim;

namespace {
bool near(Quat a, Quat b, float eps = 1e-6f) {
    return std::fabs(a.x - b.x) < eps && std::fabs(a.y - b.y) < eps && std::fabs(a.z - b.z) < eps &&
           std::fabs(a.w - b.w) < eps;
}
bool near(Vec3 a, Vec3 b, float eps = 1e-6f) {
    return std::fabs(a.x - b.x) < eps && std::fabs(a.y - b.y) < eps && std::fabs(a.z - b.z) < eps;
}
}  // namespace

TEST(Math, LlMulIsApplyFirstThenSecond) {
    const Quat a = maya_q(30.f, 0.f, 0.f, EulerOrder::XYZ);
    const Quat b = maya_q(0.f, 0.f, 50.f, EulerOrder::XYZ);
    EXPECT_TRUE(near(ll_mul(a, b), hamilton(b, a)));
    const Vec3 v{0.3f, -0.2f, 0.9f};
    // Rotating by a*b equals rotating by a, then by b.
    EXPECT_TRUE(near(rotate(v, ll_mul(a, b)), rotate(rotate(v, a), b), 1e-5f));
}

TEST(Math, RotateIsActiveRotation) {
    const Quat z90 = quat_from_axis_angle(1.5707963f, {0.f, 0.f, 1.f});
    EXPECT_TRUE(near(rotate({1.f, 0.f, 0.f}, z90), {0.f, 1.f, 0.f}, 1e-6f));  // X forward → Y left
}

TEST(Math, MayaQOrders) {
    const Quat x = quat_from_axis_angle(10.f * 0.017453292f, {1, 0, 0});
    const Quat y = quat_from_axis_angle(20.f * 0.017453292f, {0, 1, 0});
    const Quat z = quat_from_axis_angle(30.f * 0.017453292f, {0, 0, 1});
    EXPECT_TRUE(near(maya_q(10, 20, 30, EulerOrder::XYZ), hamilton(z, hamilton(y, x))));
    EXPECT_TRUE(near(maya_q(10, 20, 30, EulerOrder::ZYX), hamilton(x, hamilton(y, z))));
    // setQuat(roll, pitch, yaw) is the ZYX composition too.
    EXPECT_TRUE(near(quat_from_roll_pitch_yaw(10 * 0.017453292f, 20 * 0.017453292f, 30 * 0.017453292f),
                     maya_q(10, 20, 30, EulerOrder::ZYX), 1e-6f));
}

TEST(Math, NormalizeOnlyWhenFarFromUnit) {
    const Quat almost{0.f, 0.f, 0.f, 1.0000005f};
    EXPECT_EQ(ll_normalize(almost), almost);  // |1 − |q|| ≤ 1e-6: untouched
    const Quat longer{0.f, 0.f, 0.f, 2.f};
    EXPECT_EQ(ll_normalize(longer), Quat::identity());
    EXPECT_EQ(ll_normalize(Quat{0.f, 0.f, 0.f, 0.f}), Quat::identity());
}

TEST(Math, NlerpUsesSlerpOnlyAcrossHemispheres) {
    const Quat a = maya_q(0, 0, 10, EulerOrder::XYZ);
    const Quat b = maya_q(0, 0, 80, EulerOrder::XYZ);
    EXPECT_EQ(ll_nlerp(0.25f, a, b), ll_lerp(0.25f, a, b));
    const Quat nb{-b.x, -b.y, -b.z, -b.w};
    EXPECT_EQ(ll_nlerp(0.25f, a, nb), ll_slerp(0.25f, a, nb));
    // slerp takes the short way: halfway is the 45° rotation about Z (as q or −q).
    const Quat h = ll_slerp(0.5f, a, nb);
    EXPECT_NEAR(std::fabs(dot(h, maya_q(0, 0, 45, EulerOrder::XYZ))), 1.f, 1e-6f);
}

TEST(Math, PackUnpackHemisphere) {
    const Quat q{-0.1f, 0.2f, -0.3f, -0.927362f};
    const Vec3 v = pack_to_vector3(q);
    EXPECT_GT(v.x, 0.f);  // w < 0: stored negated
    const Quat u = unpack_from_vector3(v);
    EXPECT_GT(u.w, 0.f);
    EXPECT_EQ(unpack_from_vector3({1.f, 1.f, 0.f}).w, 0.f);  // over-long: w = 0
}

TEST(Math, CubicStepAndClampRescale) {
    EXPECT_EQ(cubic_step(-1.f), 0.f);
    EXPECT_EQ(cubic_step(2.f), 1.f);
    EXPECT_FLOAT_EQ(cubic_step(0.5f), 0.5f);
    EXPECT_FLOAT_EQ(cubic_step(0.25f), 0.15625f);
    EXPECT_FLOAT_EQ(clamp_rescale(5.f, 0.f, 10.f, 20.f, 1.f), 10.5f);
    EXPECT_EQ(clamp_rescale(-5.f, 0.f, 10.f, 20.f, 1.f), 20.f);
    EXPECT_EQ(smooth_interpolant(0.1f, 0.f), 1.f);
    EXPECT_FLOAT_EQ(smooth_interpolant(0.15f, 0.15f), 0.5f);
}

TEST(Quantize, FloorEncodeZeroSnapDecode) {
    EXPECT_EQ(f32_to_u16(-1.f, -1.f, 1.f), 0);
    EXPECT_EQ(f32_to_u16(1.f, -1.f, 1.f), 65535);
    EXPECT_EQ(f32_to_u16(0.f, -1.f, 1.f), 32767);  // floor(32767.5)
    EXPECT_EQ(f32_to_u16(7.f, -1.f, 1.f), 65535);  // clamped
    EXPECT_EQ(u16_to_f32(32767, -1.f, 1.f), 0.f);  // zero snap
    EXPECT_EQ(u16_to_f32(32768, -1.f, 1.f), 0.f);
    EXPECT_NE(u16_to_f32(32769, -1.f, 1.f), 0.f);
    EXPECT_EQ(f32_to_u16(0.5f, 0.f, 0.f), 0);  // zero-width range (duration 0)
    EXPECT_EQ(f32_to_u16(std::nanf(""), -1.f, 1.f), 0);
    EXPECT_EQ(f32_to_u16(0.5f, 0.f, 1.f), 32767);  // floor(32767.5), not round
    // decode → floor-encode is not idempotent (spec §1.4): some codes come back one lower,
    // none higher, none further off.
    int lower = 0;
    for (int c = 0; c <= 65535; ++c) {
        const int back = f32_to_u16(u16_to_f32(static_cast<std::uint16_t>(c), -1.f, 1.f), -1.f, 1.f);
        ASSERT_TRUE(back == c || back == c - 1 || (c >= 32767 && c <= 32768)) << c << " → " << back;
        lower += back == c - 1;
    }
    EXPECT_GT(lower, 1000);
}

TEST(Math, EulerAnglesInvertSetQuatAndTakeTheGimbalBranch) {
    // getEulerAngles reads back setQuat(roll, pitch, yaw).
    for (const Vec3 e : {Vec3{0.3f, -0.7f, 1.2f}, Vec3{-2.5f, 1.1f, -3.0f}, Vec3{0.f, 0.f, 0.f}}) {
        float roll, pitch, yaw;
        ll_euler_angles(quat_from_roll_pitch_yaw(e.x, e.y, e.z), roll, pitch, yaw);
        EXPECT_NEAR(roll, e.x, 1e-5f);
        EXPECT_NEAR(pitch, e.y, 1e-5f);
        EXPECT_NEAR(yaw, e.z, 1e-5f);
    }
    // Pitch ±90°: the viewer sets roll 0 and puts the whole remaining turn in yaw.
    float roll, pitch, yaw;
    ll_euler_angles(quat_from_roll_pitch_yaw(0.5f, 1.5707964f, 0.f), roll, pitch, yaw);
    EXPECT_EQ(roll, 0.f);
    EXPECT_NEAR(pitch, 1.5707963f, 1e-6f);
    ll_euler_angles(quat_from_roll_pitch_yaw(0.f, -1.5707964f, 0.3f), roll, pitch, yaw);
    EXPECT_EQ(roll, 0.f);
    EXPECT_NEAR(pitch, -1.5707963f, 1e-6f);
}

TEST(Math, ConstrainLimitsTheAngleAboutTheSameAxis) {
    const Quat q = quat_from_axis_angle(2.f, Vec3{0.f, 0.f, 1.f});
    const Quat c = ll_constrain(q, 0.5f);
    EXPECT_NEAR(c.w, std::cos(0.25f), 1e-6f);
    EXPECT_NEAR(c.z, std::sin(0.25f), 1e-6f);
    EXPECT_EQ(c.x, 0.f);
    EXPECT_EQ(ll_constrain(quat_from_axis_angle(0.3f, Vec3{1.f, 0.f, 0.f}), 0.5f),
              quat_from_axis_angle(0.3f, Vec3{1.f, 0.f, 0.f}));  // within the limit: unchanged
    // The other hemisphere is the same rotation: flipped first, then limited.
    const Quat n = ll_constrain(Quat{-q.x, -q.y, -q.z, -q.w}, 0.5f);
    EXPECT_NEAR(n.w, c.w, 1e-6f);
    EXPECT_NEAR(n.z, c.z, 1e-6f);
}

TEST(Math, QuatFromAxesIsTheRotationWithThoseRows) {
    EXPECT_EQ(quat_from_axes({1.f, 0.f, 0.f}, {0.f, 1.f, 0.f}, {0.f, 0.f, 1.f}), Quat::identity());
    // Facing +Y (forward = Y, left = −X, up = Z): a quarter turn about Z, which takes X to Y.
    const Quat q = quat_from_axes({0.f, 1.f, 0.f}, {-1.f, 0.f, 0.f}, {0.f, 0.f, 1.f});
    const Vec3 x = rotate(Vec3{1.f, 0.f, 0.f}, q);
    EXPECT_NEAR(x.x, 0.f, 1e-6f);
    EXPECT_NEAR(x.y, 1.f, 1e-6f);
    EXPECT_NEAR(x.z, 0.f, 1e-6f);
}
