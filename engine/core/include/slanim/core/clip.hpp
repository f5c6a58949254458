// SPDX-License-Identifier: MIT
// The immutable runtime motion ("clip") and its motion-time to curve-time mapping (spec §2.2).
//
// A MotionClip is built once from a decoded Motion for one skeleton and shared by every avatar
// that plays it (like the viewer's process-wide keyframe cache). Keys live in flat arrays, times
// separate from values (SoA), one track per animated joint. Sampling a clip at a curve time is
// SamplingJob's work (slanim/core/sampling.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "slanim/core/blend.hpp"
#include "slanim/core/math.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/result.hpp"
#include "slanim/core/track_usage.hpp"

namespace slanim {

class Skeleton;

/// Per-track description. A track animates one skeleton joint.
struct ClipTrack {
    std::int16_t joint = -1;  ///< skeleton joint index
    /// Priority used for blending and signatures: the joint priority, or the base priority when
    /// it is −1, clamped to [0, 6] (spec §11.2: the viewer's −1 and > 7 cases are hazards).
    std::int8_t priority = 0;
    std::uint8_t usage = 0;  ///< kUsagePos | kUsageRot: which curves have keys
    std::uint32_t rot_first = 0, rot_count = 0;  ///< range in rot_times()/rot_values()
    std::uint32_t pos_first = 0, pos_count = 0;  ///< range in pos_times()/pos_values()
};

namespace detail {
/// How SamplingJob walks a clip (private to slanim::core: engine/core/src/sampling_plan.hpp).
struct SamplingPlan;
}  // namespace detail

class MotionClip {
public:
    /// Builds the runtime clip. Joints unknown to the skeleton are dropped (the viewer keeps
    /// them as dummies that animate nothing). Rotation keys are normalized (the viewer keeps
    /// over-long keys as decoded; spec §11.2). When a joint has several entries, the first one is
    /// blended (`LLPose::addJointState`: first in wins) and the last one sets the signature
    /// (`LLMotion::addJointState` overwrites it), as in the viewer.
    static std::shared_ptr<const MotionClip> build(const Motion& motion, const Skeleton& skeleton,
                                                   std::string name = {});

    [[nodiscard]] const std::string& name() const { return name_; }
    [[nodiscard]] float duration() const { return duration_; }
    [[nodiscard]] bool loop() const { return loop_; }
    [[nodiscard]] float loop_in() const { return loop_in_; }
    [[nodiscard]] float loop_out() const { return loop_out_; }
    [[nodiscard]] float ease_in() const { return ease_in_; }
    [[nodiscard]] float ease_out() const { return ease_out_; }
    /// `getPriority()`: the base priority (≤ 6).
    [[nodiscard]] int base_priority() const { return base_priority_; }
    [[nodiscard]] int max_priority() const { return max_priority_; }
    [[nodiscard]] std::uint32_t hand_pose() const { return hand_pose_; }
    [[nodiscard]] const std::string& emote_name() const { return emote_; }
    [[nodiscard]] const Motion& motion() const { return motion_; }
    [[nodiscard]] int num_skeleton_joints() const { return num_skeleton_joints_; }

    /// The tracks, in ascending joint order (one per joint).
    [[nodiscard]] std::span<const ClipTrack> tracks() const { return tracks_; }
    /// The tracks as a blend layer shape (joints, priorities, usages; PoseBlender::add_layer).
    [[nodiscard]] const LayerShape& layer_shape() const { return layer_shape_; }
    [[nodiscard]] std::span<const float> rot_times() const { return rot_times_; }
    [[nodiscard]] std::span<const Quat> rot_values() const { return rot_values_; }
    [[nodiscard]] std::span<const float> pos_times() const { return pos_times_; }
    [[nodiscard]] std::span<const Vec3> pos_values() const { return pos_values_; }
    /// The sampling plan (an implementation detail of SamplingJob, complete only inside
    /// slanim::core).
    [[nodiscard]] const detail::SamplingPlan& sampling_plan() const { return *plan_; }

    /// Joint signature rows (`LLMotion::mJointSignature`, spec §3.3): per viewer joint number,
    /// 0xFF >> (7 − priority) where the motion has that component, else 0. Row 0 = position,
    /// row 1 = rotation.
    [[nodiscard]] const std::array<std::uint8_t, 216>& signature(int row) const {
        return signature_[row];
    }

    ~MotionClip();
    MotionClip(const MotionClip&) = delete;
    MotionClip& operator=(const MotionClip&) = delete;

private:
    MotionClip();
    std::string name_;
    Motion motion_;
    float duration_ = 0.f, loop_in_ = 0.f, loop_out_ = 0.f, ease_in_ = 0.f, ease_out_ = 0.f;
    bool loop_ = false;
    int base_priority_ = 0, max_priority_ = 0;
    std::uint32_t hand_pose_ = 0;
    std::string emote_;
    int num_skeleton_joints_ = 0;
    std::vector<ClipTrack> tracks_;
    std::vector<float> rot_times_, pos_times_;
    std::vector<Quat> rot_values_;
    std::vector<Vec3> pos_values_;
    std::unique_ptr<detail::SamplingPlan> plan_;  // never null
    LayerShape layer_shape_;
    std::array<std::array<std::uint8_t, 216>, 2> signature_{};
};

/// The viewer's mLastLoopedTime / mLastUpdateTime, carried between frames (seconds).
struct LoopState {
    float last_looped = 0.f;
    float last_update = 0.f;
};
/// Motion time → curve time, `LLKeyframeMotion::onUpdate` (spec §2.2). `t` is seconds since
/// activation (negative values count as 0); `stopped` selects the run-on-to-the-end rule of a
/// stopped looping motion. Returns the curve time in seconds; `alive` is onUpdate's return value
/// (looped ≤ duration), false meaning the controller should stop the motion.
float motion_time_to_curve_time(const MotionClip& clip, float t, bool stopped, LoopState& state,
                                bool& alive);

}  // namespace slanim
