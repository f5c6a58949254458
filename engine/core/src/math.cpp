// SPDX-License-Identifier: MIT
#include "slanim/core/math.hpp"

#include "slanim/core/quantize.hpp"

#include <cmath>

namespace slanim {

namespace {
constexpr float kMagThreshold = 0.0000001f;  // FP_MAG_THRESHOLD
constexpr float kOnePartInAMillion = 0.000001f;
constexpr float kDegToRad = 0.017453292519943295769236907684886f;
constexpr float kU16Max = 65535.f;
constexpr float kOoU16Max = 1.f / 65535.f;
}  // namespace

Quat ll_normalize(Quat q) {
    const float mag = std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
    if (mag > kMagThreshold) {
        if (std::fabs(1.f - mag) > kOnePartInAMillion) {
            const float oomag = 1.f / mag;
            q.x *= oomag;
            q.y *= oomag;
            q.z *= oomag;
            q.w *= oomag;
        }
        return q;
    }
    return Quat::identity();
}

Quat ll_lerp(float t, Quat p, Quat q) {
    const float inv_t = 1.f - t;
    Quat r{t * q.x + (inv_t * p.x), t * q.y + (inv_t * p.y), t * q.z + (inv_t * p.z),
           t * q.w + (inv_t * p.w)};
    return ll_normalize(r);
}

Quat ll_slerp(float u, Quat a, Quat b) {
    float cos_t = a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
    bool flip = false;
    if (cos_t < 0.f) {
        cos_t = -cos_t;
        flip = true;
    }
    float alpha, beta;
    if (1.f - cos_t < 0.00001f) {
        beta = 1.f - u;
        alpha = u;
    } else {
        const float theta = std::acos(cos_t);
        const float sin_t = std::sin(theta);
        beta = std::sin(theta - u * theta) / sin_t;
        alpha = std::sin(u * theta) / sin_t;
    }
    if (flip) beta = -beta;
    return {beta * a.x + alpha * b.x, beta * a.y + alpha * b.y, beta * a.z + alpha * b.z,
            beta * a.w + alpha * b.w};
}

Quat ll_nlerp(float t, Quat a, Quat b) {
    if (dot(a, b) < 0.f) return ll_slerp(t, a, b);
    return ll_lerp(t, a, b);
}

Quat quat_from_axis_angle(float angle, Vec3 v) {
    const float mag = std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
    if (mag > kMagThreshold) {
        angle *= 0.5f;
        const float c = std::cos(angle);
        const float s = std::sin(angle) / mag;
        return {v.x * s, v.y * s, v.z * s, c};
    }
    return Quat::identity();
}

Quat maya_q(float xr, float yr, float zr, EulerOrder order) {
    const Quat xq = quat_from_axis_angle(xr * kDegToRad, {1.f, 0.f, 0.f});
    const Quat yq = quat_from_axis_angle(yr * kDegToRad, {0.f, 1.f, 0.f});
    const Quat zq = quat_from_axis_angle(zr * kDegToRad, {0.f, 0.f, 1.f});
    switch (order) {
        case EulerOrder::XYZ: return ll_mul(ll_mul(xq, yq), zq);
        case EulerOrder::YZX: return ll_mul(ll_mul(yq, zq), xq);
        case EulerOrder::ZXY: return ll_mul(ll_mul(zq, xq), yq);
        case EulerOrder::XZY: return ll_mul(ll_mul(xq, zq), yq);
        case EulerOrder::YXZ: return ll_mul(ll_mul(yq, xq), zq);
        case EulerOrder::ZYX: return ll_mul(ll_mul(zq, yq), xq);
    }
    return Quat::identity();
}

Quat quat_from_roll_pitch_yaw(float roll, float pitch, float yaw) {
    roll *= 0.5f;
    pitch *= 0.5f;
    yaw *= 0.5f;
    const float sx = std::sin(roll), cx = std::cos(roll);
    const float sy = std::sin(pitch), cy = std::cos(pitch);
    const float sz = std::sin(yaw), cz = std::cos(yaw);
    return {sx * cy * cz + cx * sy * sz, cx * sy * cz - sx * cy * sz, cx * cy * sz + sx * sy * cz,
            cx * cy * cz - sx * sy * sz};
}

Vec3 pack_to_vector3(Quat q) {
    float x = q.x, y = q.y, z = q.z;
    const float w = q.w;
    const float mag = std::sqrt(x * x + y * y + z * z + w * w);
    if (mag > kMagThreshold) {
        x /= mag;
        y /= mag;
        z /= mag;
    }
    if (q.w >= 0) return {x, y, z};
    return {-x, -y, -z};
}

Quat unpack_from_vector3(Vec3 v) {
    const float t = 1.f - (v.x * v.x + v.y * v.y + v.z * v.z);
    return {v.x, v.y, v.z, t > 0 ? std::sqrt(t) : 0.f};
}

Quat matrix3_quaternion(const float (&m)[3][3]) {
    float q[4];
    const float tr = m[0][0] + m[1][1] + m[2][2];
    if (tr > 0.f) {
        float s = std::sqrt(tr + 1.f);
        q[3] = s / 2.f;
        s = 0.5f / s;
        q[0] = (m[1][2] - m[2][1]) * s;
        q[1] = (m[2][0] - m[0][2]) * s;
        q[2] = (m[0][1] - m[1][0]) * s;
    } else {
        int i = 0;
        if (m[1][1] > m[0][0]) i = 1;
        if (m[2][2] > m[i][i]) i = 2;
        const int nxt[3] = {1, 2, 0};
        const int j = nxt[i], k = nxt[j];
        float s = std::sqrt((m[i][i] - (m[j][j] + m[k][k])) + 1.f);
        q[i] = s * 0.5f;
        if (s != 0.f) s = 0.5f / s;
        q[3] = (m[j][k] - m[k][j]) * s;
        q[j] = (m[i][j] + m[j][i]) * s;
        q[k] = (m[i][k] + m[k][i]) * s;
    }
    return {q[0], q[1], q[2], q[3]};
}

Quat shortest_arc(Vec3 a, Vec3 b) {
    const float ab = dot(a, b);
    Vec3 c = cross(a, b);
    const float cc = dot(c, c);
    if (ab * ab + cc != 0.f) {
        if (cc > 0.f) {
            const float s = std::sqrt(ab * ab + cc) + ab;
            const float m = 1.f / std::sqrt(cc + s * s);
            return {c.x * m, c.y * m, c.z * m, s * m};
        }
        if (ab < 0.f) {
            c = a - b;
            const float m = std::sqrt(c.x * c.x + c.y * c.y);
            if (m > kMagThreshold) return {-c.y / m, c.x / m, 0.f, 0.f};
            return {1.f, 0.f, 0.f, 0.f};
        }
    }
    return Quat::identity();
}

float clamp_rescale(float x, float x1, float x2, float y1, float y2) {
    const float u = (x - x1) / (x2 - x1);
    const float r = y1 + ((y2 - y1) * u);
    const float lo = y1 < y2 ? y1 : y2;
    const float hi = y1 < y2 ? y2 : y1;
    return r < lo ? lo : (r > hi ? hi : r);
}

float smooth_interpolant(float dt, float tc) {
    if (tc == 0.f) return 1.f;
    const float i = 1.f - std::pow(2.f, -dt / tc);
    return i < 0.f ? 0.f : (i > 1.f ? 1.f : i);
}

std::uint16_t f32_to_u16(float val, float lo, float hi) {
    if (std::isnan(val)) return 0;
    val = val < lo ? lo : (val > hi ? hi : val);
    val -= lo;
    val /= (hi - lo);
    // A zero-width range (duration 0) gives 0/0: the viewer's cast is undefined there, the
    // x86 result is 0, and so is ours.
    const float code = std::floor(val * kU16Max);
    if (!(code >= 0.f)) return 0;
    if (code > kU16Max) return 65535;
    return static_cast<std::uint16_t>(code);
}

float u16_to_f32(std::uint16_t ival, float lo, float hi) {
    float val = static_cast<float>(ival) * kOoU16Max;
    const float delta = hi - lo;
    val *= delta;
    val += lo;
    const float max_error = delta * kOoU16Max;
    if (std::fabs(val) < max_error) val = 0.f;
    return val;
}

Vec3 quantize16(Vec3 v, float lo, float hi) {
    return {u16_to_f32(f32_to_u16(v.x, lo, hi), lo, hi), u16_to_f32(f32_to_u16(v.y, lo, hi), lo, hi),
            u16_to_f32(f32_to_u16(v.z, lo, hi), lo, hi)};
}

Quat ll_constrain(Quat q, float radians) {
    const float cos_lim = std::cos(radians / 2);
    const float sin_lim = std::sin(radians / 2);
    if (q.w < 0.f) q = {-q.x, -q.y, -q.z, -q.w};
    if (q.w < cos_lim) {
        q.w = cos_lim;
        const float axis_len = std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z);
        const float f = sin_lim / axis_len;
        q.x *= f;
        q.y *= f;
        q.z *= f;
    }
    return q;
}

void ll_euler_angles(Quat q, float& roll, float& pitch, float& yaw) {
    const float sx = 2 * (q.x * q.w - q.y * q.z);
    const float sy = 2 * (q.y * q.w + q.x * q.z);
    const float ys = q.w * q.w - q.y * q.y;
    const float xz = q.x * q.x - q.z * q.z;
    const float cx = ys - xz;
    const float cy = std::sqrt(sx * sx + cx * cx);
    if (cy > 0.000436f /* GIMBAL_THRESHOLD, llmath.h */) {
        roll = std::atan2(sx, cx);
        pitch = std::atan2(sy, cy);
        yaw = std::atan2(2 * (q.z * q.w - q.x * q.y), ys + xz);
    } else if (sy > 0) {
        pitch = 1.57079632679489661923f /* F_PI_BY_TWO */;
        yaw = 2 * std::atan2(q.z + q.x, q.w + q.y);
        roll = 0;
    } else {
        pitch = -1.57079632679489661923f /* F_PI_BY_TWO */;
        yaw = 2 * std::atan2(q.z - q.x, q.w - q.y);
        roll = 0;
    }
}

Quat quat_from_axes(Vec3 x_axis, Vec3 y_axis, Vec3 z_axis) {
    const float m[3][3] = {{x_axis.x, x_axis.y, x_axis.z}, {y_axis.x, y_axis.y, y_axis.z}, {z_axis.x, z_axis.y, z_axis.z}};
    return ll_normalize(matrix3_quaternion(m));
}

}  // namespace slanim
