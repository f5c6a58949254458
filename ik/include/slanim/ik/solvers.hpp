// SPDX-License-Identifier: MIT
// Chain IK solvers as ozz-style jobs: plain structs with inputs, in/out spans, validate() and
// run(), no allocation in run().
//
// Frames and units: SL avatar space (X forward, Y left, Z up), metres, radians. Quaternions
// follow the viewer's conventions (slanim/core/math.hpp): a joint's world rotation is
// ll_mul(local, parent_world), a child's world position is parent_world_position +
// rotate(offset, parent_world_rotation).
//
// A chain is J[0..L] with J[0] the end joint and J[L] the chain root (spec §4.1 notation;
// L = chain length, n = L + 1 joints). The root's position is pinned; the solvers change the
// local rotations of J[1..L] and then set J[0]'s local rotation by `EndRotation`. The end
// effector is a point fixed in J[0]'s frame (for .anim constraints, a collision volume point).
#pragma once

#include <cstdint>
#include <span>

#include "slanim/core/math.hpp"

namespace slanim::ik {

/// Largest chain the solvers accept: J[0..31] (the viewer's constraints use at most 4 joints
/// above the end joint; longer chains are for experiments).
inline constexpr int kMaxSolverJoints = 32;
inline constexpr float kPi = 3.14159265358979323846f;

/// Per-joint rotation limit as the puppetry solver uses (spec §9.6 TwistLimitedCone): the
/// joint's local rotation (relative to its rest orientation, which is identity for SL bones) is
/// split into swing × twist about `forward`; the swing angle is clamped to `cone` and the twist
/// angle to [min_twist, max_twist].
struct JointLimit {
    bool enabled = false;
    Vec3 forward{1.f, 0.f, 0.f};  ///< bone axis in the joint's parent frame at rest (unit)
    float cone = kPi;             ///< maximum swing angle, radians, [0, π]
    float min_twist = -kPi;       ///< radians, [−π, max_twist]
    float max_twist = kPi;        ///< radians, [min_twist, π]
};

/// Swing-twist clamp of `local` by `limit` (identity when !limit.enabled). Returns a unit
/// quaternion in the same hemisphere as the input.
Quat apply_limit(const JointLimit& limit, Quat local);

enum class TargetKind : std::uint8_t { Point, Plane };

/// Where the end effector should go: a point, or any point of a plane (point + unit normal).
struct Target {
    TargetKind kind = TargetKind::Point;
    Vec3 point;                ///< world position, metres
    Vec3 normal{0.f, 0.f, 1.f};  ///< plane normal (Plane only; normalised inside)
};

/// What happens to the end joint J[0] after its ancestors moved.
enum class EndRotation : std::uint8_t {
    Keep,    ///< J[0] keeps its world rotation (the viewer's constraints, spec §4.2 step 8.6)
    Follow,  ///< J[0] keeps its local rotation and turns with its parent
};

/// The chain in and out. Spans have n = L + 1 entries, index 0 = end joint J[0].
struct ChainPose {
    /// offsets[k]: J[k]'s position in J[k+1]'s frame, already multiplied by J[k+1]'s local
    /// scale (metres), for k < n − 1. offsets[n − 1] is ignored (the root is pinned).
    std::span<const Vec3> offsets;
    /// Local rotations of J[0..L], in/out.
    std::span<Quat> local_rotations;
    Vec3 root_position;               ///< world position of J[L]
    Quat root_parent_rotation;        ///< world rotation of J[L]'s parent
    Vec3 effector;                    ///< end effector in J[0]'s frame (metres)
};

/// Common solver settings.
struct SolveSettings {
    float tolerance = 0.0005f;  ///< metres: stop when the effector is this close to the target
    int max_iterations = 20;    ///< ≥ 1
    EndRotation end_rotation = EndRotation::Keep;
    /// Empty, or n limits (limits[0], J[0]'s, is ignored: the end joint is not solved).
    std::span<const JointLimit> limits;
};

/// What a run did. Errors are effector-to-target distances in metres (for planes, the distance
/// to the plane).
struct SolveReport {
    int iterations = 0;
    float initial_error = 0.f;
    float error = 0.f;
    bool converged = false;  ///< error ≤ tolerance
    bool reachable = true;   ///< the target lies within the chain's reach
};

/// Effector world position and error for the pose as it stands (no solving). Used by reports and
/// tests. Precondition: pose valid.
Vec3 effector_position(const ChainPose& pose);
float target_error(const Target& target, Vec3 effector);

/// Cyclic coordinate descent (Wang & Chen 1991; Kenwright 2012): from J[1] up to J[L], each joint
/// turns (shortest arc, then its limit) so the joint→effector direction points at the target;
/// sweeps repeat until the tolerance, the iteration limit, or a stationary point: a sweep that
/// turns no joint by more than 1e-7 rad or brings the effector no closer (a stationary point on
/// the line through the goal gets one nudge first). After a sweep that leaves more than half the
/// error (a reachable point target next to full reach, where plain CCD crawls), the next sweep
/// turns J[1] by triangulation (Müller-Cajar & Mukundan 2007): about the normal of the plane
/// through the root, J[1] and the effector, to put the effector at the goal's distance from the
/// root; a triangulating sweep that does not reduce the error is undone and plain CCD goes on
/// (so the error never grows from sweep to sweep). Not when J[1] has an enabled limit.
/// Unreachable targets straighten the chain toward them, which ends as soon as a pass brings
/// the effector no closer. Default solver of the runtime.
struct CcdJob {
    ChainPose pose;
    Target target;
    SolveSettings settings;
    SolveReport* report = nullptr;  ///< optional output

    /// False when spans are empty or mismatched, n < 2 or n > kMaxSolverJoints, limits has the
    /// wrong size, max_iterations < 1, tolerance < 0, or any input is not finite.
    [[nodiscard]] bool validate() const;
    /// Solves in place. Returns false (pose untouched) when !validate(). Never produces NaN.
    bool run() const;
};

/// FABRIK (Aristidou & Lasenby 2011): backward and forward reaching passes over joint positions,
/// then rotations recovered by shortest arc per bone (limits applied during recovery). Passes
/// repeat until the tolerance, the iteration limit, a pass that turns no joint by more than
/// 1e-7 rad, or (target out of reach) a straightening pass that brings the effector no closer.
struct FabrikJob {
    ChainPose pose;
    Target target;
    SolveSettings settings;
    SolveReport* report = nullptr;
    [[nodiscard]] bool validate() const;
    bool run() const;
};

/// Analytic two-bone solver with `LLJointSolverRP3` behaviour (spec §4.3): chain of exactly three
/// joints, J[2] = A (shoulder/hip), J[1] = B (elbow/knee), J[0] = C (wrist/ankle); the effector is
/// J[0]'s position plus `pose.effector`. Law of cosines for B, then A aims at the goal, the ABC
/// plane is turned toward the pole vector and twisted by `twist` about A→goal.
struct TwoBoneJob {
    ChainPose pose;
    Target target;  ///< Point only
    Vec3 pole{1.f, 0.f, 0.f};  ///< pole vector in A's parent frame (viewer default +X)
    float twist = 0.f;         ///< radians about A→goal
    /// `setBAxis`: the ABC plane normal is this axis (in B's frame) instead of ab×bc.
    bool use_b_axis = false;
    Vec3 b_axis{0.f, 1.f, 0.f};
    EndRotation end_rotation = EndRotation::Keep;
    SolveReport* report = nullptr;  ///< converged: error ≤ 0.5 mm; iterations = 1
    /// Also false for a zero or non-finite pole, a non-finite twist, a zero b_axis in use, or a
    /// Plane target.
    [[nodiscard]] bool validate() const;
    bool run() const;
};

/// The viewer's constraint relaxation (`LLKeyframeMotion::applyConstraint`, spec §4.2 step 8):
/// a damped spring relaxation of the interior chain points with both ends pinned, then a
/// root-to-tip shortest-arc aim pass. Constants as the viewer: spring 0.7 (`JOINT_LENGTH_K`),
/// velocity damping 0.7, convergence when |a|² < 0.0005² for every interior point after at least
/// 2 iterations, 1–20 iterations.
struct ViewerRelaxationJob {
    ChainPose pose;
    /// P[0], the point the effector is pulled to (already `lerp(source, target, W)`).
    Vec3 goal;
    /// len[0..L−1] from `initializeConstraint`: len[0] = |J[1] − effector|, len[k] = bone
    /// lengths. Empty: computed from the current pose.
    std::span<const float> lengths;
    /// Start points P[1..L−1] (world), n − 2 entries. Empty: the current joint positions.
    std::span<const Vec3> start_points;
    /// Out (optional, n − 2 entries): the relaxed points P[1..L−1] (world).
    std::span<Vec3> relaxed_points;
    /// `W`: below 1 each output local rotation is nlerp(W, input, solved) as the viewer does.
    float weight = 1.f;
    int max_iterations = 20;
    EndRotation end_rotation = EndRotation::Keep;
    SolveReport* report = nullptr;
    [[nodiscard]] bool validate() const;
    bool run() const;
};

}  // namespace slanim::ik
