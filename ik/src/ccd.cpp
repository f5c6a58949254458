// SPDX-License-Identifier: MIT
// Cyclic coordinate descent (Wang & Chen 1991, "A combined optimization method for solving the
// inverse kinematics problem of mechanical manipulators"; Kenwright 2012): each sweep visits
// J[1] (next to the end joint) up to the root J[L] and turns that one joint, in world space, by
// the shortest arc that points joint→effector at joint→goal, which is the single-joint optimum.
#include <cmath>

#include "chain_math.hpp"

namespace slanim::ik {

namespace {

using detail::ChainWorld;

/// Turn applied to every joint when a sweep cannot move any joint although the goal is reachable:
/// a chain lying on the line through the goal is a stationary point of CCD (every joint already
/// points the effector at the goal, or exactly away from it), so something must break symmetry.
constexpr float kNudgeAngle = 0.1f;

/// A sweep whose largest joint change is below this (radians) made no progress.
constexpr float kStallAngle = 1e-7f;

/// Where joint J[k] should aim the effector. For a point, the point. For a plane, the nearest
/// spot the effector can reach by turning J[k] alone: it stays on the sphere about the joint
/// through the effector, so the goal is the point of that sphere's circle on the plane nearest
/// the effector, or, when the sphere misses the plane, the sphere point nearest the plane. This
/// is the exact single-joint optimum, as the point case is (plain projection of the effector on
/// the plane would land off the plane and converge more slowly).
Vec3 joint_goal(const Target& target, Vec3 shift, Vec3 normal, Vec3 joint, Vec3 effector) {
    const Vec3 goal = target.point - shift;
    if (target.kind == TargetKind::Point) return goal;
    const float r = length(effector - joint);
    const float h = dot(joint - goal, normal);  // signed height of the joint above the plane
    if (std::fabs(h) >= r) return joint - normal * (h > 0.f ? r : -r);
    const Vec3 centre = joint - normal * h;
    const Vec3 in_plane = (effector - centre) - normal * dot(effector - centre, normal);
    const Vec3 dir = detail::normalized_or(in_plane, detail::any_perpendicular(normal));
    return centre + dir * std::sqrt(r * r - h * h);
}

/// A sweep that leaves more than this share of the error makes slow progress: the next sweep
/// turns J[1] by triangulation instead of aiming it.
constexpr float kSlowSweep = 0.5f;

/// Triangulation (Müller-Cajar & Mukundan 2007, "Triangulation: a new algorithm for inverse
/// kinematics"): the world-space turn of J[1] about the normal of the plane through the root,
/// J[1] and the aim point that puts the aim point at the goal's distance from the root; the
/// root's aim then lands it on the goal. It cures CCD's slow creep when the goal lies a little
/// inside full reach (each plain sweep then adds only a sliver of bend). Identity when J[1]
/// alone cannot make that distance, or when root, joint and aim point are collinear (no plane:
/// the stall nudge handles a straight chain).
Quat triangulation_arc(Vec3 root, Vec3 joint, Vec3 aim, Vec3 goal) {
    const Vec3 u = root - joint, v = aim - joint;
    const float l1 = length(u), l2 = length(v), d = length(goal - root);
    if (!(l1 > detail::kTinyLength) || !(l2 > detail::kTinyLength)) return Quat::identity();
    const float c = (l1 * l1 + l2 * l2 - d * d) / (2.f * l1 * l2);
    if (!(c >= -1.f && c <= 1.f)) return Quat::identity();
    const Vec3 normal = cross(u, v);
    const float sin_part = length(normal);
    if (!(sin_part > 1e-6f * l1 * l2)) return Quat::identity();
    // Turning v about u × v by a positive angle opens the angle between u and v.
    const float delta = std::acos(c) - std::atan2(sin_part, dot(u, v));
    return quat_from_axis_angle(delta, normal);
}

}  // namespace

bool CcdJob::validate() const { return detail::valid_iterative_job(pose, target, settings); }

bool CcdJob::run() const {
    if (!validate()) return false;
    detail::SolveStart s(pose, settings.end_rotation);
    ChainWorld& w = s.w;
    const int last = w.n - 1;  // L: the root
    const Vec3 normal = detail::plane_normal(target);
    // What each joint aims, and where. With Follow: the effector at the goal. With Keep the
    // effector is J[0] + d for a fixed world d, so it circles `joint + d`, not the joint, and
    // aiming it from the joint is not the joint's best turn; aiming J[0] at goal − d is, and has
    // the same solutions (effector on the goal ⇔ J[0] on goal − d).
    const Vec3 goal_shift = s.keep ? s.keep_offset : Vec3{};
    auto aim_point = [&]() { return s.keep ? w.pos[0] : w.effector; };

    const float initial_error = target_error(target, s.effector());
    const bool reachable =
        detail::chain_reachable(pose, target, settings.end_rotation, s.keep_offset);
    // At or past full reach the answer is known: the straight chain toward the goal. CCD gets
    // there only asymptotically (each sweep removes a sliver of bend), so aim it straight in one
    // root-to-tip pass instead; half the tolerance of slack makes a goal a hair inside full reach
    // count too, since the straight chain is then within tolerance of it.
    const float reach = detail::segment_lengths(pose, settings.end_rotation).sum;
    const float slack = 0.5f * settings.tolerance;
    float error = initial_error;
    int sweeps = 0;
    bool nudged = false;
    bool triangulate = false;  // set after a slow sweep (see kSlowSweep)
    // A triangulating sweep that did not help: plain CCD from then on. Not with a limit on J[1]:
    // the clamp would undo the bend the triangle asks for.
    bool triangulation_failed = !settings.limits.empty() && settings.limits[1].enabled;
    while (sweeps < settings.max_iterations && error > settings.tolerance) {
        float moved = 0.f;
        const bool triangulating = triangulate;
        detail::LocalRotations undo{};
        if (triangulating) detail::save_local_rotations(pose, undo);
        Vec3 straight_at;
        if (detail::straight_goal(target, w.pos[last], goal_shift, reach, slack, straight_at)) {
            moved = detail::straighten_toward(pose, w, straight_at, settings.end_rotation,
                                              settings.limits);
            ++sweeps;
            const float before = error;
            error = target_error(target, s.effector());
            // Already straight (or held by limits). Aiming a straight chain again only turns
            // its joints by rounding noise, which can exceed kStallAngle: a pass that brings
            // the effector no closer is the end as well.
            if (moved < kStallAngle || !(error < before)) break;
            continue;
        }
        for (int k = 1; k <= last; ++k) {
            const Vec3 e = aim_point();
            const Vec3 to_effector = e - w.pos[k];
            const Vec3 to_goal = joint_goal(target, goal_shift, normal, w.pos[k], e) - w.pos[k];
            // Antiparallel (effector pointing straight away from the goal): a half turn. Hint the
            // axis perpendicular to the bone so a straight chain folds in a definite plane.
            Quat arc = Quat::identity();
            if (triangulate && k == 1 && last >= 2 && target.kind == TargetKind::Point)
                arc = triangulation_arc(w.pos[last], w.pos[1], e, target.point - goal_shift);
            if (arc == Quat::identity())
                arc = detail::aim_arc(to_effector, to_goal);
            if (arc == Quat::identity()) continue;  // degenerate or already aimed
            // World-space turn: apply the old world rotation, then the arc.
            const Quat new_world = ll_mul(w.rot[k], arc);
            const float change =
                detail::commit_world_rotation(pose, w, k, new_world, settings.limits);
            if (change > 0.f) detail::update_below(pose, w, k);
            moved = std::fmax(moved, change);
        }
        ++sweeps;
        const float before = error;
        error = target_error(target, s.effector());
        // A CCD sweep never moves the effector away from the goal (each turn is its joint's
        // optimum), so a sweep that brings it no closer has reached a stationary point, even
        // when rounding noise still turns the joints by more than kStallAngle.
        if (triangulating && !(error < before)) {
            // Unlike an aim, a triangulation can move the effector away (longer chains: the
            // joints between J[1] and the root then re-aim from a new bend). The sweep is undone
            // (so the error never grows from sweep to sweep) and plain CCD goes on from there.
            for (std::size_t k = 0; k < pose.local_rotations.size(); ++k) pose.local_rotations[k] = undo[k];
            detail::forward_kinematics(pose, w);
            error = before;
            triangulation_failed = true;
            triangulate = false;
            continue;
        }
        const bool stalled = moved < kStallAngle || !(error < before);
        triangulate = !triangulation_failed && reachable && error > kSlowSweep * before;
        if (stalled && error > settings.tolerance) {
            // Stationary: the chain lies on the line through the goal (every joint sees the
            // effector straight toward or away from it), or limits pin it. Turn every joint a
            // little about one axis across that line, then carry on; if it stalls again, it is
            // a true optimum. The root must turn too: were it still, J[1] would see the
            // effector and the goal on one line again and undo its own bend at the next sweep.
            if (!reachable || nudged) break;
            nudged = true;
            Vec3 line = target.point - goal_shift - w.pos[last];
            if (length(line) <= detail::kTinyLength) line = aim_point() - w.pos[last];
            const Quat bend = quat_from_axis_angle(kNudgeAngle, detail::any_perpendicular(line));
            for (int k = last; k >= 1; --k) {
                if (detail::commit_world_rotation(pose, w, k, ll_mul(w.rot[k], bend),
                                                  settings.limits) > 0.f)
                    detail::update_below(pose, w, k);
            }
            error = target_error(target, s.effector());
        }
    }

    detail::finish_end_rotation(pose, w, settings.end_rotation, s.saved_world0);
    detail::match_input_hemispheres(pose, s.input);
    // Report from a fresh FK of what was written, the pose callers will see.
    const float final_error = target_error(target, effector_position(pose));
    detail::fill_report(report, sweeps, initial_error, final_error, settings.tolerance,
                        reachable);
    return true;
}

}  // namespace slanim::ik
