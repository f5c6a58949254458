// SPDX-License-Identifier: MIT
// Analytic two-bone solver after the viewer's LLJointSolverRP3::solve (lljointsolverrp3.cpp,
// spec §4.3): the law of cosines bends B, then one world rotation of A — aim A→C at the goal,
// turn the ABC plane onto the plane of the pole vector and A→goal, twist about A→goal.
//
// Viewer notation: `v * q` is rotate(v, q); `a * b` on quaternions is ll_mul(a, b) ("a, then b");
// `setWorldRotation(getWorldRotation() * r)` is new_world = ll_mul(world, r).
//
// Deliberate differences from the viewer, all where the viewer is degenerate or inexact:
//   * C is the effector. With EndRotation::Keep the effector hangs off J[0] by a vector fixed in
//     world space, which is not rigid with B; so C = J[0] and the goal is moved by −d instead
//     (exact). With Follow the effector is rigid in B's frame and is used as C directly.
//   * The viewer switches the bend axis to pole × AB when |AB × BC|² < 0.001 m², an absolute
//     threshold that for arm-sized bones (0.25 m, 0.2 m) fires below ~40° of elbow bend and then
//     bends about an axis not perpendicular to BC, missing the goal. We switch only when AB and
//     BC are parallel (relative test), so reachable goals are met exactly.
//   * When A→goal is parallel to the pole, or the chain and pole are all parallel, the viewer
//     returns without solving; we still bend and aim and only skip the plane rotation.
//   * The viewer leaves the ABC plane alone when it is within are_parallel's 0.001 (about 2.6°)
//     of the pole plane, and after the bend keeps the old plane normal when AB and BC are
//     within 2.6° of parallel; both leave the elbow visibly off the pole plane near full
//     extension. We always rotate the plane exactly and fall back only when AB × BC is
//     numerically zero.
//   * The plane normal is made perpendicular to A→goal before the plane rotation, so the
//     rotation is about A→goal and cannot move C off the goal (matters only with setBAxis).
#include <cmath>

#include "chain_math.hpp"

namespace slanim::ik {

namespace {

using detail::ChainWorld;

/// llmath `are_parallel(a, b, epsilon)`: 1 − |â·b̂| < epsilon (zero vectors are not parallel).
bool are_parallel(Vec3 a, Vec3 b, float epsilon) {
    const Vec3 an = detail::normalized_or(a, Vec3{});
    const Vec3 bn = detail::normalized_or(b, Vec3{});
    return (1.f - std::fabs(dot(an, bn))) < epsilon;
}

/// Angle between two vectors in [0, π]; atan2 keeps it accurate near 0 and π.
float angle_between(Vec3 a, Vec3 b) { return std::atan2(length(cross(a, b)), dot(a, b)); }

constexpr float kParallelEpsilon = 0.001f;  // the viewer's are_parallel tolerance

}  // namespace

bool TwoBoneJob::validate() const {
    if (!detail::valid_pose(pose) || pose.local_rotations.size() != 3) return false;
    if (target.kind != TargetKind::Point || !detail::valid_target(target)) return false;
    if (!is_finite(pole) || length(pole) < 1e-6f || !std::isfinite(twist)) return false;
    if (use_b_axis && (!is_finite(b_axis) || length(b_axis) < 1e-6f)) return false;
    return true;
}

bool TwoBoneJob::run() const {
    if (!validate()) return false;
    detail::SolveStart s(pose, end_rotation);
    ChainWorld& w = s.w;
    const float initial_error = target_error(target, s.effector());
    const bool reachable = detail::chain_reachable(pose, target, end_rotation, s.keep_offset);

    const Vec3 a_pos = w.pos[2];
    const Vec3 b_pos = w.pos[1];
    const Vec3 c_pos = s.keep ? w.pos[0] : w.effector;
    const Vec3 g_pos = s.keep ? target.point - s.keep_offset : target.point;
    // The pole is given in A's parent frame (the viewer rotates it by A's parent world matrix).
    const Vec3 pole_vec = rotate(detail::normalized_or(pole, Vec3{1.f, 0.f, 0.f}),
                                 pose.root_parent_rotation);

    Vec3 ab = b_pos - a_pos;
    Vec3 bc = c_pos - b_pos;
    const Vec3 ag = g_pos - a_pos;
    const float ab_len = length(ab);
    const float bc_len = length(bc);
    const float ag_len = length(ag);

    // Normal of the original ABC plane (viewer fallbacks when the arm is straight).
    Vec3 abc_norm;
    if (!use_b_axis) {
        if (are_parallel(ab, bc, kParallelEpsilon)) {
            if (are_parallel(pole_vec, ab, kParallelEpsilon)) {
                abc_norm = are_parallel(pole_vec, ag, kParallelEpsilon)
                               ? detail::any_perpendicular(ab)  // viewer: singular, gives up
                               : cross(pole_vec, ag);
            } else {
                abc_norm = cross(pole_vec, ab);
            }
        } else {
            abc_norm = cross(ab, bc);
        }
    } else {
        abc_norm = rotate(detail::normalized_or(b_axis, Vec3{0.f, 1.f, 0.f}), w.rot[1]);
    }

    // Bend B so that |AC| = |AG|: the angle between AB and BC must become θ with
    // |AG|² = |AB|² + |BC|² + 2|AB||BC|cos θ (θ = 0 straight, π folded; clamped when out of reach,
    // which leaves the arm straight toward, or folded at, the goal).
    Quat b_rot = Quat::identity();
    if (ab_len > detail::kTinyLength && bc_len > detail::kTinyLength) {
        const float abbc_ang = angle_between(ab, bc);
        Vec3 bend_axis = cross(ab, bc) * (1.f / (ab_len * bc_len));  // |sin| of the bend
        if (dot(bend_axis, bend_axis) < 1e-8f) {
            // Straight or folded: any axis perpendicular to AB bends correctly; the viewer's
            // pole × AB puts B on the pole side.
            bend_axis = cross(pole_vec, ab);
            if (length(bend_axis) <= detail::kTinyLength)
                bend_axis = detail::any_perpendicular(ab);
        }
        bend_axis = detail::normalized_or(bend_axis, detail::any_perpendicular(ab));
        float cos_theta = (ag_len * ag_len - ab_len * ab_len - bc_len * bc_len) /
                          (2.f * ab_len * bc_len);
        cos_theta = std::fmin(1.f, std::fmax(-1.f, cos_theta));
        const float theta = std::acos(cos_theta);
        b_rot = quat_from_axis_angle(theta - abbc_ang, bend_axis);
        bc = rotate(bc, b_rot);
    }

    // Aim: rotate the new A→C onto A→G.
    const Vec3 ac = ab + bc;
    const Quat cg_rot = detail::aim_arc(ac, ag, abc_norm);
    ab = rotate(ab, cg_rot);
    bc = rotate(bc, cg_rot);
    abc_norm = rotate(abc_norm, cg_rot);

    // Plane: turn the ABC plane about A→G onto the plane containing the pole and A→G.
    Quat p_rot = Quat::identity();
    if (!are_parallel(ag, pole_vec, kParallelEpsilon) && ag_len > detail::kTinyLength) {
        const Vec3 apg_norm = detail::normalized_or(cross(pole_vec, ag), Vec3{});
        // The bent arm's own plane normal, unless AB and BC are still (numerically) parallel —
        // out of reach or folded — where the normal carried from before the bend is used.
        if (!use_b_axis && length(cross(ab, bc)) > 1e-5f * ab_len * bc_len) {
            abc_norm = cross(ab, bc);
        }
        const Vec3 ag_dir = ag * (1.f / ag_len);
        abc_norm = abc_norm - ag_dir * dot(abc_norm, ag_dir);
        abc_norm = detail::normalized_or(abc_norm, Vec3{});
        // Shortest arc between two normals perpendicular to A→G: a turn about A→G, and a half
        // turn about A→G when they are opposite (aim_arc's hint).
        if (abc_norm != Vec3{} && apg_norm != Vec3{}) {
            p_rot = detail::aim_arc(abc_norm, apg_norm, ag);
        }
    }
    const Quat twist_rot = quat_from_axis_angle(twist, ag);

    // A's world turn: aim, then plane, then twist (viewer `cgRot * pRot * twistRot`).
    const Quat a_rot = ll_mul(ll_mul(cg_rot, p_rot), twist_rot);
    // B's world rotation gets bRot under A's old world rotation; A's turn then carries it along.
    const Quat parent_a = pose.root_parent_rotation;
    const Quat old_world_a = w.rot[2];
    Quat local_b = detail::unit(ll_mul(ll_mul(w.rot[1], b_rot), conjugate(old_world_a)));
    Quat local_a = detail::unit(ll_mul(ll_mul(old_world_a, a_rot), conjugate(parent_a)));
    if (is_finite(local_a) && is_finite(local_b)) {
        if (dot(local_a, pose.local_rotations[2]) < 0.f) local_a = detail::negate(local_a);
        if (dot(local_b, pose.local_rotations[1]) < 0.f) local_b = detail::negate(local_b);
        pose.local_rotations[2] = local_a;
        pose.local_rotations[1] = local_b;
    }
    detail::forward_kinematics(pose, w);
    detail::finish_end_rotation(pose, w, end_rotation, s.saved_world0);
    detail::match_input_hemispheres(pose, s.input);
    const float final_error = target_error(target, effector_position(pose));
    detail::fill_report(report, 1, initial_error, final_error, SolveSettings{}.tolerance,
                        reachable);
    return true;
}

}  // namespace slanim::ik
