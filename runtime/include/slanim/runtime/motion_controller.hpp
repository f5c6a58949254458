// SPDX-License-Identifier: MIT
// The per-avatar motion controller (LLMotionController + LLMotion, spec §2.3, §3.1–§3.3, §3.5).
//
// Work is split into the world's phases: control() advances time, computes every motion's
// weight and decides which motions are evaluated (joint signatures); sample() evaluates them;
// blend() offers their joint states to the PoseBlender in the viewer's order and applies them.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "slanim/core/blend.hpp"
#include "slanim/core/clip.hpp"
#include "slanim/core/sampling.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/ik/constraints.hpp"
#include "slanim/runtime/custom_motion.hpp"

namespace slanim {

/// The per-instance part of a custom motion (slanim/runtime/custom_motion.hpp): its object and
/// its joint states, which persist between frames like LLJointState objects.
struct CustomInstance {
    const CustomMotionType* type = nullptr;  ///< kept alive by the instance's clip (its shape)
    std::unique_ptr<CustomMotion> motion;
    std::vector<Quat> rotations;  ///< per spec joint
    std::vector<Vec3> positions;  ///< per spec joint; empty when no joint has a position
    std::vector<Vec3> scales;     ///< per spec joint; empty when no joint has a scale
};

/// The avatar's pose before this frame's blend, for custom motions (CustomMotionContext).
/// Spans may be empty (no pose known).
struct PoseInput {
    std::span<const Quat> local_rotations;
    std::span<const Vec3> local_positions;
    std::span<const Quat> model_rotations;
    std::span<const Vec3> model_positions;
};

/// Frame of a look-at target given to MotionController::set_look_at.
enum class LookAtFrame : std::uint8_t {
    /// A point in the avatar-root frame (X forward, Y left, Z up, metres; the pelvis rests at
    /// the origin): each frame the head's model position (last step's pose) is subtracted, as
    /// `LLHUDEffectLookAt::calcTargetPosition` subtracts the head's world position. (A
    /// controller sampled without a pose, sample() with no PoseInput, uses the point as the
    /// offset.)
    AvatarRoot,
    /// The viewer's "LookAtPoint" itself: the vector from the head joint to the target, in
    /// avatar-root axes.
    HeadOffset,
};

/// The constraint side of a motion instance whose clip has IK constraints.
struct InstanceConstraints {
    /// The clip's constraints resolved for the skeleton (at start), their per-instance state
    /// and what each did in the last step (IkFeature's `constraints` system).
    ik::ConstraintSet constraints;
    std::vector<ik::ConstraintState> states;
    std::vector<ik::ConstraintReport> reports;
    /// The joint mask `onUpdate` received (`last_joint_signature`, spec §3.3): rotation
    /// signatures of the motions processed before this one this frame.
    std::array<std::uint8_t, kMaxAnimatedJoints> joint_mask{};
};

/// One playing instance of a clip (an `LLMotion` instance).
struct MotionInstance {
    std::shared_ptr<const MotionClip> clip;
    BlendType blend_type = BlendType::Normal;
    float min_pixel_area = 40.f;  ///< keyframe motions: 40 (LOD fade threshold)
    bool can_deprecate = true;

    // LLMotion state, seconds on the controller's clock.
    float activation_time = 0.f;
    float stop_time = 0.f;
    float send_stop_time = std::numeric_limits<float>::max();
    bool stopped = false;
    bool active = false;
    bool deprecated = false;
    float residual_weight = 0.f;
    float fade_weight = 1.f;
    float pose_weight = 0.f;  ///< `LLPose::getWeight()`: the weight of every joint state

    // LLKeyframeMotion state.
    LoopState loop;
    float curve_time = 0.f;  ///< looped time sampled this frame

    /// Set by control(): sampled and offered to the blender this frame (false when the joint
    /// signature test left it idle, §3.3).
    bool evaluate = false;

    /// `onUpdate` times (motion time, unlooped, ≥ 0): this frame's and the previous one
    /// (`mLastUpdateTime`, used by the constraints' fix-up speed).
    float update_time = 0.f;
    float last_update_time = 0.f;
    /// IK constraints of the clip (null when it has none, as most clips: keeps instances
    /// small).
    std::unique_ptr<InstanceConstraints> ik;

    /// Key cursors of the sampling job (per clip track).
    SamplingCursor cursor;
    /// Where sample() wrote this instance's joint states in the BlendScratch (first track).
    std::uint32_t state_offset = 0;

    /// Set for a custom motion (then `clip` is its type's shape, and sample() calls its
    /// update() instead of sampling keys); null for keyframe motions.
    std::unique_ptr<CustomInstance> custom;
};

/// Working memory of the sample and blend phases: the joint states of the motions being
/// evaluated (per track, in blend order) and the PoseBlender's slots. Its content is valid from
/// one avatar's sample() to its blend(); the World keeps one per worker thread, so that the
/// per-avatar state stays small (a blender alone is 214 joints × 6 slots). Grows to the largest
/// need seen (allocation only then); not thread-safe: one per thread.
struct BlendScratch {
    PoseBlender blender;
    std::vector<Quat> rotations;
    std::vector<Vec3> positions;
};

/// Options of one start() call.
struct StartOptions {
    float start_offset = 0.f;  ///< seconds: the motion starts as if it began this long ago
    BlendType blend_type = BlendType::Normal;
};

class MotionController {
public:
    explicit MotionController(std::shared_ptr<const Skeleton> skeleton);

    /// `startMotion(id, start_offset)`: the clip is the motion id. A blending or once-stopped
    /// instance is deprecated (eases out) and a fresh one starts; a fully weighted active
    /// instance keeps playing (no restart). Returns false for a null clip.
    bool start(std::shared_ptr<const MotionClip> clip, const StartOptions& options = {});
    /// `stopMotionLocally(id, immediate)`: sets the stop time (deferred for looping clips, see
    /// `LLKeyframeMotion::setStopTime`); immediate deactivates at once.
    bool stop(const MotionClip* clip, bool immediate = false);
    /// Stops every active motion.
    void stop_all(bool immediate = false);
    /// True when the canonical instance of `clip` is active.
    [[nodiscard]] bool is_active(const MotionClip* clip) const;

    /// Starts a custom motion (`startMotion` with the type as the id), with the same
    /// deprecation and no-restart rules as start(): a blending or once-stopped instance eases
    /// out and a fresh one (a new CustomMotion from the type's factory) starts. The type's
    /// blend type, priorities and timing apply. Stop it with stop(&type->shape()). Returns
    /// false for a null type or one built for a skeleton with another joint count.
    bool start_custom(std::shared_ptr<const CustomMotionType> type, float start_offset = 0.f);

    /// The look-at target custom motions read as "LookAtPoint" (`LLCharacter::
    /// setAnimationData`); `clear_look_at` = `removeAnimationData`.
    void set_look_at(Vec3 target, LookAtFrame frame = LookAtFrame::AvatarRoot) {
        look_at_ = target;
        look_at_frame_ = frame;
        has_look_at_ = true;
    }
    void clear_look_at() { has_look_at_ = false; }
    [[nodiscard]] bool has_look_at() const { return has_look_at_; }
    [[nodiscard]] Vec3 look_at() const { return look_at_; }
    [[nodiscard]] LookAtFrame look_at_frame() const { return look_at_frame_; }
    /// Visual param requests of this frame's custom motions (reset by control()).
    [[nodiscard]] const AnimationOutputs& animation_outputs() const { return outputs_; }
    /// Seed of the per-instance seeds custom motions receive (the World sets one per avatar).
    void set_random_seed(std::uint64_t seed) { seed_ = seed; }
    /// Where to report growth of state_count(): every activation raises `*sink` to this
    /// controller's state_count() if it is larger (relaxed atomic maximum; thread-safe for
    /// controllers of different avatars). The World gives every avatar its own world's sink to
    /// size the per-thread scratch before a step without visiting every controller. Null: none.
    void set_state_need_sink(std::atomic<std::size_t>* sink) { state_need_ = sink; }

    /// The viewer's always-running LLPelvisFixMotion (LOW priority, pelvis position 0,
    /// ease 0.5/0.5 s) that returns the pelvis to the root when nothing positions it.
    void start_pelvis_fix();

    /// Avatar pixel area for LOD fading (`getPixelArea`). Default: large (never faded).
    void set_pixel_area(float area) { pixel_area_ = area; }
    /// `setTimeFactor`: playback speed.
    void set_time_factor(float f) { time_factor_ = f; }
    /// `pauseAllMotions` / `unpauseAllMotions`.
    void set_paused(bool p) { paused_ = p; }
    [[nodiscard]] bool paused() const { return paused_; }
    /// `mAnimTime`, seconds.
    [[nodiscard]] float anim_time() const { return anim_time_; }
    /// This frame's time step after the time factor (seconds).
    [[nodiscard]] float frame_dt() const { return frame_dt_; }
    [[nodiscard]] float pixel_area() const { return pixel_area_; }

    /// Phase `control`: the frame clock (F64) advances by dt (seconds); T += (clock − previous
    /// clock, each read as F32) × time factor, in F32 (LLMotionController::updateMotions: so
    /// ease-out ends and loop wraps that land on a frame fall as in the viewer), then the
    /// weights and state machine of `updateMotionsByType` for additive then regular motions
    /// (newest first).
    void control(float dt);
    /// Phase `control` of a hidden avatar, `updateMotionsMinimal`: the clock stands still,
    /// every stopped motion is deactivated, nothing is marked for evaluation (sample() and
    /// blend() then do nothing) and external states are dropped.
    void control_minimal();
    /// Phase `sample`: evaluates the motions control() marked into `scratch` (which grows to
    /// the sum of their tracks, then no longer allocates); custom motions' update() runs here,
    /// with `pose` (the avatar's pose before this frame's blend) in its context.
    void sample(BlendScratch& scratch, const PoseInput& pose = {});
    /// Phase `blend`: offers the joint states sample() left in `scratch` (the same scratch, no
    /// other avatar's sample() in between) to the blender in the viewer's order and applies
    /// them to `pose` (joints nobody drives keep their transform). No allocation once the
    /// scratch has grown.
    void blend(const LocalPose& pose, BlendScratch& scratch);
    /// sample() and blend() with a scratch the controller owns (made at the first call): for
    /// single-avatar tools and tests that drive the phases themselves.
    void sample();
    void blend(const LocalPose& pose);

    /// Joint states of a motion driven outside the controller (the puppetry motion, spec
    /// §9.3): the next blend() offers states[i] for joint joints[i] (same length) after the
    /// additive motions and before the regular ones, i.e. as the newest regular motion, then
    /// forgets them. The spans and what the states point to must stay valid until then.
    void set_external_states(std::span<const std::int16_t> joints,
                             std::span<const JointStateRef> states) {
        external_joints_ = joints;
        external_states_ = states;
    }

    /// Joint states sample() may write: the tracks of every active motion.
    [[nodiscard]] std::size_t state_count() const {
        std::size_t n = 0;
        for (const auto& m : active_)
            if (!m->custom) n += m->clip->tracks().size();
        return n;
    }
    /// Heap bytes of this controller's motion instances (cursors and constraint state
    /// included, shared clips excluded); sizeof(MotionController) not included.
    [[nodiscard]] std::size_t state_bytes() const;

    /// True when the next blend() may write joint scales: an external state with a scale
    /// (keyframe tracks have rotations and positions only).
    [[nodiscard]] bool offers_scale() const {
        for (const JointStateRef& s : external_states_)
            if (s.usage & kUsageScale) return true;
        for (const auto& m : active_)
            if (m->custom && !m->custom->scales.empty()) return true;
        return false;
    }

    /// The instances control() marked for evaluation this frame, in update (and blend) order:
    /// additive, then regular, each newest first.
    [[nodiscard]] std::span<MotionInstance* const> evaluated() const { return blend_order_; }
    /// The scratch sample() and blend() without a scratch use; null before the first call.
    [[nodiscard]] BlendScratch* own_scratch() const { return own_scratch_.get(); }
    /// Active instances, newest first (`mActiveMotions`).
    [[nodiscard]] std::span<const std::unique_ptr<MotionInstance>> active() const { return active_; }
    [[nodiscard]] const Skeleton& skeleton() const { return *skeleton_; }

private:
    void activate(MotionInstance& m, float time);
    void deactivate(MotionInstance& m);
    bool stop_instance(MotionInstance& m, bool immediate);
    void set_stop_time(MotionInstance& m, float time);
    using JointSignature = std::array<std::array<std::uint8_t, kMaxAnimatedJoints>, 2>;
    void update_by_type(BlendType type, JointSignature& signature);
    void update_idle(MotionInstance& m);
    /// `onUpdate(t, joint_mask)`; a null mask leaves the instance's mask as it was.
    void on_update(MotionInstance& m, float t, bool& alive,
                   const std::uint8_t* joint_mask = nullptr);
    MotionInstance* find(const MotionClip* clip) const;
    void remove_inactive();
    /// Keeps a deprecated keyframe instance, reset to a fresh one's state, as the spare of its
    /// clip (at most one per clip), so restarting a finished motion allocates nothing; drops it
    /// otherwise.
    void retire(std::unique_ptr<MotionInstance> m);
    /// The spare of `clip`, or null.
    std::unique_ptr<MotionInstance> take_spare(const MotionClip* clip);
    bool start_instance(std::shared_ptr<const MotionClip> clip, const StartOptions& options,
                        const std::shared_ptr<const CustomMotionType>& custom);
    void update_custom(MotionInstance& m, const PoseInput& pose);

    std::shared_ptr<const Skeleton> skeleton_;
    std::vector<std::unique_ptr<MotionInstance>> all_;     // canonical + deprecated instances
    std::vector<std::unique_ptr<MotionInstance>> active_;  // newest first; owns active instances
    std::vector<std::unique_ptr<MotionInstance>> spare_;   // retired instances for reuse (see retire)
    std::atomic<std::size_t>* state_need_ = nullptr;         // see set_state_need_sink
    std::vector<MotionInstance*> blend_order_;             // addMotion call order this frame
    std::unique_ptr<BlendScratch> own_scratch_;  // for sample()/blend() without a scratch
    std::shared_ptr<const MotionClip> pelvis_fix_;
    std::span<const std::int16_t> external_joints_;
    std::span<const JointStateRef> external_states_;
    float anim_time_ = 0.f, last_time_ = 0.f, time_factor_ = 1.f;
    double clock_ = 0.0;        // the frame clock: seconds of dt given to control() (F64)
    float prev_elapsed_ = 0.f;  // `mPrevTimerElapsed`: the clock read as F32 last control()
    float pixel_area_ = std::numeric_limits<float>::max();
    float frame_dt_ = 0.f;
    bool paused_ = false, has_run_once_ = false;
    // Custom motions: animation data, outputs, seeds, joints to reset on deactivation.
    Vec3 look_at_;
    LookAtFrame look_at_frame_ = LookAtFrame::AvatarRoot;
    bool has_look_at_ = false;
    bool identity_pending_ = false;
    AnimationOutputs outputs_;
    std::uint64_t seed_ = 0, instances_made_ = 0;
    std::vector<std::int16_t> identity_joints_;  // reset to identity at the next blend (no repeats)
    int head_ = -1;  // mHead, for look-at points in the avatar-root frame
};

}  // namespace slanim
