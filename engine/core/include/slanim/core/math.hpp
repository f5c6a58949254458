// SPDX-License-Identifier: MIT
// Vectors and quaternions with the exact float semantics of the SL viewer's llmath.
//
// Frames: SL avatar space, X forward, Y left, Z up; lengths in metres; angles in radians unless
// a name says degrees. Quaternions are stored Hamilton x, y, z, w.
//
// Product order: the viewer's `a * b` (llquaternion.cpp operator*) means "apply a, then b",
// i.e. the Hamilton product b ⊗ a. This header names both explicitly: `hamilton(a, b)` is a ⊗ b
// and `ll_mul(a, b)` is the viewer's a * b = b ⊗ a. Every function that mirrors a viewer function
// reproduces its float operations in the same order, so results match bit for bit on IEEE-754
// hardware without FMA contraction (the project compiles with -ffp-contract=off).
#pragma once

#include <cmath>

namespace slanim {

/// Texture coordinates (u, v), and other 2-vectors.
struct Vec2 {
    float x = 0.f, y = 0.f;

    friend constexpr Vec2 operator+(Vec2 a, Vec2 b) { return {a.x + b.x, a.y + b.y}; }
    friend constexpr Vec2 operator*(Vec2 a, float s) { return {a.x * s, a.y * s}; }
    friend constexpr bool operator==(Vec2 a, Vec2 b) = default;
};

struct Vec3 {
    float x = 0.f, y = 0.f, z = 0.f;

    friend constexpr Vec3 operator+(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
    friend constexpr Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
    friend constexpr Vec3 operator-(Vec3 a) { return {-a.x, -a.y, -a.z}; }
    friend constexpr Vec3 operator*(Vec3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
    friend constexpr Vec3 operator*(float s, Vec3 a) { return {a.x * s, a.y * s, a.z * s}; }
    friend constexpr bool operator==(Vec3 a, Vec3 b) = default;
    constexpr Vec3& operator+=(Vec3 b) { x += b.x; y += b.y; z += b.z; return *this; }
};

/// Component-wise (Hadamard) product, the viewer's `scaledVec`.
constexpr Vec3 scaled(Vec3 a, Vec3 b) { return {a.x * b.x, a.y * b.y, a.z * b.z}; }
constexpr float dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
constexpr Vec3 cross(Vec3 a, Vec3 b) {
    return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
inline float length(Vec3 a) { return std::sqrt(dot(a, a)); }
/// Linear interpolation a + (b − a)·u, as llmath's `lerp(LLVector3, LLVector3, F32)`.
constexpr Vec3 lerp(Vec3 a, Vec3 b, float u) {
    return {a.x + (b.x - a.x) * u, a.y + (b.y - a.y) * u, a.z + (b.z - a.z) * u};
}
inline bool is_finite(Vec3 a) { return std::isfinite(a.x) && std::isfinite(a.y) && std::isfinite(a.z); }

struct Quat {
    float x = 0.f, y = 0.f, z = 0.f, w = 1.f;

    static constexpr Quat identity() { return {0.f, 0.f, 0.f, 1.f}; }
    friend constexpr bool operator==(Quat a, Quat b) = default;
};

constexpr float dot(Quat a, Quat b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }
inline bool is_finite(Quat q) {
    return std::isfinite(q.x) && std::isfinite(q.y) && std::isfinite(q.z) && std::isfinite(q.w);
}
constexpr Quat conjugate(Quat q) { return {-q.x, -q.y, -q.z, q.w}; }

/// Hamilton product a ⊗ b (apply b, then a).
constexpr Quat hamilton(Quat a, Quat b) {
    return {a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
            a.w * b.y + a.y * b.w + a.z * b.x - a.x * b.z,
            a.w * b.z + a.z * b.w + a.x * b.y - a.y * b.x,
            a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
}

/// The viewer's `a * b` (llquaternion.cpp operator*): apply a, then b. Same float operations.
/// Does not renormalize.
constexpr Quat ll_mul(Quat a, Quat b) {
    return {b.w * a.x + b.x * a.w + b.y * a.z - b.z * a.y,
            b.w * a.y + b.y * a.w + b.z * a.x - b.x * a.z,
            b.w * a.z + b.z * a.w + b.x * a.y - b.y * a.x,
            b.w * a.w - b.x * a.x - b.y * a.y - b.z * a.z};
}

/// The viewer's `v * q` (llquaternion.cpp operator*(LLVector3, LLQuaternion)): rotates v by q
/// (q v q⁻¹ for unit q), same float operations.
constexpr Vec3 rotate(Vec3 a, Quat r) {
    const float rw = -r.x * a.x - r.y * a.y - r.z * a.z;
    const float rx = r.w * a.x + r.y * a.z - r.z * a.y;
    const float ry = r.w * a.y + r.z * a.x - r.x * a.z;
    const float rz = r.w * a.z + r.x * a.y - r.y * a.x;
    return {-rw * r.x + rx * r.w - ry * r.z + rz * r.y,
            -rw * r.y + ry * r.w - rz * r.x + rx * r.z,
            -rw * r.z + rz * r.w - rx * r.y + ry * r.x};
}

/// `LLQuaternion::normalize()`: rescales only when |1 − |q|| > 1e-6; |q| ≤ 1e-7 gives identity.
Quat ll_normalize(Quat q);

/// llquaternion.cpp `lerp(t, p, q)`: (1−t)·p + t·q, then ll_normalize.
Quat ll_lerp(float t, Quat p, Quat q);

/// llquaternion.cpp `slerp(u, a, b)`: shortest arc, linear weights when 1−|cos| < 1e-5,
/// not renormalized.
Quat ll_slerp(float u, Quat a, Quat b);

/// llquaternion.cpp `nlerp(t, a, b)`: slerp when dot(a, b) < 0, else ll_lerp.
Quat ll_nlerp(float t, Quat a, Quat b);

/// `LLQuaternion(angle, axis)`: rotation of `angle_rad` about `axis` (normalised inside);
/// identity when |axis| ≤ 1e-7.
Quat quat_from_axis_angle(float angle_rad, Vec3 axis);

/// Euler rotation order of `mayaQ` (llquaternion.h `LLQuaternion::Order`).
enum class EulerOrder { XYZ = 0, YZX = 1, ZXY = 2, XZY = 3, YXZ = 4, ZYX = 5 };

/// `mayaQ(x, y, z, order)`: Euler angles in **degrees**; for XYZ the result is xQ*yQ*zQ in the
/// viewer's order (rotate about X first, then Y, then Z).
Quat maya_q(float x_deg, float y_deg, float z_deg, EulerOrder order);

/// `LLQuaternion::setQuat(roll, pitch, yaw)` (radians), used for attachment point rotations:
/// Hamilton qx ⊗ qy ⊗ qz (rotate about Z, then Y, then X). Not normalized, as in the viewer.
Quat quat_from_roll_pitch_yaw(float roll, float pitch, float yaw);

/// `LLQuaternion::packToVector3()`: x, y, z of q/|q| in the w ≥ 0 hemisphere.
Vec3 pack_to_vector3(Quat q);

/// `LLQuaternion::unpackFromVector3()`: w = sqrt(1 − |v|²) when positive, else 0.
/// Not renormalized (|v| > 1 gives a quaternion longer than unit length).
Quat unpack_from_vector3(Vec3 v);

/// `LLQuaternion::shortestArc(a, b)`: the rotation taking direction a to direction b.
Quat shortest_arc(Vec3 a, Vec3 b);

/// `LLMatrix3::quaternion()`: the quaternion of a 3×3 rotation matrix given as `m[row][col]`
/// in the viewer's row-vector layout (row i is the image of axis i), float arithmetic in the
/// viewer's order (trace branch, else the largest diagonal element). Not normalized: callers
/// normalize as their viewer function does (`LLQuaternion(const LLMatrix3&)` once).
Quat matrix3_quaternion(const float (&m)[3][3]);

/// `LLQuaternion(x_axis, y_axis, z_axis)`: the rotation whose matrix rows are the given axes
/// (each the image of that axis; unit and orthogonal for a rotation), i.e. matrix3_quaternion
/// then ll_normalize. Used to build a look-at rotation from forward/left/up (SL frame: X forward,
/// Y left, Z up).
Quat quat_from_axes(Vec3 x_axis, Vec3 y_axis, Vec3 z_axis);

/// `LLQuaternion::getEulerAngles(roll, pitch, yaw)`: radians about X, Y and Z, the inverse of
/// `setQuat(roll, pitch, yaw)` (quat_from_roll_pitch_yaw). Roll and yaw in
/// (−π, π], pitch in [−π/2, π/2]; at gimbal lock (cos pitch ≤ GIMBAL_THRESHOLD, 0.000436) the
/// viewer's branch: pitch = ±π/2, roll = 0, yaw carries the remaining turn. `q` unit.
void ll_euler_angles(Quat q, float& roll, float& pitch, float& yaw);

/// `LLQuaternion::constrain(radians)`: the same rotation axis with the angle limited to
/// `radians` (in [0, π]); `q` is first put in the w ≥ 0 hemisphere, so the result takes the
/// short way. `q` unit.
Quat ll_constrain(Quat q, float radians);

/// llmath.h `cubic_step(x)` = x²(3 − 2x) with x clamped to [0, 1].
inline float cubic_step(float x) {
    x = x < 0.f ? 0.f : (x > 1.f ? 1.f : x);
    return x * x * (3.f - 2.f * x);
}

/// llmath.h `clamp_rescale(x, x1, x2, y1, y2)`: linear remap of x from [x1, x2] to [y1, y2],
/// clamped to the output range. x1 > x2 is allowed.
float clamp_rescale(float x, float x1, float x2, float y1, float y2);

/// `LLSmoothInterpolation::getInterpolant(tc)` for a frame of `dt` seconds:
/// clamp(1 − 2^(−dt/tc), 0, 1); tc = 0 gives 1.
float smooth_interpolant(float dt, float time_constant);

}  // namespace slanim
