// SPDX-License-Identifier: MIT
// The `.anim` joint constraints (spec §4): a source point on a collision volume pulled to a
// point or plane on another volume or the ground, over a chain of joints, eased on the motion's
// timeline. Geometry, time windows, weights and the joint-mask rule follow
// `LLKeyframeMotion::initializeConstraint / activateConstraint / applyConstraint`; the chain is
// solved by a selectable solver (CCD by default, FABRIK, or the viewer's relaxation).
//
// Where they act, as in the viewer: inside each motion's update (`LLKeyframeMotion::onUpdate`),
// on that motion's own joint states before blending, against the skeleton's joints as the last
// frame left them (the viewer's `LLJoint`s), so the blender mixes the constrained states like
// any others (no extra pose-weight factor). See docs/ik.md.
//
// Frames: everything is computed in the avatar-root frame (X forward, Y left, Z up, metres), the
// frame of LocalToModelJob with an identity root; the ground is given in that frame.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slanim/core/blend.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/ik/chain.hpp"
#include "slanim/ik/solvers.hpp"

namespace slanim {
class MotionClip;
class Skeleton;
}  // namespace slanim

namespace slanim::ik {

/// Constraint solvers the runtime can use.
enum class Solver : std::uint8_t { Ccd, Fabrik, Viewer };
inline constexpr int kNumSolvers = 3;
/// "ccd", "fabrik", "viewer".
const char* solver_name(Solver s);
/// Parses a solver name (as solver_name); nullopt for anything else.
std::optional<Solver> parse_solver(std::string_view name);

/// `MAX_CONSTRAINTS`: a file with more constraints loads with none (spec §1.5).
inline constexpr int kMaxConstraints = 10;

/// One constraint resolved against a skeleton and clip (`JointConstraintSharedData`).
struct ConstraintDef {
    int index = 0;  ///< position in the file
    ConstraintType type = ConstraintType::Point;
    bool ground = false;     ///< target is GROUND
    int source_volume = -1;  ///< skeleton joint index of the source collision volume
    int target_volume = -1;  ///< skeleton joint index of the target volume; −1 for GROUND
    Vec3 source_offset;      ///< in the source volume's unit-sphere space
    Vec3 target_offset;      ///< volume unit-sphere space, or metres above the ground point
    float ease_in_start = 0.f, ease_in_stop = 0.f;    ///< seconds, looped motion time
    float ease_out_start = 0.f, ease_out_stop = 0.f;  ///< seconds, looped motion time
    int chain_length = 0;    ///< L: joints above J[0] that move (J[0] is the volume's bone)
    std::array<int, kMaxViewerChainLength> joints{};  ///< skeleton joints J[0..L]
    std::array<int, kMaxViewerChainLength> tracks{};  ///< clip tracks of J[0..L]
};

/// A clip's resolved constraints plus warnings for the ones that were dropped.
struct ConstraintSet {
    std::vector<ConstraintDef> constraints;  ///< runtime order = file order (the viewer's)
    std::vector<std::string> warnings;
};

/// Resolves `clip.motion().constraints`. Dropped with a warning: chain length ≥ 4 (the viewer
/// overflows `MAX_CHAIN_LENGTH` arrays, spec §11.2), unknown volumes, chains that leave the
/// skeleton or use a joint the clip does not animate (the viewer refuses such files: "No joint
/// index for constraint"). More than 10 constraints never reach here: the decoder drops them
/// all as the viewer does.
ConstraintSet resolve_constraints(const MotionClip& clip, const Skeleton& skeleton);

/// Per-instance state (`JointConstraint`). Zero-initialised = never initialised, inactive.
/// Lengths in metres; initialised on the first frame the constraint is seen, from that pose.
struct ConstraintState {
    bool initialized = false;
    bool active = false;  ///< between activation and deactivation (`mActive`)
    float weight = 0.f;   ///< the reachability weight `mWeight`, [0, 1]
    /// Σ lengths + |source point − J[0]| (`mTotalLength`), metres.
    float total_length = 0.f;
    /// `mJointLengths`: [0] = |J[1] − source point|, [k] = |J[k] − J[k+1]|, metres.
    std::array<float, kMaxViewerChainLength> lengths{};
    std::array<float, kMaxViewerChainLength> fractions{};  ///< `mJointLengthFractions`, [k ≥ 1]
    /// `mPositions`: the viewer solver's interior points P[1..L−1] in pelvis space (the pelvis
    /// joint's frame), metres.
    std::array<Vec3, kMaxViewerChainLength> positions{};
    float fixup_rms = 0.f;   ///< `mFixupDistanceRMS`, metres per √second (as the viewer computes)
    Vec3 ground_pos;         ///< GROUND target captured at activation, root frame, metres
    Vec3 ground_normal{0.f, 0.f, 1.f};  ///< unit, root frame
};

/// The ground: a plane in the avatar-root frame. `getGround` projects a point vertically onto it.
struct GroundPlane {
    float height = 0.f;          ///< z of the plane at x = y = 0, metres
    Vec3 normal{0.f, 0.f, 1.f};  ///< unit; must not be horizontal
    /// The point of the plane straight below (or above) `p`.
    [[nodiscard]] Vec3 below(Vec3 p) const;
};

/// `LLAvatarAppearance::computeBodySize`'s mPelvisToFoot for the skeleton at rest (with the
/// viewer's sign on the hip term): how far the soles sit below the pelvis. The default ground
/// of an avatar is at z = −pelvis_to_foot in the root frame.
float pelvis_to_foot(const Skeleton& skeleton);
GroundPlane default_ground(const Skeleton& skeleton);

/// Solver settings of the runtime. The viewer solver always uses the viewer's iteration budget
/// from the avatar's pixel area; CCD and FABRIK use `tolerance` and `max_iterations`.
struct IkSettings {
    bool enabled = true;  ///< false: constraints are not applied
    Solver solver = Solver::Ccd;
    float tolerance = 0.0005f;  ///< metres
    /// An upper bound: CCD triangulates after a slow sweep (CcdJob), so the real constraint set
    /// needs at most 8 sweeps at 60 fps; FABRIK a handful.
    int max_iterations = 128;
};

/// Why a constraint did or did not act this frame.
enum class ConstraintOutcome : std::uint8_t {
    Applied,
    BeforeWindow,  ///< t < ease_in_start
    AfterWindow,   ///< t > ease_out_stop (deactivated)
    Masked,        ///< a motion updated before it this frame claims a chain joint at ≥ its priority
    ZeroWeight,    ///< nothing to do (weight 0), pose untouched
    NoPosition,    ///< chain length 0 and J[0] has no position curve
};
const char* outcome_name(ConstraintOutcome o);

/// The chain problem a constraint posed to its solver (L ≥ 1), kept so benchmarks and tools can
/// replay real solves. Spans of a ChainPose over these arrays use `joints` entries.
/// Fields mirror ChainPose (root frame, metres).
struct ChainInput {
    int joints = 0;  ///< L + 1; 0 when no chain was solved
    std::array<Vec3, kMaxViewerChainLength> offsets{};          ///< as ChainPose::offsets
    std::array<Quat, kMaxViewerChainLength> local_rotations{};  ///< before solving
    Vec3 root_position;         ///< world position of J[L]
    Quat root_parent_rotation;  ///< world rotation of J[L]'s parent
    Vec3 effector;              ///< source volume point in J[0]'s frame
    Vec3 goal;                  ///< lerp(source, target, W)
};

/// What one constraint did in one frame (for tools, overlays and tests). Points in the root frame.
struct ConstraintReport {
    ConstraintOutcome outcome = ConstraintOutcome::BeforeWindow;
    float weight = 0.f;       ///< final W (reachability × the linear ease ramps)
    Vec3 source, target, goal;  ///< source point before solving, target point, lerp(source, target, W)
    float error_before = 0.f;   ///< |source − target| before solving, metres
    float error_after = 0.f;    ///< |source − target| after solving
    float goal_error = 0.f;     ///< |source − goal| after solving
    bool reachable = true;      ///< the solver's reachability verdict
    int iterations = 0;
    float solve_us = 0.f;       ///< wall time of the solve (only when timing is on)
    ChainInput input;           ///< the solver's problem (chain constraints)
};

/// Applies one motion instance's constraints to its joint states (in place), in file order:
/// `LLKeyframeMotion::applyConstraints` → `applyConstraint`, called from the motion's update
/// after its keys were sampled. No allocation. Not thread-safe for one pose/state set.
///
/// `joints` plays the viewer's `LLJoint`s: the skeleton's local pose as the previous frame left
/// it (plus what earlier motions' constraints left this frame). Each constraint sets the chain's
/// joints to the motion's key rotations, measures and solves on that, writes the result into
/// the motion's states and puts the joints back; like the viewer it leaves the key rotations in
/// `joints` when it stops half-way at a masked chain joint, and on J[0] for a chain of length 0.
struct ApplyConstraintsJob {
    const Skeleton* skeleton = nullptr;
    std::span<const ConstraintDef> constraints;
    std::span<ConstraintState> states;  ///< same size as constraints; kept across frames
    /// The motion: its base priority (`getPriority`), its looped time (`mLastLoopedTime`), the
    /// unlooped time of its previous update (`mLastUpdateTime`), the joint mask it got from the
    /// controller (`last_joint_signature`) and its tracks' usage.
    int base_priority = 0;
    float time = 0.f;
    float last_update_time = 0.f;
    std::span<const std::uint8_t> joint_mask;  ///< ≥ skeleton joints entries (viewer: 216)
    const MotionClip* clip = nullptr;
    /// The motion's joint states this frame, one per clip track (in/out): rotations, and
    /// positions (read and written only for tracks with a position curve).
    std::span<Quat> state_rotations;
    std::span<Vec3> state_positions;
    /// The frame: real time step for the smooth interpolants (s), avatar pixel area (viewer
    /// iteration budget), the ground.
    float frame_dt = 0.f;
    float pixel_area = 1e30f;
    GroundPlane ground;
    IkSettings settings;
    LocalPose joints;  ///< the skeleton's live local pose (see above), in/out
    std::span<ConstraintReport> reports;  ///< empty, or one per constraint
    bool time_solves = false;             ///< fill ConstraintReport::solve_us

    [[nodiscard]] bool validate() const;
    bool run() const;
};

/// The viewer's iteration budget: round(clamp_rescale(area, 80000, 1000, 20, 1)).
int viewer_iteration_budget(float pixel_area);

}  // namespace slanim::ik
