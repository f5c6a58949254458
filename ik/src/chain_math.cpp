// SPDX-License-Identifier: MIT
#include "chain_math.hpp"

#include <cmath>

namespace slanim::ik::detail {

void forward_kinematics(const ChainPose& pose, ChainWorld& w) {
    const int n = static_cast<int>(pose.local_rotations.size());
    w.n = n;
    w.pos[n - 1] = pose.root_position;
    w.rot[n - 1] = ll_mul(pose.local_rotations[n - 1], pose.root_parent_rotation);
    update_below(pose, w, n - 1);
}

void update_below(const ChainPose& pose, ChainWorld& w, int from) {
    for (int k = from - 1; k >= 0; --k) {
        w.pos[k] = w.pos[k + 1] + rotate(pose.offsets[k], w.rot[k + 1]);
        w.rot[k] = ll_mul(pose.local_rotations[k], w.rot[k + 1]);
    }
    w.effector = w.pos[0] + rotate(pose.effector, w.rot[0]);
}

SolveStart::SolveStart(const ChainPose& pose, EndRotation mode) {
    save_local_rotations(pose, input);
    forward_kinematics(pose, w);
    keep = mode == EndRotation::Keep;
    saved_world0 = w.rot[0];
    keep_offset = rotate(pose.effector, saved_world0);
}

bool valid_pose(const ChainPose& pose) {
    const std::size_t n = pose.local_rotations.size();
    if (n < 2 || n > static_cast<std::size_t>(kMaxSolverJoints)) return false;
    if (pose.offsets.size() != n) return false;
    for (std::size_t k = 0; k < n; ++k) {
        if (!is_finite(pose.local_rotations[k])) return false;
        if (k + 1 < n && !is_finite(pose.offsets[k])) return false;
    }
    return is_finite(pose.root_position) && is_finite(pose.root_parent_rotation) &&
           is_finite(pose.effector);
}

bool valid_limits(std::span<const JointLimit> limits, std::size_t n) {
    if (limits.empty()) return true;
    if (limits.size() != n) return false;
    for (const JointLimit& l : limits) {
        if (!l.enabled) continue;
        if (!is_finite(l.forward) || length(l.forward) < 1e-6f) return false;
        if (!(l.cone >= 0.f && l.cone <= kPi)) return false;
        if (!(l.min_twist >= -kPi && l.min_twist <= l.max_twist && l.max_twist <= kPi)) return false;
    }
    return true;
}

bool valid_target(const Target& t) {
    if (!is_finite(t.point)) return false;
    if (t.kind == TargetKind::Plane && (!is_finite(t.normal) || length(t.normal) < 1e-6f))
        return false;
    return true;
}

void finish_end_rotation(const ChainPose& pose, const ChainWorld& w, EndRotation mode,
                         Quat saved_world) {
    if (mode == EndRotation::Follow) return;
    // local = saved_world · ~parent_world (viewer order), as applyConstraint's end_local_rot.
    pose.local_rotations[0] = ll_mul(saved_world, conjugate(w.rot[1]));
}


Vec3 normalized_or(Vec3 v, Vec3 fallback) {
    const float len = length(v);
    if (!(len > kTinyLength) || !std::isfinite(len)) return fallback;
    return v * (1.f / len);
}

Vec3 any_perpendicular(Vec3 v) {
    // Cross with the coordinate axis least aligned with v: never near-parallel.
    const float ax = std::fabs(v.x), ay = std::fabs(v.y), az = std::fabs(v.z);
    const Vec3 axis = (ax <= ay && ax <= az) ? Vec3{1.f, 0.f, 0.f}
                      : (ay <= az)           ? Vec3{0.f, 1.f, 0.f}
                                             : Vec3{0.f, 0.f, 1.f};
    return normalized_or(cross(v, axis), Vec3{1.f, 0.f, 0.f});
}

Quat aim_arc(Vec3 from, Vec3 to, Vec3 hint) { return aim_arc_impl(from, to, &hint); }
Quat aim_arc(Vec3 from, Vec3 to) { return aim_arc_impl(from, to, nullptr); }

Quat aim_arc_impl(Vec3 from, Vec3 to, const Vec3* given_hint) {
    const float la = length(from);
    const float lb = length(to);
    if (!(la > kTinyLength) || !(lb > kTinyLength)) return Quat::identity();
    const Vec3 a = from * (1.f / la);
    const Vec3 b = to * (1.f / lb);
    const float c = dot(a, b);
    if (c < -1.f + 1e-6f) {
        // Half turn: every axis perpendicular to `a` works; prefer the caller's so that, e.g., a
        // straight chain bends in a predictable plane. Without one, any_perpendicular(from),
        // computed only here (the solvers' joints rarely face exactly away).
        const Vec3 hint = given_hint ? *given_hint : any_perpendicular(from);
        Vec3 axis = hint - a * dot(a, hint);
        axis = normalized_or(axis, any_perpendicular(a));
        return {axis.x, axis.y, axis.z, 0.f};
    }
    // Half-angle form: (a × b, 1 + a·b) normalised is the rotation by angle(a, b) about a × b.
    const Vec3 x = cross(a, b);
    return unit(Quat{x.x, x.y, x.z, 1.f + c});
}

float rotation_angle_between(Quat a, Quat b) {
    // Vector part of a ⊗ b⁻¹ is sin(θ/2)·axis: atan2 keeps small angles precise where
    // acos(|a·b|) would round them to 0.
    const Quat r = hamilton(a, conjugate(b));
    const float s = std::sqrt(r.x * r.x + r.y * r.y + r.z * r.z);
    const float w = std::fabs(r.w);
    // Small angles (every joint of a converging solve): atan(x) = x − x³/3 + …, so for
    // x ≤ 1e-3 the quotient is within 3.4e-7 of the arc tangent, relative: below float
    // resolution, at a fraction of atan2's cost.
    if (s <= 1e-3f * w) return 2.f * (s / w);
    return 2.f * std::atan2(s, w);
}

float commit_world_rotation(const ChainPose& pose, ChainWorld& w, int k, Quat new_world,
                            std::span<const JointLimit> limits) {
    const Quat parent = parent_world(pose, w, k);
    Quat local = unit(ll_mul(new_world, conjugate(parent)));
    if (!limits.empty()) local = unit(apply_limit(limits[static_cast<std::size_t>(k)], local));
    const Quat old = pose.local_rotations[static_cast<std::size_t>(k)];
    // Stay in the previous iterate's hemisphere (the jobs align with their input at the end).
    if (dot(local, old) < 0.f) local = negate(local);
    const Quat world = ll_mul(local, parent);
    if (!is_finite(local) || !is_finite(world)) return 0.f;
    pose.local_rotations[static_cast<std::size_t>(k)] = local;
    w.rot[k] = world;
    return rotation_angle_between(local, unit(old));
}

bool valid_iterative_job(const ChainPose& pose, const Target& target,
                         const SolveSettings& settings) {
    if (!valid_pose(pose) || !valid_target(target)) return false;
    if (!valid_limits(settings.limits, pose.local_rotations.size())) return false;
    if (settings.max_iterations < 1) return false;
    return std::isfinite(settings.tolerance) && settings.tolerance >= 0.f;
}

Vec3 plane_normal(const Target& target) {
    return normalized_or(target.normal, Vec3{0.f, 0.f, 1.f});
}

SegmentLengths segment_lengths(const ChainPose& pose, EndRotation mode) {
    SegmentLengths s;
    const std::size_t n = pose.local_rotations.size();
    for (std::size_t k = 0; k + 1 < n; ++k) {
        Vec3 seg = pose.offsets[k];
        if (k == 0 && mode == EndRotation::Follow)
            seg = seg + rotate(pose.effector, pose.local_rotations[0]);
        const float len = length(seg);
        s.sum += len;
        s.longest = std::fmax(s.longest, len);
    }
    return s;
}

bool straight_goal(const Target& target, Vec3 root, Vec3 keep_offset, float reach, float slack,
                   Vec3& goal) {
    const Vec3 p = target.point - keep_offset;
    if (target.kind == TargetKind::Plane) {
        const Vec3 n = plane_normal(target);
        const float h = dot(root - p, n);
        if (std::fabs(h) < reach - slack) return false;
        goal = root - n * h;
        return true;
    }
    if (length(p - root) < reach - slack) return false;
    goal = p;
    return true;
}

float straighten_toward(const ChainPose& pose, ChainWorld& w, Vec3 goal, EndRotation mode,
                        std::span<const JointLimit> limits) {
    float moved = 0.f;
    for (int k = w.n - 1; k >= 1; --k) {
        const auto child = static_cast<std::size_t>(k - 1);
        Vec3 segment = pose.offsets[child];
        if (k == 1 && mode == EndRotation::Follow)
            segment = segment + rotate(pose.effector, pose.local_rotations[0]);
        const Vec3 current = rotate(segment, w.rot[k]);
        const Quat arc = aim_arc(current, goal - w.pos[k]);
        if (arc != Quat::identity())
            moved = std::fmax(moved, commit_world_rotation(pose, w, k, ll_mul(w.rot[k], arc),
                                                           limits));
        w.pos[k - 1] = w.pos[k] + rotate(pose.offsets[child], w.rot[k]);
        w.rot[k - 1] = ll_mul(pose.local_rotations[child], w.rot[k]);
    }
    w.effector = w.pos[0] + rotate(pose.effector, w.rot[0]);
    return moved;
}

bool chain_reachable(const ChainPose& pose, const Target& target, EndRotation mode,
                     Vec3 keep_offset) {
    const SegmentLengths s = segment_lengths(pose, mode);
    const float sum = s.sum;
    const float longest = s.longest;
    const bool keep = mode == EndRotation::Keep;
    const Vec3 goal = keep ? target.point - keep_offset : target.point;
    constexpr float kSlack = 1e-5f;
    if (target.kind == TargetKind::Plane) {
        return std::fabs(dot(pose.root_position - goal, plane_normal(target))) <= sum + kSlack;
    }
    const float dist = length(goal - pose.root_position);
    const float inner = std::fmax(0.f, 2.f * longest - sum);
    return dist <= sum + kSlack && dist >= inner - kSlack;
}

void save_local_rotations(const ChainPose& pose, LocalRotations& out) {
    for (std::size_t k = 0; k < pose.local_rotations.size(); ++k) out[k] = pose.local_rotations[k];
}

void match_input_hemispheres(const ChainPose& pose, const LocalRotations& input) {
    for (std::size_t k = 0; k < pose.local_rotations.size(); ++k) {
        if (dot(pose.local_rotations[k], input[k]) < 0.f)
            pose.local_rotations[k] = negate(pose.local_rotations[k]);
    }
}

void fill_report(SolveReport* report, int iterations, float initial_error, float error,
                 float tolerance, bool reachable) {
    if (report == nullptr) return;
    report->iterations = iterations;
    report->initial_error = initial_error;
    report->error = error;
    report->converged = error <= tolerance;
    report->reachable = reachable;
}

}  // namespace slanim::ik::detail

namespace slanim::ik {

Vec3 effector_position(const ChainPose& pose) {
    detail::ChainWorld w;
    detail::forward_kinematics(pose, w);
    return w.effector;
}

float target_error(const Target& target, Vec3 effector) {
    if (target.kind == TargetKind::Plane) {
        const float len = length(target.normal);
        const Vec3 n = target.normal * (1.f / len);
        return std::fabs(dot(effector - target.point, n));
    }
    return length(effector - target.point);
}

}  // namespace slanim::ik
