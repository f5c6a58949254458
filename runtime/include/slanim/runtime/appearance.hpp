// SPDX-License-Identifier: MIT
// The per-avatar appearance component: visual param weights and morphed meshes
// (slanim/appearance/visual_params.hpp), the procedural motions that drive morphs from the playing
// animations — hand poses (`LLHandMotion`, spec §5) and emotes (`LLEmote`, spec §6.4) — an
// optional eye blink, and the CPU-skinned output meshes (slanim/core/skinning.hpp).
//
// In a World, AppearanceFeature (slanim/runtime/appearance_feature.hpp) holds each avatar's
// Appearance, and two systems serve every avatar that has one, in two phases after
// `local_to_model`:
//
//     morph: hand motion, emotes, blink, then VisualParamUpdateJob (only changed params cost
//            work; a hand-pose, emote or blink fade evaluates only the vertices those morphs
//            move, from the current weights; skeletal params also update the local and model
//            pose)
//     skin:  SlSkinningJob on the morphed buffers with the avatar's model pose
//
// Avatars without an Appearance are skipped by a null check. Frames and units: SL avatar space
// (X forward, Y left, Z up), metres, seconds.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "slanim/core/skinning.hpp"
#include "slanim/appearance/visual_params.hpp"
#include "slanim/runtime/bind_pose_cache.hpp"
#include "slanim/runtime/motion_controller.hpp"

namespace slanim {

class World;
struct LocalPose;
struct ModelPose;

// ---------------------------------------------------------------------------------------------
// Hand poses (spec §5)
// ---------------------------------------------------------------------------------------------

/// The visual param of a hand pose (`gHandPoseNames`): "" for 0 (SPREAD, no morph),
/// "Hands_Relaxed" for 1, …, "Hands_Spread_R" for 13 (PALM_R); nullptr out of range.
const char* hand_pose_param_name(int pose);

/// What the evaluated keyframe motions published this frame (`"Hand Pose"` /
/// `"Hand Pose Priority"` animation data).
struct HandPoseRequest {
    int pose = -1;      ///< −1: nobody published
    int priority = -1;  ///< the publisher's max joint priority (`mMaxPriority`)
};

/// The hand pose published by the motions `control()` evaluated this frame
/// (`LLKeyframeMotion::applyKeyframes`): motions are visited in evaluation order (additive then
/// regular, newest first within each); a motion publishes when nobody has yet or when its
/// clip's max_priority() ≥ the published priority — so among equal priorities the oldest
/// wins. Motions skipped by the joint-signature test (evaluate == false) and the controller's
/// pelvis fix (not a keyframe motion in the viewer) do not publish.
HandPoseRequest published_hand_pose(const MotionController& controller);

/// `LLHandMotion`: writes only the `Hands_*` morph weights. Linear cross-fades of
/// kBlendTime seconds between the current and the requested pose; SPREAD has no morph (its
/// side counts as already faded); no request → RELAXED.
class HandMotion {
public:
    static constexpr float kBlendTime = 0.2f;  ///< `HAND_MORPH_BLEND_TIME`, seconds

    /// Resolves the 13 hand params (missing ones read as weight 0 and are not written, as the
    /// viewer's name lookups do).
    explicit HandMotion(const AppearanceModel& model);

    /// `onActivate`: every hand morph 0, the current pose's morph 1.
    void activate(AppearanceState& state);
    /// `onUpdate`: `requested` is the published pose (−1 none); `dt` the motion-time step in
    /// seconds. Out-of-range requests are ignored and counted. No allocation.
    void update(AppearanceState& state, int requested, float dt);

    [[nodiscard]] int current_pose() const { return current_; }
    /// The pose being faded in (== current_pose() when no fade is in flight).
    [[nodiscard]] int new_pose() const { return new_; }
    /// Requests outside [0, 14) seen so far (the viewer logs a warning for each).
    [[nodiscard]] int out_of_range_requests() const { return out_of_range_; }
    [[nodiscard]] ParamIndex param(int pose) const { return params_[pose]; }

private:
    void set(AppearanceState& s, int pose, float w) const;
    [[nodiscard]] float get(const AppearanceState& s, int pose) const;
    std::array<ParamIndex, kNumHandPoses> params_{};
    int current_ = 1, new_ = 1;  // HAND_POSE_RELAXED
    int out_of_range_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Emotes (spec §6.4)
// ---------------------------------------------------------------------------------------------

/// The 19 emotes registered to `LLEmote`: index → lower-case name (= visual param name).
std::span<const std::string_view> emote_names();
/// Index in emote_names() of an `.anim` emote field: the name (case-insensitive) or the
/// `ANIM_AGENT_EXPRESS_*` UUID; −1 when it is not an LLEmote (other animations named there are
/// keyframe motions the viewer would start; slanim does not).
int find_emote(std::string_view emote_field);

/// `LLEmote` instances of one avatar. Each runs the motion controller's weight rules for a
/// non-looping motion with ease in 0.3 s, ease out 1.4 s and duration 2.8 s (so the stop is
/// sent 1.4 s after activation, on the first frame past it): cubic_step up over 0.3 s, full,
/// then cubic_step down over 1.4 s from the stop; the face pseudo-joint signature (0xFF) lets
/// only the newest fully weighted emote update when several overlap. Each update sets its
/// param to min + w·(max − min) and `Express_Closed_Mouth` to min + (1 − w)·(max − min);
/// deactivation restores the param's default and Closed_Mouth's max.
class EmoteMotion {
public:
    static constexpr float kEaseIn = 0.3f;    ///< `EMOTE_MORPH_FADEIN_TIME`
    static constexpr float kEaseOut = 1.4f;   ///< `EMOTE_MORPH_FADEOUT_TIME`
    static constexpr float kDuration = 2.8f;  ///< 0.3 + 1.1 + 1.4

    struct Instance {
        ParamIndex param = kNoParam;
        float activation_time = 0.f;
        float send_stop_time = 0.f;
        float stop_time = 0.f;
        float residual_weight = 0.f;
        float pose_weight = 0.f;
        bool stopped = false;
    };

    explicit EmoteMotion(const AppearanceModel& model);

    /// `startMotion(emote)` at controller time `time` (seconds): false when the emote is
    /// unknown to the model or already active (no restart). Calls `onActivate` (Closed_Mouth to
    /// max, the param to 0). Allocates only the first few times (capacity kept).
    bool start(AppearanceState& state, int emote, float time);
    /// One controller frame: `time` = mAnimTime now, `last_time` = the previous frame's.
    void update(AppearanceState& state, float time, float last_time);
    /// Active emotes, newest first.
    [[nodiscard]] std::span<const Instance> active() const { return active_; }
    /// The param of emote index `emote` in this model, or kNoParam.
    [[nodiscard]] ParamIndex param(int emote) const;

private:
    void on_update(AppearanceState& s, const Instance& e) const;
    void deactivate(AppearanceState& s, const Instance& e) const;
    std::vector<ParamIndex> params_;  // per emote index
    ParamIndex closed_mouth_ = kNoParam;
    std::vector<Instance> active_;
};

// ---------------------------------------------------------------------------------------------
// The component
// ---------------------------------------------------------------------------------------------

/// Options of an Appearance.
struct AppearanceOptions {
    /// Eye blinking on `Blink_Left`/`Blink_Right` (off by default; the viewer's LLEyeMotion
    /// blinks at random intervals). Timing chosen here, deterministic: a blink every
    /// `blink_interval` seconds of controller time (first one after one interval): closing
    /// linearly over 0.05 s, closed for 0.05 s, opening linearly over 0.1 s.
    /// Independently of this option, the blinks of the viewer's eye motion (procedural.hpp,
    /// ProceduralFeature::set_motions) are applied when that motion runs.
    bool blink = false;
    float blink_interval = 4.f;
    /// Skin in the skin phase (off: morph only, e.g. for servers that need no vertices).
    bool skin = true;
    SkinningIsa isa = SkinningIsa::Auto;
    /// Write the skinned vertices with non-temporal stores (SlSkinningJob::streaming_stores):
    /// they bypass this core's caches, which a crowd's meshes (~128 KiB per avatar) would only
    /// flush, and need no read-for-ownership. Same values; off when the host reads the outputs
    /// on the same core right after the step.
    bool streaming_stores = true;
    /// Where the morphed bind poses live (slanim/runtime/bind_pose_cache.hpp). Give the avatars
    /// of a crowd one cache and those whose meshes morph to the same bits (same shape, same hand
    /// pose) skin from one shared copy: each reads the bind pose (24 B per vertex) from a copy
    /// that stays in cache and writes only its output, half the skin phase's memory traffic,
    /// and holds no bind pose of its own; the cost is hashing a mesh once after it stops
    /// changing. Null (the default): the appearance keeps its bind poses to itself and hashes
    /// nothing. Same results either way. The cache may be shared by appearances of different
    /// models (entries never mix models) and by avatars of different worlds.
    std::shared_ptr<BindPoseCache> bind_poses{};
};

/// One base mesh's skinning set-up and output. Positions and normals are SoA streams
/// (slanim/core/skinning.hpp); soa_to_aos() converts.
struct SkinnedMesh {
    int mesh = 0;               ///< index in AppearanceModel::meshes()
    SkinJointList joints;       ///< expanded joint list (rigid meshes: the one joint they ride)
    std::vector<float> rigid_weights;  ///< all 0 for rigid meshes (no skin weights in the file)
    std::vector<SkinMatrix> matrices;  ///< per entry, this frame
    SoaVec3Buffer positions, normals;  ///< skinned output, avatar-root frame
    /// The morphed bind pose the last skin phase read (metres, unit normals, avatar frame): the
    /// mesh's MeshBuffers as of its last change, possibly a copy shared with other avatars
    /// (AppearanceOptions::bind_poses). Zeros before the first skin phase; empty for an
    /// appearance created without skinning (AppearanceOptions::skin false).
    [[nodiscard]] SoaVec3In bind_positions() const { return bind ? bind->positions.in() : SoaVec3In{}; }
    [[nodiscard]] SoaVec3In bind_normals() const { return bind ? bind->normals.in() : SoaVec3In{}; }
    /// The entry holding the bind pose (owned by the appearance's BindPoseCache; read-only for
    /// hosts: the skin phase exchanges it).
    BindPoseCache::Entry* bind = nullptr;
    std::uint64_t seen_revision = ~std::uint64_t{0};  ///< the MeshBuffers revision in `bind`
    std::uint64_t seen_serial = 0;  ///< the animated layer's serial in `bind` (animated_serial)
    bool bind_valid = false;  ///< `bind` holds this avatar's bind pose as of those two
    bool settled = false;  ///< the bind pose has been looked up since its last change
};

/// The appearance component of one avatar.
class Appearance {
public:
    /// Builds the component (allocates everything the phases need): skin joint lists of every
    /// weighted mesh (errors from build_skin_joint_list / check_sl_weights), rigid meshes ride
    /// mEyeLeft / mEyeRight (eyeBall meshes; vertices are in the eye joint's frame) or the
    /// avatar root. The hand motion is activated (relaxed hands).
    static Result<std::unique_ptr<Appearance>> create(std::shared_ptr<const AppearanceModel> model,
                                                      const AppearanceOptions& options = {});
    /// Gives the bind poses back to the cache.
    ~Appearance();
    Appearance(const Appearance&) = delete;
    Appearance& operator=(const Appearance&) = delete;

    [[nodiscard]] AppearanceState& state() { return state_; }
    [[nodiscard]] const AppearanceState& state() const { return state_; }
    [[nodiscard]] const AppearanceModel& model() const { return state_.model(); }
    [[nodiscard]] HandMotion& hand() { return hand_; }
    [[nodiscard]] const HandMotion& hand() const { return hand_; }
    [[nodiscard]] EmoteMotion& emotes() { return emotes_; }
    [[nodiscard]] const EmoteMotion& emotes() const { return emotes_; }
    [[nodiscard]] const AppearanceOptions& options() const { return options_; }
    [[nodiscard]] std::span<const SkinnedMesh> skinned() const { return skinned_; }
    /// What the last morph phase's param update did.
    [[nodiscard]] const VisualParamUpdateStats& last_update() const { return stats_; }
    /// Joints the last morph phase's skeletal params moved (per joint: bit 1 position, bit 2
    /// scale; VisualParamUpdateJob::touched), for the World to re-apply attachment overrides.
    [[nodiscard]] std::span<const std::uint8_t> touched_joints() const { return touched_; }

    /// The morph phase for this avatar: (unless the controller is paused) starts the emotes of
    /// newly activated motions, runs the hand motion with this frame's published pose, the
    /// emotes, the blink and the eye motion's blink requests (MotionController::
    /// animation_outputs); then applies changed params (VisualParamUpdateJob) to the meshes
    /// and to `local` (with AppearanceOptions::skin the animated slots are left to skin(); the
    /// state's meshes() still evaluates them for any reader). Returns true when joint transforms changed (the caller recomputes the
    /// model pose). No allocation in steady state.
    bool morph(const MotionController& controller, LocalPose& local);
    /// The skin phase: skinning matrices from the model pose and local scales (each distinct
    /// joint entry of the meshes' lists once, then copied into every mesh's list), then skins
    /// every mesh. A mesh the morph phase changed is copied into a bind pose of the avatar's own;
    /// the animated slots (hand poses, emotes, blinks), which a skinned appearance's morph phase
    /// leaves pending (VisualParamUpdateJob::defer_animated), are evaluated straight into that
    /// bind pose (AppearanceState::evaluate_animated_into), and while only they change, into the
    /// entry the avatar already holds without copying the rest of the mesh again. With a shared
    /// cache, a mesh unchanged since the previous skin phase is settled (looked up,
    /// BindPoseCache). No allocation, except a new bind pose when a shared one is left and the
    /// cache has no free one of that mesh.
    void skin(const ModelPose& model_pose, const LocalPose& local);
    /// Asks the CPU to fetch what morph() and skin() read first for this avatar, in two
    /// steps so that neither waits for memory: step 0 the skinned meshes' set-up array (read
    /// through this object, which the caller fetched before), step 1 (a step later) the joint
    /// entries of the palette, the meshes' matrices and mesh revisions; not the vertex streams. A world runs the
    /// steps an avatar or two ahead to overlap the cache misses with other avatars' work. Reads
    /// only this object's containers; no effect on results. `step` is 0 or 1 (other values act
    /// as 1). Call from the thread that runs this avatar.
    void prefetch(int step) const;

private:
    Appearance(std::shared_ptr<const AppearanceModel> model, const AppearanceOptions& options);
    void build_palette();  // palette_joints_, palette_index_ from the meshes' joint lists
    // The mesh changed since its bind pose was written (morphs, or the animated layer).
    [[nodiscard]] bool changed(const SkinnedMesh& sm) const;
    // Writes the mesh's current bind pose into an entry of its own (see skin()).
    void update_bind_pose(SkinnedMesh& sm);
    AppearanceState state_;
    HandMotion hand_;
    EmoteMotion emotes_;
    AppearanceOptions options_;
    std::vector<SkinnedMesh> skinned_;
    // The distinct entries of every mesh's joint list (a joint's entry is the same in every
    // mesh: its bind offset depends on the joint alone), computed once per skin phase;
    // skinned_[m].matrices[e] = palette_[palette_index_[m][e]].
    SkinJointList palette_joints_;
    std::vector<SkinMatrix> palette_;
    std::vector<std::vector<std::uint16_t>> palette_index_;
    std::shared_ptr<BindPoseCache> bind_poses_;  // the options' cache, or one of our own
    VisualParamUpdateStats stats_;
    std::vector<std::uint8_t> touched_;  // per skeleton joint, see touched_joints()
    ParamIndex blink_left_ = kNoParam, blink_right_ = kNoParam;
    struct Seen {
        const MotionInstance* instance;
        float activation_time;
    };
    std::vector<Seen> seen_, seen_next_;
    float last_time_ = 0.f;
    bool has_time_ = false;
};

}  // namespace slanim
