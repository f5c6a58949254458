// SPDX-License-Identifier: MIT
// FABRIK (Aristidou & Lasenby 2011, "FABRIK: A fast, iterative solver for the Inverse
// Kinematics problem", Graphical Models 73(5)): alternate a backward pass (end point placed on
// the goal, each point pulled toward its old position at its segment length, end to root) and
// a forward pass (root pinned back, root to end), then recover joint rotations from the points.
//
// End of the chain. The position solver moves points P[0..L], P[k] = J[k] for k ≥ 1, joined by
// rigid segments, and P[0] depends on the end-rotation mode:
//   Keep   — J[0]'s world rotation is fixed, so the effector is J[0] + d with d a fixed world
//            vector: P[0] = J[0] and the goal of P[0] is goal − d (segment J[1]→J[0] = bone).
//   Follow — J[0]'s local rotation is fixed, so the effector is rigid in J[1]'s frame:
//            P[0] = the effector itself and the last segment is J[1]→effector, which is J[1]'s
//            bone and J[0]'s effector offset as one rigid piece.
// Either way the segments are exactly rigid, so an unlimited solve recovers the points exactly.
//
// Each iteration runs both passes, then recovers rotations root→tip (shortest arc from the
// current bone to the solved one, then the joint's limit) and re-runs forward kinematics, so the
// next iteration starts from a pose the limits allow and the error is always that of a real pose.
#include <cmath>

#include "chain_math.hpp"

namespace slanim::ik {

namespace {

using detail::ChainWorld;
using Points = std::array<Vec3, kMaxSolverJoints>;

/// Lateral offset (fraction of a segment's length) given to interior points when the chain and
/// the goal are collinear: both passes keep collinear points on their line, where only a few
/// distances are reachable, so the symmetry must be broken once.
constexpr float kUnfoldFraction = 0.1f;

/// Interior points this close (relative to the chain's reach) to the root→goal line count as
/// collinear with it.
constexpr float kCollinearFraction = 1e-4f;

/// P[0..L] from the current FK (see the file comment for P[0]).
void points_from_pose(const ChainWorld& w, bool keep, Points& p) {
    p[0] = keep ? w.pos[0] : w.effector;
    for (int k = 1; k < w.n; ++k) p[k] = w.pos[k];
}

/// Moves p[k] toward `toward` (its old neighbour direction) to sit `len` from `anchor`. When the
/// old point coincides with the anchor, the pose's own bone direction `fallback` is used.
Vec3 place(Vec3 anchor, Vec3 old_point, float len, Vec3 fallback) {
    return anchor + detail::normalized_or(old_point - anchor, fallback) * len;
}

/// Turns J[L..1] so each bone points from the joint's current position at the solved child point
/// (root first, so every joint sees its parent's final rotation), with limits. Returns the largest
/// rotation change.
float recover_rotations(const ChainPose& pose, ChainWorld& w, bool keep, const Points& p,
                        std::span<const JointLimit> limits) {
    const int last = w.n - 1;
    float moved = 0.f;
    for (int k = last; k >= 1; --k) {
        // Current child point of J[k]: J[k−1], or for Follow at k = 1 the effector.
        Vec3 child_offset = pose.offsets[static_cast<std::size_t>(k - 1)];
        if (k == 1 && !keep)
            child_offset = child_offset + rotate(pose.effector, pose.local_rotations[0]);
        const Vec3 current = rotate(child_offset, w.rot[k]);
        const Vec3 wanted = p[k - 1] - w.pos[k];
        const Quat arc = detail::aim_arc(current, wanted);
        if (arc != Quat::identity()) {
            moved = std::fmax(moved, detail::commit_world_rotation(pose, w, k,
                                                                   ll_mul(w.rot[k], arc), limits));
        }
        // Position of J[k−1] under J[k]'s (possibly limited) rotation, for the next joint.
        w.pos[k - 1] = w.pos[k] + rotate(pose.offsets[static_cast<std::size_t>(k - 1)], w.rot[k]);
        if (k > 1)
            w.rot[k - 1] = ll_mul(pose.local_rotations[static_cast<std::size_t>(k - 1)], w.rot[k]);
    }
    detail::update_below(pose, w, 1);
    return moved;
}

}  // namespace

bool FabrikJob::validate() const { return detail::valid_iterative_job(pose, target, settings); }

bool FabrikJob::run() const {
    if (!validate()) return false;
    detail::SolveStart s(pose, settings.end_rotation);
    ChainWorld& w = s.w;
    const int last = w.n - 1;
    const Vec3 normal = detail::plane_normal(target);
    // The goal of P[0] lives in the frame where P[0] is the end point: shifted by −d with Keep.
    const Vec3 goal_shift = s.keep ? s.keep_offset : Vec3{};

    Points p{};
    std::array<float, kMaxSolverJoints> seg{};  // seg[k] = |P[k+1] − P[k]|
    points_from_pose(w, s.keep, p);
    float reach = 0.f;
    for (int k = 0; k < last; ++k) {
        seg[k] = length(p[k + 1] - p[k]);
        reach += seg[k];
    }
    const Vec3 root = w.pos[last];

    const float initial_error = target_error(target, s.effector());
    const bool reachable =
        detail::chain_reachable(pose, target, settings.end_rotation, s.keep_offset);
    float error = initial_error;
    int iterations = 0;
    bool unfolded = false;
    while (iterations < settings.max_iterations && error > settings.tolerance) {
        // Goal of P[0]. At or past full reach (less half the tolerance, where the straight chain
        // is already close enough) the straight chain toward the goal is the closest pose, and
        // the passes would only creep toward it. For a plane otherwise: the end point projected
        // onto the (shifted) plane, pulled back onto the reach sphere when it lies beyond it.
        Vec3 t;
        const bool straight = detail::straight_goal(target, root, goal_shift, reach,
                                                    0.5f * settings.tolerance, t);
        if (!straight) {
            t = target.point - goal_shift;
            if (target.kind == TargetKind::Plane) {
                const Vec3 plane_point = target.point - goal_shift;
                t = p[0] - normal * dot(p[0] - plane_point, normal);
                if (length(t - root) > reach) {
                    const float h = dot(root - plane_point, normal);
                    const Vec3 centre = root - normal * h;  // the plane point nearest the root
                    const Vec3 dir =
                        detail::normalized_or(t - centre, detail::any_perpendicular(normal));
                    t = centre + dir * std::sqrt(std::fmax(0.f, reach * reach - h * h));
                }
            }
        }

        const Vec3 root_to_goal = t - root;
        if (straight || length(root_to_goal) >= reach) {
            for (int k = last - 1; k >= 0; --k) {
                p[k] = place(p[k + 1], t, seg[k], detail::normalized_or(p[k] - p[k + 1], {}));
            }
        } else {
            if (!unfolded && last >= 2) {
                const Vec3 line = detail::normalized_or(
                    root_to_goal, detail::normalized_or(p[0] - root, Vec3{}));
                float off_line = 0.f;
                for (int k = 0; k < last; ++k) {
                    const Vec3 r = p[k] - root;
                    off_line = std::fmax(off_line, length(r - line * dot(r, line)));
                }
                if (off_line <= kCollinearFraction * reach) {
                    unfolded = true;
                    const Vec3 side = detail::any_perpendicular(line);
                    for (int k = 1; k < last; ++k) p[k] = p[k] + side * (kUnfoldFraction * seg[k]);
                }
            }
            // Backward pass: end point onto the goal, then toward the root.
            const Points old = p;
            p[0] = t;
            for (int k = 1; k <= last; ++k) {
                p[k] = place(p[k - 1], p[k], seg[k - 1],
                             detail::normalized_or(old[k] - old[k - 1], {}));
            }
            // Forward pass: root back to its pin, then out to the end.
            p[last] = root;
            for (int k = last - 1; k >= 0; --k) {
                p[k] = place(p[k + 1], p[k], seg[k],
                             detail::normalized_or(old[k] - old[k + 1], {}));
            }
        }

        const float moved = recover_rotations(pose, w, s.keep, p, settings.limits);
        ++iterations;
        const float before = error;
        error = target_error(target, s.effector());
        points_from_pose(w, s.keep, p);
        if (moved < 1e-7f) break;  // nothing changes any more (straight, or pinned by limits)
        // Straightening an already straight chain again only turns it by rounding noise.
        if (straight && !(error < before)) break;
    }

    detail::finish_end_rotation(pose, w, settings.end_rotation, s.saved_world0);
    detail::match_input_hemispheres(pose, s.input);
    const float final_error = target_error(target, effector_position(pose));
    detail::fill_report(report, iterations, initial_error, final_error, settings.tolerance,
                        reachable);
    return true;
}

}  // namespace slanim::ik
