// SPDX-License-Identifier: MIT
// Swing-twist joint limits (spec §9.6 TwistLimitedCone).
//
// Convention: a joint's local rotation q acts on vectors of the joint's own frame, giving them
// in the parent frame (world = ll_mul(local, parent_world), i.e. parent ⊗ local). At rest q is
// the identity and the bone points along `forward`. We split q = swing ⊗ twist (Hamilton: twist
// first): twist turns about `forward` itself, swing then tilts `forward` to rotate(forward, q).
// So the swing angle is exactly the angle between `forward` and the rotated bone axis, which is
// what a cone limit must bound, and the twist is the roll about the bone.
#include <cmath>

#include "chain_math.hpp"

namespace slanim::ik {

namespace {

constexpr float kTwoPi = 2.f * kPi;

bool in_range(float a, float lo, float hi) { return a >= lo && a <= hi; }

/// Unsigned distance between two angles on the circle, in [0, π].
float circle_distance(float a, float b) { return std::fabs(std::remainder(a - b, kTwoPi)); }

/// Clamps a twist angle θ ∈ [−π, π] into [lo, hi] as a rotation: outside the range the nearer
/// bound on the circle wins, so a twist just past −π is not clamped all the way round to `hi`,
/// and a half turn (θ = π) with lo = −π stays a half turn (distance 0 to lo).
float clamp_twist(float theta, float lo, float hi) {
    if (in_range(theta, lo, hi)) return theta;
    return circle_distance(theta, lo) <= circle_distance(theta, hi) ? lo : hi;
}

}  // namespace

Quat apply_limit(const JointLimit& limit, Quat local) {
    if (!limit.enabled) return local;
    const Quat input = local;
    Quat q = detail::unit(local);
    const Vec3 f = detail::normalized_or(limit.forward, Vec3{});
    if (f == Vec3{}) return q;  // no axis: nothing to measure against (validate rejects this)
    // Work in the w ≥ 0 hemisphere so that the twist angle 2·atan2(t, w) lies in [−π, π].
    if (q.w < 0.f) q = detail::negate(q);

    // Twist: the projection of q onto rotations about f, (f·(v·f), w) normalised. Undefined
    // (and taken as identity) for a half-turn swing about an axis perpendicular to f.
    const Vec3 v{q.x, q.y, q.z};
    const float t = dot(v, f);
    const float tn = std::sqrt(t * t + q.w * q.w);
    Quat twist = Quat::identity();
    float twist_angle = 0.f;
    if (tn > 1e-9f) {
        twist = {f.x * (t / tn), f.y * (t / tn), f.z * (t / tn), q.w / tn};
        twist_angle = 2.f * std::atan2(t, q.w);
    }
    // swing = q ⊗ twist⁻¹; its w = tn ≥ 0 and its axis is perpendicular to f.
    const Quat swing = hamilton(q, conjugate(twist));
    const Vec3 sv{swing.x, swing.y, swing.z};
    const float sv_len = length(sv);
    const float swing_angle = 2.f * std::atan2(sv_len, std::fabs(swing.w));

    const float new_twist = clamp_twist(twist_angle, limit.min_twist, limit.max_twist);
    const bool clamp_swing = swing_angle > limit.cone && sv_len > 1e-9f;
    if (new_twist == twist_angle && !clamp_swing) {
        return dot(q, input) < 0.f ? detail::negate(q) : q;
    }

    const Quat twist_out =
        new_twist == twist_angle ? twist : quat_from_axis_angle(new_twist, f);
    const Quat swing_out =
        clamp_swing ? quat_from_axis_angle(limit.cone, sv * (1.f / sv_len)) : swing;
    Quat out = detail::unit(hamilton(swing_out, twist_out));
    if (dot(out, input) < 0.f) out = detail::negate(out);
    return out;
}

}  // namespace slanim::ik
