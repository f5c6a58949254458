// SPDX-License-Identifier: MIT
// The ECS-like world: avatars are entities, components live in dense arrays, and systems run in
// named phases in one fixed order:
//
//     ingest → control → sample → blend → ik → local_to_model → morph → skin
//
// `control`, `sample`, `blend`, `ik` (the .anim constraints, slanim/ik/constraints.hpp) and
// `local_to_model` are built in; `ingest` (puppetry) is filled by later modules through
// add_system(); `morph` and `skin` get their systems when the first avatar receives an
// Appearance (slanim/runtime/appearance.hpp: visual params, hand poses, emotes, skinning). Every system
// declares the components it reads and writes, and schedule() lists them in one visible place.
//
// Threads (docs/runtime-threading.md): per-avatar systems run as parallel loops over chunks of
// avatars on a oneTBB task arena of WorldOptions::threads threads; consecutive per-avatar
// systems are fused, so one avatar goes through control → sample → blend → ik →
// local_to_model on one thread with that thread's scratch (joint states and the PoseBlender
// never live per avatar). Whole-world systems run alone on the stepping thread. Avatars are
// independent, so results are bit-identical for every thread count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "slanim/core/math.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/runtime/attachment_overrides.hpp"
#include "slanim/runtime/motion_controller.hpp"
#include "slanim/runtime/procedural.hpp"

namespace slanim {

/// An avatar handle: index in the low 20 bits, generation above (stale handles are detected).
using Entity = std::uint32_t;
inline constexpr Entity kNullEntity = 0xFFFFFFFFu;

enum class Phase : std::uint8_t { Ingest, Control, Sample, Blend, Ik, LocalToModel, Morph, Skin };
inline constexpr int kNumPhases = 8;
/// "ingest", "control", ...
const char* phase_name(Phase p);

/// Component names used in system declarations.
namespace component {
inline constexpr const char* kSkeleton = "skeleton";
inline constexpr const char* kController = "motion_controller";
inline constexpr const char* kLocalPose = "local_pose";
inline constexpr const char* kModelPose = "model_pose";
inline constexpr const char* kIk = "ik_settings";  ///< solver settings and ground per avatar
inline constexpr const char* kAppearance = "appearance";  ///< optional, see Appearance
/// The sampled joint states of the evaluated motions (per-thread scratch, sample → blend).
inline constexpr const char* kJointStates = "joint_states";
/// Visibility, update period and interpolation state of the LOD rules (see LodSettings).
inline constexpr const char* kLod = "lod";
}  // namespace component

class World;
class Appearance;
namespace detail {
struct AttachmentState;
}

/// Per-thread working memory a per-avatar system may use during one call (the World keeps one
/// per worker thread; see docs/runtime-threading.md).
struct WorkerScratch {
    BlendScratch blend;  ///< joint states from sample to blend of the same avatar, the blender
};

/// A system, run once per step in its phase. Give exactly one of:
///  - `each`: per-avatar work, called once for every avatar (dense index i), possibly on a
///    worker thread and concurrently with other avatars. It may touch only avatar i's
///    components and the worker's scratch; consecutive per-avatar systems run back to back for
///    one avatar on one thread (so joint states can stay in the scratch).
///  - `run`: whole-world work, called once per step on the thread that calls step(), with no
///    per-avatar system running. A system that touches several avatars' data (puppetry routing)
///    must be of this kind, and says so in its reads/writes.
struct System {
    Phase phase = Phase::Control;
    std::string name;
    std::vector<std::string> reads, writes;  ///< component names
    std::function<void(World&, float dt)> run;
    std::function<void(World&, std::size_t i, float dt, WorkerScratch&)> each;
    [[nodiscard]] bool per_avatar() const { return static_cast<bool>(each); }
};

/// Local pose component (parent frame, metres): views of the avatar's block in the world's
/// pose pool (contiguous, valid while the avatar lives; sizes = the skeleton's joint count).
/// Until the avatar owns scales, `scales` views the world's rest scales of its skeleton,
/// shared by every such avatar: write scales only after World::local_pose(e) (which gives the
/// avatar its own) or World::own_scales_at(i). Avatars with an Appearance, or offered a joint
/// state with a scale, own theirs.
struct LocalPose {
    std::span<Vec3> positions, scales;
    std::span<Quat> rotations;
    [[nodiscard]] LocalPoseView view() const { return {positions, rotations, scales}; }
};
/// Model pose component: joint transforms in the avatar-root frame (X forward, Y left, Z up),
/// views into the pose pool like LocalPose.
struct ModelPose {
    std::span<Vec3> positions;
    std::span<Quat> rotations;
};

/// An owned copy of a model pose (a ModelPose is a view that dies with its avatar), e.g. to
/// keep frames for a later comparison.
struct ModelPoseCopy {
    std::vector<Vec3> positions;
    std::vector<Quat> rotations;
    ModelPoseCopy() = default;
    explicit ModelPoseCopy(const ModelPose& p)
        : positions(p.positions.begin(), p.positions.end()), rotations(p.rotations.begin(), p.rotations.end()) {}
};

/// How a World runs its per-avatar systems.
struct WorldOptions {
    /// Worker threads for per-avatar systems: 0 = std::thread::hardware_concurrency(), 1 = all
    /// work on the calling thread (no task scheduler involved), at most 256. Results are
    /// bit-identical for every value.
    int threads = 0;
    /// Avatars per task (the grain of the parallel loop), ≥ 1.
    int chunk = 8;
};

/// Level-of-detail rules for crowds (docs/runtime-threading.md, "LOD"). Off by default, so
/// every visible avatar is evaluated every step exactly as the viewer does. When enabled, an
/// avatar whose pixel area (MotionController::set_pixel_area) is below `full_rate_area` is
/// evaluated every 2nd step, below `half_rate_area` every 4th; in between, its local pose is
/// interpolated toward a pose evaluated one update ahead (the viewer's time-quantum path,
/// LLMotionController::updateMotions with mTimeStep, disabled there as SL-763; here the clock
/// stays continuous, so playback speed is exact). Visibility (World::set_visible) applies
/// whether LOD is enabled or not.
struct LodSettings {
    bool enabled = false;
    /// Pixels². Defaults: the viewer's minimum pixel areas of hand motions (10000) and emotes
    /// (2000), below which those motions already fade out (spec §3.2).
    float full_rate_area = 10000.f;
    float half_rate_area = 2000.f;
};

/// Time spent in one system over the steps since reset_profile() (see set_profiling).
struct SystemProfile {
    const System* system = nullptr;
    double seconds = 0.0;  ///< summed over worker threads for per-avatar systems (CPU time)
    std::uint64_t calls = 0;
};

class World {
public:
    /// Throws std::invalid_argument for threads outside [0, 256] or chunk < 1.
    explicit World(const WorldOptions& options = {});
    ~World();
    World(const World&) = delete;
    World& operator=(const World&) = delete;

    /// The worker threads per-avatar systems run on (the resolved WorldOptions::threads).
    [[nodiscard]] int threads() const { return threads_; }

    /// Creates an avatar in its rest pose (pelvis at the root origin).
    Entity create_avatar(std::shared_ptr<const Skeleton> skeleton);
    /// Destroys an avatar; its handle becomes invalid. Returns false for an invalid handle.
    bool destroy(Entity e);
    [[nodiscard]] bool valid(Entity e) const;
    [[nodiscard]] std::size_t size() const { return controllers_.size(); }

    // Component access (precondition: valid(e)).
    MotionController& controller(Entity e);
    [[nodiscard]] const Skeleton& skeleton(Entity e) const;
    /// The avatar's shared skeleton (for components that keep it, e.g. puppetry playback).
    [[nodiscard]] const std::shared_ptr<const Skeleton>& skeleton_ptr(Entity e) const {
        return skeletons_[dense_index(e)];
    }
    /// The local pose, for reading and writing (the avatar gets its own scales, see LocalPose).
    LocalPose& local_pose(Entity e);
    /// The local pose for reading only: no side effect (shared rest scales stay shared), e.g. for
    /// joint matrices (the C API). Precondition: valid(e); do not write through its spans.
    [[nodiscard]] const LocalPose& local_pose_read(Entity e) const { return local_[dense_index(e)]; }
    [[nodiscard]] const ModelPose& model_pose(Entity e) const;

    /// IK settings: every avatar uses the world's settings unless it has its own.
    void set_default_ik_settings(const ik::IkSettings& s) { default_ik_ = s; }
    [[nodiscard]] const ik::IkSettings& default_ik_settings() const { return default_ik_; }
    void set_ik_settings(Entity e, const ik::IkSettings& s);
    /// Drops the avatar's own settings (it follows the world's again).
    void clear_ik_settings(Entity e);
    /// The settings the avatar's ik phase uses.
    [[nodiscard]] const ik::IkSettings& ik_settings(Entity e) const;
    /// The ground of constraints with a GROUND target, in the avatar-root frame. Default:
    /// ik::default_ground(skeleton), the soles' plane of the rest pose.
    void set_ground(Entity e, const ik::GroundPlane& g);
    [[nodiscard]] const ik::GroundPlane& ground(Entity e) const;
    /// Gives the avatar an appearance component (visual params, morphs, skinning; one per
    /// avatar, not shared), replacing any; a null pointer removes it. The first one registers
    /// the `morph` and `skin` systems. Returns false for an invalid handle or an appearance
    /// built for a skeleton with a different joint count.
    bool set_appearance(Entity e, std::shared_ptr<Appearance> appearance);
    /// The avatar's appearance, or nullptr (also for an invalid handle).
    [[nodiscard]] Appearance* appearance(Entity e) const;
    /// Measure each constraint solve (ConstraintReport::solve_us). Off by default.
    void set_ik_timing(bool on) { ik_timing_ = on; }

    /// The viewer's procedural motions (breathe, body noise, head and eye look-at with blinks
    /// and saccades; slanim/runtime/procedural.hpp, docs/procedural-motions.md) for this
    /// avatar: starts those in `set` that are not running, stops the others (they ease out).
    /// All are off for a new avatar. Returns false for an invalid handle or when the skeleton
    /// lacks a requested motion's joints (the rest of `set` is applied). Not during step().
    bool set_procedural_motions(Entity e, const ProceduralSet& set);
    /// The avatar's look-at target, read by the head and eye motions and by custom motions as
    /// the viewer's "LookAtPoint" (`LLCharacter::setAnimationData`): by default a point in the
    /// avatar-root frame (metres; the head's position is subtracted each frame, as
    /// `LLHUDEffectLookAt::calcTargetPosition` does), or with LookAtFrame::HeadOffset the
    /// vector from the head to the target in avatar-root axes. A host with region coordinates
    /// converts them into the avatar-root frame first (p_root = (p_region − root position)
    /// rotated by the inverse of the avatar's region rotation). Returns false for an invalid
    /// handle or a non-finite target.
    bool set_look_at(Entity e, Vec3 target, LookAtFrame frame = LookAtFrame::AvatarRoot);
    /// No target (`removeAnimationData("LookAtPoint")`): the head follows the root, the eyes
    /// look ahead. Returns false for an invalid handle.
    bool clear_look_at(Entity e);

    /// Level of detail for all avatars (see LodSettings). Not during step().
    void set_lod(const LodSettings& lod) { lod_settings_ = lod; }
    [[nodiscard]] const LodSettings& lod() const { return lod_settings_; }
    /// A hidden avatar (culled, or shown as an impostor) gets the viewer's
    /// `updateMotionsMinimal`: its clock stands still, stopped motions are deactivated, nothing
    /// is sampled, blended, solved or skinned, and its pose stays as it was. Default: visible.
    /// Returns false for an invalid handle.
    bool set_visible(Entity e, bool visible);
    [[nodiscard]] bool visible(Entity e) const;
    /// Steps between evaluations of avatar i under the LOD rules: 1, 2 or 4 (0 when hidden).
    [[nodiscard]] int update_period_at(std::size_t i) const;

    // Dense iteration for systems: index i in [0, size()).
    MotionController& controller_at(std::size_t i) { return *controllers_[i]; }
    LocalPose& local_pose_at(std::size_t i) { return local_[i]; }
    ModelPose& model_pose_at(std::size_t i) { return model_[i]; }
    [[nodiscard]] const Skeleton& skeleton_at(std::size_t i) const { return *skeletons_[i]; }
    [[nodiscard]] Entity entity_at(std::size_t i) const { return dense_to_entity_[i]; }
    [[nodiscard]] const ik::IkSettings& ik_settings_at(std::size_t i) const {
        return ik_[i].own ? ik_[i].settings : default_ik_;
    }
    [[nodiscard]] const ik::GroundPlane& ground_at(std::size_t i) const { return ik_[i].ground; }
    [[nodiscard]] Appearance* appearance_at(std::size_t i) const { return appearance_[i].get(); }
    /// Recomputes avatar i's model pose from its local pose now (LocalToModelJob), for systems
    /// that change the local pose after the local_to_model phase (skeletal visual params).
    /// Per-avatar: safe from a per-avatar system for its own avatar.
    void update_model_pose_at(std::size_t i);
    /// Gives avatar i its own local scales (a copy of the shared rest scales) if it has none.
    /// Safe to call from per-avatar systems (the pool is locked; allocates only the first time).
    void own_scales_at(std::size_t i);

    // Joint attachment overrides (slanim/runtime/attachment_overrides.hpp,
    // docs/attachment-overrides.md): per avatar, per joint, position and scale overrides keyed
    // by the rigged mesh's UUID, the active one being the largest UUID. Written into the local
    // pose when they change (as `LLJoint::updatePos`/`updateScale` do); animation positions
    // are blended without them, so a playing motion that positions a joint wins, and the joint
    // keeps the animated value after the motion stops, as in the viewer, until the override
    // changes or reset_skeleton(). Call between steps, not during step() (they allocate; the
    // avatar's model pose is recomputed before they return). An avatar with no overrides holds
    // one null pointer for them.

    /// `LLVOAvatar::addAttachmentOverridesForObject` for one mesh: for each entry in order, a
    /// position above the threshold from Skeleton::default_position becomes the joint's
    /// position override of `mesh` (`LLJoint::addAttachmentPosOverride`: the first override of
    /// a joint saves its current local position; the local pose gets the active value when the
    /// active value changed), then, with lock_scale_if_joint_position, a scale override of the
    /// joint's rest scale; an explicit scale becomes a scale override (`addAttachmentScaleOverride`:
    /// the local scale gets the active value); a non-zero pelvis_offset a pelvis fix-up. The mesh
    /// then counts as applied even when no entry passed the threshold. Errors (nothing changed):
    /// InvalidEntity, NullMesh, InvalidJoint, NonFinite, AlreadyActive, TooManyMeshes.
    OverrideStatus add_attachment_overrides(Entity e, const Uuid& mesh, const AttachmentOverrides& overrides);
    /// `LLVOAvatar::removeAttachmentOverridesForObject(mesh_id)`: drops the mesh's position and
    /// scale overrides of every joint (a joint whose active value changed gets the new active
    /// value, or when none is left the value saved before its first override) and its pelvis
    /// fix-up, then sets the pelvis's local position to (0, 0, 0) (the viewer's SL-315 step, done
    /// for every removal). NotFound (nothing changed) when the mesh's overrides are not applied
    /// (the viewer would still zero the pelvis); InvalidEntity, NullMesh.
    OverrideStatus remove_attachment_overrides(Entity e, const Uuid& mesh);
    /// `LLVOAvatar::clearAttachmentOverrides`: every joint with overrides gets its value from
    /// before them (`clearAttachmentPosOverrides`/`ScaleOverrides`); when pelvis fix-ups
    /// existed they are dropped and the pelvis's local position is set to 0. Ok also when there
    /// was nothing to clear; InvalidEntity.
    OverrideStatus clear_attachment_overrides(Entity e);
    /// `LLVOAvatar::resetSkeleton(false)` for the joints: every joint's local position,
    /// rotation and scale back to the rest pose (plus the applied skeletal visual params of the
    /// avatar's Appearance), then every override applied again on top (the values "before
    /// overrides" become the reset values). This is how the viewer undoes positions an animation
    /// left behind. Motions keep playing. InvalidEntity.
    OverrideStatus reset_skeleton(Entity e);
    /// The active position / scale override of `joint` (found == false for none, a bad handle or
    /// a joint out of range). `hasAttachmentPosOverride` / `hasAttachmentScaleOverride`.
    [[nodiscard]] ActiveOverride active_position_override(Entity e, int joint) const;
    [[nodiscard]] ActiveOverride active_scale_override(Entity e, int joint) const;
    /// The active pelvis fix-up (`hasPelvisFixup`), value = (0, 0, fix-up metres): the viewer adds
    /// it to the avatar's render position along Z (`LLVOAvatar::getRenderPosition`); slanim
    /// does not place avatars in the world, so the host adds it.
    [[nodiscard]] ActiveOverride pelvis_fixup(Entity e) const;
    /// Meshes whose overrides are applied (`mActiveOverrideMeshes`), in the order added; 0 / the
    /// null UUID for a bad handle or index.
    [[nodiscard]] std::size_t attachment_override_mesh_count(Entity e) const;
    [[nodiscard]] Uuid attachment_override_mesh(Entity e, std::size_t k) const;
    /// `computeBodySize` on the avatar's current local pose (see compute_body_size); zeros for
    /// a bad handle.
    [[nodiscard]] BodySize body_size(Entity e) const;
    /// For the morph phase (per-avatar, no allocation): writes the active override of every
    /// joint flagged in `touched` (bit 1: position, bit 2: scale, indexed by joint) into avatar
    /// i's local pose — skeletal visual params write joints with `setPosition(…, true)` /
    /// `setScale(…, true)`, so an active override replaces the param's result
    /// (`LLPolySkeletalDistortion::apply`).
    void apply_attachment_overrides_at(std::size_t i, std::span<const std::uint8_t> touched);

    /// Adds a system at the end of its phase. Returns false (and adds nothing) when it gives
    /// neither or both of `run` and `each`, or when a whole-world system would run in the sample
    /// or blend phase (the joint states between them live in per-thread scratch).
    bool add_system(System s);
    /// Every system in run order.
    [[nodiscard]] std::vector<const System*> schedule() const;

    /// Runs every phase once. dt in seconds (0 evaluates the current time again). Per-avatar
    /// systems run on threads() threads; not to be called concurrently on one World.
    void step(float dt);

    /// Measure the time of every system in step() (off by default; costs two clock reads per
    /// avatar and system). profile() lists them in run order.
    void set_profiling(bool on) { profiling_ = on; }
    [[nodiscard]] std::vector<SystemProfile> profile() const;
    void reset_profile();

    /// Bytes of per-avatar state the world holds (pose pool blocks, controllers, motion
    /// instances and their cursors, component slots), excluding shared skeletons and clips,
    /// appearances and the per-thread scratch. A measurement for benchmarks and `slanim crowd`.
    [[nodiscard]] std::size_t avatar_state_bytes() const;

    /// The built-in ik system's work for one avatar (public for tools that drive phases
    /// themselves): applies the constraints of every evaluated motion, oldest first.
    void apply_constraints_at(std::size_t i);

private:
    struct Exec;   // task arena and per-thread scratch (oneTBB, private to world.cpp)
    struct PosePool;
    /// Prefetches the pose and appearance set-up of the avatars after i (up to end, this
    /// thread's range) while i runs.
    void prefetch_ahead(std::size_t i, std::size_t end) const;
    std::unique_ptr<Exec> exec_;
    std::unique_ptr<PosePool> pool_;
    int threads_ = 1;
    int chunk_ = 8;
    bool profiling_ = false;
    LodSettings lod_settings_;
    std::vector<System> systems_[kNumPhases];
    // Dense component arrays (same index for the same avatar).
    std::vector<std::shared_ptr<const Skeleton>> skeletons_;
    std::vector<std::unique_ptr<MotionController>> controllers_;
    std::vector<LocalPose> local_;
    std::vector<ModelPose> model_;
    // LOD per avatar: visibility, this step's mode, and the interpolation toward the pose
    // evaluated one update ahead ("to", a pool block of rotations and positions).
    enum class LodMode : std::uint8_t { Full, Hidden, Update, Interpolate };
    struct LodState {
        bool visible = true;
        LodMode mode = LodMode::Full;
        std::uint8_t period = 1;
        float elapsed = 0.f, span = 0.f;  // seconds into / length of the interpolation
        float last_f = 0.f;               // interpolation fraction shown last step
        float control_dt = 0.f;           // what motion_control advances the clock by
        float behind = 0.f;               // display past the last target (uneven steps)
        void* to_block = nullptr;
        std::span<Quat> display_rotations;  // the real local pose while "to" is swapped in
        std::span<Vec3> display_positions;
    };
    std::vector<LodState> lod_;
    void lod_select_at(std::size_t i, float dt);
    void lod_interpolate_at(std::size_t i);
    [[nodiscard]] bool lod_skips(const System& s, std::size_t i) const;
    std::vector<void*> pose_block_;   // the pool block behind local_[i] and model_[i]
    std::vector<void*> scale_block_;  // local_[i].scales when owned, else null
    std::vector<std::pair<const Skeleton*, std::vector<Vec3>>> rest_scales_;  // shared scales
    std::mutex pool_mutex_;
    std::span<Vec3> shared_rest_scales(const Skeleton& skeleton);
    struct IkComponent {
        bool own = false;
        ik::IkSettings settings;
        ik::GroundPlane ground;
    };
    std::vector<IkComponent> ik_;
    std::vector<std::shared_ptr<Appearance>> appearance_;  // null: no appearance
    std::vector<std::unique_ptr<detail::AttachmentState>> overrides_;  // null: no overrides (runtime/src/attachment_state.hpp)
    void set_joint_position_at(std::size_t i, int joint, Vec3 v);
    void set_joint_scale_at(std::size_t i, int joint, Vec3 v);
    bool appearance_systems_ = false;
    ik::IkSettings default_ik_;
    bool ik_timing_ = false;
    std::vector<Entity> dense_to_entity_;
    // Procedural motion types per skeleton (shared by its avatars; the skeleton is kept alive,
    // so a later skeleton at the same address cannot pick up stale joint indices).
    std::vector<std::pair<std::shared_ptr<const Skeleton>, ProceduralMotionTypes>> procedural_types_;
    // Sparse side: entity index → dense index, generation per slot.
    std::vector<std::uint32_t> sparse_;
    std::vector<std::uint32_t> generation_;
    std::vector<std::uint32_t> free_;
    [[nodiscard]] std::uint32_t dense_index(Entity e) const;
};

}  // namespace slanim
