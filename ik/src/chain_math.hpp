// SPDX-License-Identifier: MIT
// Private helpers shared by the chain solvers: forward kinematics of a ChainPose into fixed-size
// scratch arrays (no allocation), and the pose checks every job's validate() makes.
#pragma once

#include <array>
#include <cmath>

#include "slanim/ik/solvers.hpp"

namespace slanim::ik::detail {

/// World transforms of J[0..n−1] and the effector, computed from a ChainPose.
struct ChainWorld {
    int n = 0;
    std::array<Vec3, kMaxSolverJoints> pos{};
    std::array<Quat, kMaxSolverJoints> rot{};
    Vec3 effector;
};

/// World rotation of J[L]'s parent is pose.root_parent_rotation; J[k]'s world rotation is
/// ll_mul(local[k], world[k+1]); J[k]'s position is pos[k+1] + rotate(offsets[k], rot[k+1]).
void forward_kinematics(const ChainPose& pose, ChainWorld& out);

/// Recomputes positions and rotations of J[from−1..0] and the effector after J[from] changed
/// (pos[from] and rot[from] must be current).
void update_below(const ChainPose& pose, ChainWorld& w, int from);

/// Shared part of validate(): spans sized n with 2 ≤ n ≤ kMaxSolverJoints, finite inputs.
bool valid_pose(const ChainPose& pose);
bool valid_limits(std::span<const JointLimit> limits, std::size_t n);
bool valid_target(const Target& target);

/// Sets J[0]'s local rotation after its ancestors changed: Keep → the world rotation it had
/// before (`saved_world`), expressed under its new parent world rotation; Follow → unchanged.
void finish_end_rotation(const ChainPose& pose, const ChainWorld& w, EndRotation mode,
                         Quat saved_world);


// ---- Additions for the iterative and analytic solvers -----------------------------------------

/// Below this length (metres) a vector has no usable direction.
inline constexpr float kTinyLength = 1e-7f;

/// Exact normalisation (unlike ll_normalize, which skips rescaling within 1e-6); identity when
/// |q| is (near) zero or not finite. Inline: the solvers call it several times per joint step.
inline Quat unit(Quat q) {
    const float m = std::sqrt(dot(q, q));
    if (!(m > 1e-12f) || !std::isfinite(m)) return Quat::identity();
    const float inv = 1.f / m;
    return {q.x * inv, q.y * inv, q.z * inv, q.w * inv};
}
inline Quat negate(Quat q) { return {-q.x, -q.y, -q.z, -q.w}; }

/// v / |v|, or `fallback` when |v| ≤ kTinyLength.
Vec3 normalized_or(Vec3 v, Vec3 fallback);

/// A unit vector perpendicular to `v` (any one; deterministic). +X for a zero `v`.
Vec3 any_perpendicular(Vec3 v);

/// The rotation taking direction `from` to direction `to`, robust where shortest_arc is not:
/// identity when either vector is shorter than kTinyLength (a joint that cannot aim), and a half
/// turn about an axis perpendicular to `from` when the two are antiparallel or so close to it
/// that the cross product has no reliable direction (the viewer's shortestArc picks an axis in
/// the XY plane and only for exactly antiparallel input). The half-turn axis is `hint` made
/// perpendicular to `from` when that is possible, else any_perpendicular(from).
Quat aim_arc(Vec3 from, Vec3 to, Vec3 hint);
/// aim_arc with the hint any_perpendicular(from), computed only for a half turn.
Quat aim_arc(Vec3 from, Vec3 to);
Quat aim_arc_impl(Vec3 from, Vec3 to, const Vec3* hint);

/// Rotation angle (radians, [0, π]) between two unit quaternions, sign-insensitive. Below
/// ~2e-3 rad it is 2·|v|/|w| of a ⊗ b⁻¹ (within 3.4e-7 of the arc tangent, relative): the
/// solvers only compare it with their stall thresholds.
float rotation_angle_between(Quat a, Quat b);

/// World rotation of J[k]'s parent: pose.root_parent_rotation for the root J[n−1].
inline Quat parent_world(const ChainPose& pose, const ChainWorld& w, int k) {
    return k == w.n - 1 ? pose.root_parent_rotation : w.rot[k + 1];
}

/// Gives J[k] the world rotation `new_world`: local = new_world · ~parent_world (viewer order),
/// clamped by limits[k] when `limits` is not empty, kept in the previous local's hemisphere
/// (the jobs align with the input's at the end: match_input_hemispheres), written
/// to pose.local_rotations[k] and w.rot[k] (positions below are NOT updated: call update_below).
/// A non-finite result leaves the joint unchanged. Returns the angle the local rotation moved
/// (0 when unchanged).
float commit_world_rotation(const ChainPose& pose, ChainWorld& w, int k, Quat new_world,
                            std::span<const JointLimit> limits);

/// Shared part of the iterative jobs' validate(): pose, target, limits and settings.
bool valid_iterative_job(const ChainPose& pose, const Target& target,
                         const SolveSettings& settings);

/// The target plane's unit normal (Plane targets).
Vec3 plane_normal(const Target& target);

/// The effector when J[0] keeps its start world rotation: J[0]'s position plus the effector
/// offset as it was in world space at the start (`keep_offset`).
inline Vec3 kept_effector(const ChainWorld& w, Vec3 keep_offset) {
    return w.pos[0] + keep_offset;
}

/// Whether the target lies in the chain's reach, ignoring limits. The chain is modelled as the
/// rigid segments the solvers move: bones J[L]→…→J[1], then with Keep the bone J[1]→J[0] and
/// a goal shifted by −keep_offset (J[0] must reach goal − d because d is fixed in world space),
/// with Follow the segment J[1]→effector (J[0]'s local rotation is fixed, so the effector is
/// rigid in J[1]'s frame). Point targets must lie in the annulus [max(0, 2·longest − sum), sum]
/// around the root; planes within `sum` of it. 1e-5 m of slack absorbs float rounding.
bool chain_reachable(const ChainPose& pose, const Target& target, EndRotation mode,
                     Vec3 keep_offset);

/// Sum and longest of the rigid segments described at chain_reachable.
struct SegmentLengths {
    float sum = 0.f;
    float longest = 0.f;
};
SegmentLengths segment_lengths(const ChainPose& pose, EndRotation mode);

/// True when the target (shifted by −keep_offset: pass {} for Follow) lies at or beyond the
/// chain's full `reach` from `root`, less `slack`; then the straight chain aimed at `goal` is the
/// closest pose: for a point, the shifted point; for a plane, its point nearest the root.
bool straight_goal(const Target& target, Vec3 root, Vec3 keep_offset, float reach, float slack,
                   Vec3& goal);

/// Aims the whole chain straight at `goal`, root to tip: each joint turns (shortest arc, then
/// its limit) so that its rigid segment (J[k]→J[k−1]; for k = 1 with Follow J[1]→effector)
/// points from the joint at the goal. Updates `w` (positions, rotations, effector). Returns the
/// largest local rotation change.
float straighten_toward(const ChainPose& pose, ChainWorld& w, Vec3 goal, EndRotation mode,
                        std::span<const JointLimit> limits);

/// Local rotations as a run() found them, to put the results back in the same hemispheres.
using LocalRotations = std::array<Quat, kMaxSolverJoints>;
void save_local_rotations(const ChainPose& pose, LocalRotations& out);

/// Negates every output local rotation whose dot product with its input is negative (same
/// rotation, other sign), so that blending input and output (nlerp) never takes the long way.
void match_input_hemispheres(const ChainPose& pose, const LocalRotations& input);

/// What every solver's run() sets up first: the input local rotations (to restore their
/// hemispheres at the end), the chain's world transforms, and, for EndRotation::Keep, the end
/// joint's start world rotation and the effector offset as a world vector: with Keep the offset
/// stays fixed in world space for the whole solve, whatever the (Follow-style) local rotation of
/// J[0] in `w` says.
struct SolveStart {
    LocalRotations input{};
    ChainWorld w;
    bool keep = false;
    Quat saved_world0;
    Vec3 keep_offset;
    SolveStart(const ChainPose& pose, EndRotation mode);
    /// The effector as the solve sees it: J[0] + keep_offset with Keep, else the FK effector.
    [[nodiscard]] Vec3 effector() const { return keep ? kept_effector(w, keep_offset) : w.effector; }
};

/// Fills the parts of a SolveReport every job fills the same way; no-op for a null report.
void fill_report(SolveReport* report, int iterations, float initial_error, float error,
                 float tolerance, bool reachable);

}  // namespace slanim::ik::detail
