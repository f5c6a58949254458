// SPDX-License-Identifier: MIT
// Visual params at run time (spec §6.1–§6.3): the immutable AppearanceModel built from
// avatar_lad.xml (AvatarDefinition), the base `.llm` meshes and a Skeleton, the per-avatar
// AppearanceState (weights and the deformable mesh buffers) and the job that applies changed
// weights to the meshes and the skeleton.
//
// Ozz-style split:
//  * AppearanceModel — shared by every avatar: a dense param table sorted by id (the viewer's
//    `mVisualParamIndexMap` order, which is also the order `LLCharacter::updateVisualParams`
//    applies them), the driver graph with resolved ramps, morph bindings (param → mesh →
//    morph target, physics clone morphs built here), volume morphs bound to collision volumes
//    and skeletal deformations bound to joints;
//  * AppearanceState — per avatar: current and last-applied weights, the avatar's sex, one set
//    of deformable buffers per base mesh (seeded like `LLPolyMesh::initializeForMorph`) and the
//    accumulated per-joint scale/position deltas;
//  * VisualParamUpdateJob — applies every param whose effective weight changed since it was
//    last applied, in the viewer's differential form (`LLPolyMorphTarget::apply`,
//    `LLPolySkeletalDistortion::apply`), except the animated morphs (hand poses, emotes,
//    blinks), which are evaluated from their current weights on the vertices they move (the
//    mesh's AnimatedMorphSet). Nothing changed → no work at all.
//
// Frames and units: SL avatar space (X forward, Y left, Z up), metres; texture coordinates in
// [0,1]; weights are unitless in each param's [min, max].
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "slanim/appearance/avatar_definition.hpp"
#include "slanim/core/blend.hpp"
#include "slanim/appearance/llm.hpp"
#include "slanim/core/math.hpp"
#include "slanim/core/result.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/core/skinning.hpp"
#include "slanim/appearance/wearable.hpp"

namespace slanim {

namespace animated_detail {
struct Args;  // the animated layer's kernel arguments (src/animated_morph_kernel.hpp)
}

namespace detail {
/// AppearanceState's record of the params whose weight changed since the last
/// VisualParamUpdateJob (the job visits only those, in param order). Sized once; no allocation.
struct ChangedParams {
    std::vector<std::int32_t> list;  ///< each param at most once
    std::vector<std::int32_t> kept;  ///< params the running job leaves unsettled
    std::vector<std::uint8_t> in_list;
    bool all = true;  ///< every param is a candidate (a new state, a sex change)
    void reset(std::size_t params) {
        list.clear();
        kept.clear();
        list.reserve(params);
        kept.reserve(params);
        in_list.assign(params, 0);
        all = true;
    }
    void add(std::int32_t p) {
        if (in_list[static_cast<std::size_t>(p)]) return;
        in_list[static_cast<std::size_t>(p)] = 1;
        list.push_back(p);
    }
    /// After a job: the candidates are the params it left unsettled.
    void next_run() {
        for (std::int32_t p : list) in_list[static_cast<std::size_t>(p)] = 0;
        list.swap(kept);
        kept.clear();
        for (std::int32_t p : list) in_list[static_cast<std::size_t>(p)] = 1;
        all = false;
    }
};
}  // namespace detail

/// Dense index of a param in AppearanceModel::params(); −1 = none.
using ParamIndex = std::int32_t;
inline constexpr ParamIndex kNoParam = -1;

/// `NORMAL_SOFTEN_FACTOR` of `LLPolyMorphTarget::apply`: morph normal and binormal deltas are
/// scaled by this before they are accumulated.
inline constexpr float kNormalSoftenFactor = 0.65f;

/// One morph target ready to apply (`LLPolyMorphData`): sparse per-vertex deltas of one base
/// mesh. Built from an LlmMorph, or cloned from one for the physics params (spec §6.2).
/// Binormal deltas are stored sanitised: a non-finite or (near) zero delta is already (1,0,0),
/// the replacement `apply` makes per vertex at run time.
struct MorphTarget {
    std::string name;
    std::vector<std::uint32_t> vertices;  ///< mesh vertex index per entry (< mesh vertex count)
    std::vector<Vec3> coords;     ///< position deltas, metres per unit weight
    std::vector<Vec3> normals;    ///< normal deltas per unit weight
    std::vector<Vec3> binormals;  ///< binormal deltas per unit weight (sanitised)
    std::vector<Vec2> texcoords;  ///< texture-coordinate deltas per unit weight
};

/// True for the morph params the viewer's procedural motions set every frame, matched by name
/// (case-insensitive prefix): `Hands_*` (LLHandMotion's poses), `Express_*` (LLEmote's emotes and
/// Express_Closed_Mouth), `Blink_*` (LLEyeMotion). AppearanceModel puts these in a mesh's
/// animated layer (AnimatedMorphSet).
bool is_animated_morph_name(std::string_view name);

/// One animated morph of a mesh, its deltas dense over the mesh's AnimatedMorphSet slots (zero
/// where the morph has no entry; binormal deltas sanitised like MorphTarget's where it has one).
struct AnimatedMorph {
    std::int32_t param = -1;  ///< ParamIndex of the param it belongs to
    std::uint32_t morph = 0;  ///< index in the mesh's morphs
    /// Per unit weight, 11 planes of AnimatedMorphSet::stride floats: coordinate x, y, z (metres),
    /// normal x, y, z, binormal x, y, z, texture u, v.
    std::vector<float> deltas;
};

/// The animated layer of one base mesh: the vertices some animated morph (is_animated_morph_name)
/// moves, and those morphs in param order. The morph phase evaluates these vertices from their
/// shape (every other param, applied differentially like the viewer) and the animated weights
/// each time one of them changes (VisualParamUpdateJob), so their result depends on the current
/// weights only, not on the fades that led there.
struct AnimatedMorphSet {
    std::vector<std::uint32_t> vertices;  ///< mesh vertex per slot, ascending
    std::size_t stride = 0;               ///< floats per plane: the slots rounded up to 16
    std::vector<std::int32_t> slot_of;    ///< per mesh vertex: its slot, or −1
    std::vector<AnimatedMorph> morphs;    ///< ascending param index (the viewer's apply order)
    [[nodiscard]] bool empty() const { return vertices.empty(); }
};

/// One base mesh of the model (a `<mesh>` with lod 0): the bind-pose data of its `.llm` file and
/// its morph targets (file morphs in file order, then the physics clones).
struct AppearanceMesh {
    std::string type;  ///< avatar_lad.xml mesh type, e.g. "upperBodyMesh"
    std::vector<Vec3> coords, normals, binormals;
    std::vector<Vec2> texcoords;
    std::vector<float> weights;                        ///< SL skin weights (empty: rigid mesh)
    std::vector<std::array<std::uint32_t, 3>> faces;
    std::vector<std::string> skin_joints;
    std::vector<MorphTarget> morphs;
    AnimatedMorphSet animated;  ///< the animated layer (empty: no animated morph on this mesh)

    [[nodiscard]] std::size_t num_vertices() const { return coords.size(); }
    /// Morph target by exact name, or nullptr.
    [[nodiscard]] const MorphTarget* find_morph(std::string_view name) const;
};

/// A param's morph on one mesh (a shared param has one per mesh it lives on).
struct MorphBinding {
    std::uint32_t mesh = 0;   ///< index in AppearanceModel::meshes()
    std::uint32_t morph = 0;  ///< index in that mesh's morphs
};
/// `LLPolyVolumeMorph`: a collision volume moved and scaled with a morph param.
struct VolumeBinding {
    std::int32_t joint = -1;  ///< skeleton joint index of the collision volume
    Vec3 scale;               ///< added to the volume's local scale per unit weight change
    Vec3 position;            ///< added to the volume's local position per unit weight change
};
/// A joint's local scale change per unit weight (`mJointScales`): the bone itself, and its
/// direct collision-volume children with the bone's delta multiplied by their rest scale.
struct JointScaleBinding {
    std::int32_t joint = -1;
    Vec3 scale;
};
/// A bone's local position change per unit weight (`mJointOffsets`), metres.
struct JointOffsetBinding {
    std::int32_t joint = -1;
    Vec3 offset;
};
/// One `<driven>` entry with its ramp resolved (spec §6.3 trapezoid in the driver's weight):
/// rises over (min1, max1], holds over (max1, max2], falls over (max2, min2].
struct DrivenBinding {
    ParamIndex param = kNoParam;
    float min1 = 0.f, max1 = 1.f, max2 = 1.f, min2 = 1.f;
};

/// One param of the model (all occurrences of a shared id merged).
struct AppearanceParam {
    int id = 0;
    std::string name;  ///< as written in avatar_lad.xml
    VisualParamGroup group = VisualParamGroup::Tweakable;
    VisualParamKind kind = VisualParamKind::Morph;
    float min = 0.f, max = 1.f, default_weight = 0.f;
    Sex sex = Sex::Both;
    std::string wearable;  ///< "shape", "skin", …; empty when not part of a wearable
    /// A morph param in its meshes' animated layers (is_animated_morph_name).
    bool animated = false;
    // Ranges into the model's binding arrays.
    std::uint32_t morphs_first = 0, morphs_count = 0;
    std::uint32_t volumes_first = 0, volumes_count = 0;
    std::uint32_t scales_first = 0, scales_count = 0;
    std::uint32_t offsets_first = 0, offsets_count = 0;
    std::uint32_t driven_first = 0, driven_count = 0;
};

/// A base mesh handed to AppearanceModel::build.
struct AppearanceMeshInput {
    std::string type;              ///< the `<mesh type>` it is loaded for
    const LlmMesh* mesh = nullptr; ///< a base (lod 0) mesh
};

/// The driven weight of a `<driven>` entry for driver weight `x` (`LLDriverParam::
/// getDrivenWeight`): x ≤ min1 → driven min (driven max when min1 == max1 ≤ driver min);
/// (min1, max1] → ramp up; (max1, max2] → driven max; (max2, min2] → ramp down; beyond → driven
/// max when max2 ≥ driver max, else driven min.
float driven_weight(const DrivenBinding& d, float x, float driver_min, float driver_max,
                    float driven_min, float driven_max);

/// The immutable run-time appearance model. Shared (std::shared_ptr) by every avatar.
class AppearanceModel {
public:
    /// Builds the model. `meshes` are the base meshes by mesh type (every type a morph param of
    /// `def` lives on must be present). Like `LLAvatarAppearance::loadSkeletonNode /
    /// loadMeshNodes` the build fails when a morph param names a morph its mesh does not have
    /// (after the `_Driven` fallback) or a skeletal param names an unknown bone; a volume morph
    /// naming an unknown collision volume and a driven id naming no param are skipped with a
    /// warning (warnings()), as the viewer does. A driver cycle is an error. Params with the same
    /// id are merged when marked shared; an unshared repeat replaces the earlier one (warning).
    static Result<std::shared_ptr<const AppearanceModel>> build(
        const AvatarDefinition& def, std::span<const AppearanceMeshInput> meshes,
        std::shared_ptr<const Skeleton> skeleton);

    [[nodiscard]] std::span<const AppearanceParam> params() const { return params_; }
    [[nodiscard]] const AppearanceParam& param(ParamIndex p) const { return params_[p]; }
    [[nodiscard]] int num_params() const { return static_cast<int>(params_.size()); }
    /// Param by id, or kNoParam.
    [[nodiscard]] ParamIndex find(int id) const;
    /// Param by name, case-insensitive like `LLCharacter::getVisualParam` (the last param with
    /// that name wins, as in the viewer's name map), or kNoParam.
    [[nodiscard]] ParamIndex find(std::string_view name) const;

    [[nodiscard]] std::span<const AppearanceMesh> meshes() const { return meshes_; }
    /// Mesh by type ("headMesh"), or −1.
    [[nodiscard]] int find_mesh(std::string_view type) const;
    [[nodiscard]] const Skeleton& skeleton() const { return *skeleton_; }
    [[nodiscard]] const std::shared_ptr<const Skeleton>& skeleton_ptr() const { return skeleton_; }

    [[nodiscard]] std::span<const MorphBinding> morph_bindings() const { return morphs_; }
    [[nodiscard]] std::span<const VolumeBinding> volume_bindings() const { return volumes_; }
    [[nodiscard]] std::span<const JointScaleBinding> scale_bindings() const { return scales_; }
    [[nodiscard]] std::span<const JointOffsetBinding> offset_bindings() const { return offsets_; }
    [[nodiscard]] std::span<const DrivenBinding> driven_bindings() const { return driven_; }
    /// Driver params in avatar_lad.xml order (the order their defaults are first propagated).
    [[nodiscard]] std::span<const ParamIndex> drivers() const { return drivers_; }

    /// Initial weights of a new avatar: every param's default, then every driver's default
    /// propagated in file order (`setInfo` → `setWeight(default)`, drivers loaded last).
    [[nodiscard]] std::span<const float> initial_weights() const { return initial_weights_; }

    /// What the build skipped (unknown volumes, unresolved driven ids, replaced params).
    [[nodiscard]] std::span<const std::string> warnings() const { return warnings_; }

private:
    AppearanceModel() = default;
    /// The end of build(): the meshes' animated layers and the initial weights.
    void finish_build();
    std::shared_ptr<const Skeleton> skeleton_;
    std::vector<AppearanceParam> params_;
    std::vector<AppearanceMesh> meshes_;
    std::vector<MorphBinding> morphs_;
    std::vector<VolumeBinding> volumes_;
    std::vector<JointScaleBinding> scales_;
    std::vector<JointOffsetBinding> offsets_;
    std::vector<DrivenBinding> driven_;
    std::vector<ParamIndex> drivers_;
    std::vector<float> initial_weights_;
    std::unordered_map<int, ParamIndex> by_id_;
    std::unordered_map<std::string, ParamIndex> by_name_;  // lower-case keys
    std::vector<std::string> warnings_;
};

/// Loads `character_dir/avatar_lad.xml`, every base mesh it lists (lod 0) and builds the model
/// for `skeleton`. Errors name the file.
Result<std::shared_ptr<const AppearanceModel>> load_appearance_model(
    const std::filesystem::path& character_dir, std::shared_ptr<const Skeleton> skeleton);

/// The deformable buffers of one base mesh (`LLPolyMesh` per-avatar vertex data).
/// Seeded like `initializeForMorph`: coords, normals and texcoords from the base mesh, and —
/// the viewer's quirk — binormals, scaled normals and scaled binormals all from the base
/// **normals**.
struct MeshBuffers {
    std::vector<Vec3> coords;            ///< metres
    std::vector<Vec3> normals;           ///< unit
    std::vector<Vec3> binormals;         ///< unit
    std::vector<Vec2> texcoords;
    std::vector<Vec3> scaled_normals;    ///< un-normalised accumulators
    std::vector<Vec3> scaled_binormals;  ///< un-normalised accumulators
    /// Incremented each time a morph touches this mesh (consumers re-upload on change).
    std::uint64_t revision = 0;
};

/// Per avatar, the shape of one mesh's animated slots (AnimatedMorphSet): the slot vertices as
/// every non-animated param left them, the base the animated morphs are evaluated on.
struct AnimatedShape {
    /// 17 planes of AnimatedMorphSet::stride floats: coordinate x, y, z, scaled normal x, y, z,
    /// scaled binormal x, y, z, texture u, v, normal x, y, z, binormal x, y, z (MeshBuffers'
    /// meanings).
    std::vector<float> planes;
    /// Effective weight per AnimatedMorphSet::morphs entry, as of the last VisualParamUpdateJob
    /// that changed the layer: what an evaluation uses.
    std::vector<float> weights;
    bool dirty = false;    ///< the job changed the weights or the shape: weights to record
    bool pending = false;  ///< recorded but not yet evaluated into the MeshBuffers
    std::uint64_t serial = 0;  ///< incremented each time the job changes the layer
};

/// Result of AppearanceState::apply_wearable.
struct WearableApplyReport {
    int applied = 0;                 ///< params set (from the file or to their default)
    std::vector<int> unknown_ids;    ///< ids in the file that name no param
    std::vector<int> other_ids;      ///< ids of params that belong to another wearable type
};

/// Per-avatar appearance state. Allocates on construction only; set_weight() and the update job
/// never allocate.
class AppearanceState {
public:
    explicit AppearanceState(std::shared_ptr<const AppearanceModel> model);

    [[nodiscard]] const AppearanceModel& model() const { return *model_; }
    [[nodiscard]] const std::shared_ptr<const AppearanceModel>& model_ptr() const { return model_; }

    /// Current weights (per param).
    [[nodiscard]] std::span<const float> weights() const { return weights_; }
    [[nodiscard]] float weight(ParamIndex p) const { return weights_[p]; }
    /// Weights as last applied to the meshes/skeleton (`mLastWeight`).
    [[nodiscard]] std::span<const float> last_weights() const { return last_; }
    /// The weight a param applies with: its weight when its sex matches the avatar's, else its
    /// default (`LLCharacter::updateVisualParams`).
    [[nodiscard]] float effective_weight(ParamIndex p) const;

    /// `LLVisualParam::setWeight` / `LLDriverParam::setWeight`: clamps to [min, max] and, for a
    /// driver, sets every driven param from its ramp (recursively) at once. A NaN weight is
    /// ignored (returns false); an invalid index returns false. No allocation.
    bool set_weight(ParamIndex p, float weight);
    /// By id or case-insensitive name; false when unknown.
    bool set_weight_by_id(int id, float weight);
    bool set_weight_by_name(std::string_view name, float weight);

    /// The avatar's sex (default Female like `LLCharacter`). Params whose sex does not match
    /// apply their default weight.
    [[nodiscard]] Sex sex() const { return sex_; }
    void set_sex(Sex s);

    /// `LLWearable::writeToAvatar`: every param whose `wearable` equals the wearable's type name
    /// is set, in ascending id order, to the file's weight or, when the file lacks it, to its
    /// default. Ids the model does not know and ids of other wearable types are reported, not
    /// fatal. A shape also sets the sex from param "male" (> 0.5 → Male), as `LLVOAvatar` does.
    WearableApplyReport apply_wearable(const Wearable& wearable);

    /// True when some weight (or the sex) changed since the last VisualParamUpdateJob.
    [[nodiscard]] bool dirty() const { return dirty_; }

    /// Deformable buffers per model mesh (same order as AppearanceModel::meshes()), current:
    /// animated layers a VisualParamUpdateJob left pending (`defer_animated`) are evaluated into
    /// them first (bumping those meshes' revisions). Thread safety: like any const member, safe
    /// to call from several threads at once (a pending evaluation runs once, under a lock), not
    /// while a non-const member runs.
    [[nodiscard]] std::span<const MeshBuffers> meshes() const {
        if (pending_.load(std::memory_order_acquire)) evaluate_pending();
        return meshes_;
    }
    /// meshes() without evaluating anything: the slots of a mesh whose animated layer is
    /// pending (animated_pending) hold an earlier evaluation; every other vertex is current.
    /// For consumers that evaluate those slots themselves (evaluate_animated_into).
    [[nodiscard]] std::span<const MeshBuffers> meshes_as_stored() const { return meshes_; }
    /// Mesh `mesh` has an animated layer whose last change is not yet in meshes_as_stored().
    [[nodiscard]] bool animated_pending(std::size_t mesh) const { return animated_[mesh].pending; }
    /// Incremented each time a VisualParamUpdateJob changes mesh `mesh`'s animated layer (its
    /// weights or the shape under its slots), whether it evaluates it or defers it; 0 for a
    /// mesh without a layer. A consumer of evaluate_animated_into re-evaluates when it changes.
    [[nodiscard]] std::uint64_t animated_serial(std::size_t mesh) const { return animated_[mesh].serial; }
    /// Coordinates (metres) and unit normals of mesh `mesh`'s animated slots as of the last
    /// VisualParamUpdateJob (the evaluation that job documents, the same bits as meshes()),
    /// written at each slot's mesh vertex into `positions` and `normals` (SoA, at least the
    /// mesh's vertex count; other vertices untouched): for a skinner that reads only these two
    /// streams and keeps its own bind pose, without the MeshBuffers' six. Changes nothing in
    /// this state (a pending layer stays pending). Returns the slots written (0: no layer, or
    /// the spans are too short and nothing is written). No allocation; not concurrently with
    /// other members of this state (it uses the state's scratch).
    std::size_t evaluate_animated_into(std::size_t mesh, SoaVec3Out positions, SoaVec3Out normals);
    /// Accumulated local scale / position change per skeleton joint from skeletal params and
    /// volume morphs, relative to the rest pose (metres for positions).
    [[nodiscard]] std::span<const Vec3> joint_scale_deltas() const { return scale_deltas_; }
    [[nodiscard]] std::span<const Vec3> joint_position_deltas() const { return position_deltas_; }
    /// `mSkeletonSerialNum`: incremented when a skeletal param's applied weight changes (bone
    /// lengths changed: body size and constraint set-up depend on it).
    [[nodiscard]] std::uint32_t skeleton_serial() const { return skeleton_serial_; }

private:
    friend struct VisualParamUpdateJob;
    void propagate(ParamIndex driver, int depth);
    /// Records the effective weights of mesh `mesh`'s animated layer and marks it pending.
    void record_animated(std::size_t mesh);
    /// The kernel arguments of mesh `mesh`'s layer from its recorded weights (fills the scratch).
    void animated_args(std::size_t mesh, animated_detail::Args& args) const;
    /// Evaluates every pending layer into meshes_ (under pending_mutex_); see meshes().
    void evaluate_pending() const;
    std::shared_ptr<const AppearanceModel> model_;
    std::vector<float> weights_, last_;
    // Written by const meshes() when a layer is pending (under pending_mutex_).
    mutable std::vector<MeshBuffers> meshes_;
    mutable std::vector<AnimatedShape> animated_;  // per model mesh (empty for meshes without a layer)
    mutable std::vector<const float*> active_morphs_;  // evaluation scratch (capacity kept)
    mutable std::vector<float> active_weights_;
    mutable std::mutex pending_mutex_;
    mutable std::atomic<bool> pending_{false};  // some layer is pending
    std::vector<Vec3> scale_deltas_, position_deltas_;
    detail::ChangedParams changed_;  // params set since the last job (see VisualParamUpdateJob)
    Sex sex_ = Sex::Female;
    bool dirty_ = true;
    std::uint32_t skeleton_serial_ = 0;
};

/// What one VisualParamUpdateJob::run did (for tests, profiling and overlays).
struct VisualParamUpdateStats {
    int params_applied = 0;    ///< params whose effective weight changed
    int morphs_applied = 0;    ///< morph targets applied (one per mesh of a shared param)
    /// Morph vertex entries processed differentially, plus animated slots evaluated.
    std::size_t vertices_touched = 0;
    int skeletal_applied = 0;  ///< skeletal params and volume morphs applied
};

/// `LLCharacter::updateVisualParams`: applies each param whose effective weight differs from
/// its last applied weight, in param (id) order, with d = effective − last (animated morphs
/// excepted, see the last point):
///  * morph: per morph vertex v: coords[v] += dCoord·d; scaledNormal[v] += dNormal·(d·0.65),
///    normal[v] = normalize(scaledNormal[v]); scaledBinormal[v] += dBinormal·(d·0.65),
///    tangent = scaledBinormal[v] × normal[v], binormal[v] = normalize(normal[v] × tangent);
///    texcoords[v] += dUV·d; each volume morph: scale += scale·d, position += pos·d;
///  * skeleton: each bound joint's local scale += d·scaleDelta (collision-volume children by
///    their pre-multiplied delta), each offset bone's local position += w·offset − last·offset;
///  * driver, colour and alpha params: nothing to apply (drivers propagate in set_weight);
///  * animated morphs (AppearanceParam::animated): their volume morphs as above; their mesh
///    entries are not applied differentially: after the loop, each mesh whose animated weights
///    or whose shape under the animated slots changed has its AnimatedMorphSet slots evaluated
///    from the current weights: coords = shape + Σ dCoord·w, accumulators = shape + Σ Δ·(w·0.65),
///    texcoords = shape + Σ dUV·w over the morphs with w ≠ 0 in ascending param order, then
///    normal and binormal as above (the shape's where degenerate); no morph on → the shape.
///    The result depends on the current weights only (bit-identical to a fresh avatar's, on every
///    instruction set), and equals the differential sum up to float rounding.
/// A normal or binormal whose accumulator has zero length keeps its previous value (the viewer
/// would produce NaN). When `pose` is given (non-empty spans, ≥ the skeleton's joints), the same
/// joint changes are added to it, like the viewer mutating its joints. Returns immediately
/// when the state is not dirty. No allocation.
struct VisualParamUpdateJob {
    AppearanceState* state = nullptr;
    LocalPose pose;                     ///< optional: local pose receiving joint changes
    VisualParamUpdateStats* stats = nullptr;  ///< optional
    /// Optional, empty or ≥ the skeleton's joints: for every joint a skeletal param moved, the
    /// job ORs bit 1 (position) or 2 (scale) into its byte (never clears). Volume morphs do not
    /// mark joints: the viewer writes those without attachment overrides, skeletal params with
    /// them (`LLPolySkeletalDistortion::apply`: `setPosition(…, true)`, `setScale(…, true)`).
    std::span<std::uint8_t> touched;
    /// Leave the animated layers this run changes pending instead of evaluating them into the
    /// MeshBuffers: AppearanceState::meshes() evaluates them when next called, and a skinner
    /// evaluates just the coordinates and normals it reads with evaluate_animated_into (an
    /// emote fade then costs 6 of the 17 streams per slot, written where the skinner reads
    /// them). Same results either way. Off: evaluated here (and any earlier pending layer too).
    bool defer_animated = false;

    [[nodiscard]] bool validate() const;
    bool run() const;
};

}  // namespace slanim
