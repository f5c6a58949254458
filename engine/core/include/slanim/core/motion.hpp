// SPDX-License-Identifier: MIT
// The decoded motion in SI units (seconds, metres, unit quaternions): the editable model of one
// LLKeyframeMotion that clips are built from. Reading and writing it as an `.anim` file (the
// viewer's decode and quantization rules, LLKeyframeMotion::deserialize / serialize, spec §1)
// is slanim::formats' job: see slanim/formats/anim_codec.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "slanim/core/math.hpp"
#include "slanim/core/result.hpp"

namespace slanim {

/// `LLHandMotion::NUM_HAND_POSES` (spec §5.1): valid hand poses are 0..13; the `.anim` reader
/// also accepts 14, which the hand motion ignores with a warning.
inline constexpr std::uint32_t kNumHandPoses = 14;

class Skeleton;

struct RotKey {
    float time = 0.f;  ///< seconds
    Quat value;        ///< as decoded by the viewer (w ≥ 0, possibly not unit if |xyz| > 1)
    friend bool operator==(const RotKey&, const RotKey&) = default;
};
struct PosKey {
    float time = 0.f;  ///< seconds
    Vec3 value;        ///< metres, parent frame (mPelvis: offset from the avatar root)
    friend bool operator==(const PosKey&, const PosKey&) = default;
};

/// One animated joint.
struct MotionJoint {
    /// Canonical skeleton name when the name (or alias) is known; otherwise the file's name.
    std::string name;
    /// Skeleton joint index, or −1 when unknown or outside the animatable range (the viewer
    /// keeps such an entry as a dummy that animates nothing).
    int joint = -1;
    int priority = -1;  ///< −1 = the motion's base priority
    /// Keys sorted by time with unique times: like the viewer's std::map, the last key the file
    /// gives for a time wins.
    std::vector<RotKey> rot_keys;
    std::vector<PosKey> pos_keys;
    friend bool operator==(const MotionJoint&, const MotionJoint&) = default;
};

/// `LLKeyframeMotion::EConstraintType`: the target is a point or a plane through it.
enum class ConstraintType : std::uint8_t { Point = 0, Plane = 1 };

struct MotionConstraint {
    int chain_length = 0;
    ConstraintType type = ConstraintType::Point;
    std::string source_volume;  ///< collision volume name
    Vec3 source_offset;         ///< unit-sphere space of the source volume
    bool target_ground = false; ///< target is "GROUND"
    std::string target_volume;  ///< collision volume name (empty for GROUND)
    Vec3 target_offset;
    Vec3 target_dir;            ///< unused by the viewer; kept for round trips
    float ease_in_start = 0.f, ease_in_stop = 0.f, ease_out_start = 0.f, ease_out_stop = 0.f;
    friend bool operator==(const MotionConstraint&, const MotionConstraint&) = default;
};

/// A decoded `.anim`. Header values are what the viewer holds after deserialize.
struct Motion {
    int base_priority = 0;  ///< clamped to ≤ 6 like the viewer
    /// `mMaxPriority`: 6 when the base was clamped, else max(LOW, joint priorities ≠ −1).
    /// Decides hand-pose arbitration.
    int max_priority = 0;
    float duration = 0.f;   ///< seconds
    /// Emote animation name, or empty. The viewer clears "Closed_Mouth" and unknown names.
    std::string emote_name;
    float loop_in = 0.f, loop_out = 0.f;  ///< seconds
    bool loop = false;
    float ease_in = 0.f, ease_out = 0.f;  ///< seconds
    std::uint32_t hand_pose = 0;          ///< 0..14 (see kNumHandPoses)
    std::vector<MotionJoint> joints;
    /// Constraints in file order (the viewer's runtime order; its serialize reverses them).
    std::vector<MotionConstraint> constraints;
    friend bool operator==(const Motion&, const Motion&) = default;
};

}  // namespace slanim
