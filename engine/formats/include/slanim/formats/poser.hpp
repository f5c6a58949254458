// SPDX-License-Identifier: MIT
// Firestorm poser poses (LLSD XML, `app_settings/poses/*.xml` and the poses a user saves from
// Firestorm's poser) → a one-key looped motion.
//
// A pose file is an LLSD map: joint name → { enabled, jointBaseRotationIsZero, rotation,
// position, scale }, plus `version` and `startFromTeePose` ({ value: … }). The conventions below
// are Firestorm's (FSPoserAnimator::loadJointRotation / tryGetJointSaveVectors, FSJointPose):
// `rotation` is (roll, pitch, yaw) in radians as LLQuaternion::getEulerAngles writes them and
// LLQuaternion(LLMatrix3(roll, pitch, yaw)) reads them — rotate about X, then about the original
// Y, then about the original Z (Hamilton q = q_x ⊗ q_y ⊗ q_z); the joint's target rotation is
// rotation * base (LL order), the base being the rest rotation when `jointBaseRotationIsZero`;
// `position` and `scale` are deltas added to the joint's base position (metres, parent frame)
// and scale. See docs/creator-formats.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slanim/core/math.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/result.hpp"

namespace slanim {

class Skeleton;

/// One joint entry of a pose file.
struct PoserJoint {
    std::string name;  ///< the map key (a skeleton joint or collision volume name)
    /// `enabled`; a missing key counts as enabled when the entry gives a rotation or position.
    bool enabled = true;
    bool base_rotation_is_zero = true;  ///< `jointBaseRotationIsZero` (missing: true)
    Vec3 rotation;  ///< `rotation`: roll, pitch, yaw, radians
    Vec3 position;  ///< `position`: metres, delta on the base position
    Vec3 scale;     ///< `scale`: delta on the base scale (a .anim cannot carry it)
    friend bool operator==(const PoserJoint&, const PoserJoint&) = default;
};

struct PoserPose {
    std::vector<PoserJoint> joints;  ///< in the file's (sorted) key order
    std::optional<int> version;      ///< `version.value`
    std::optional<bool> start_from_tee_pose;  ///< `startFromTeePose.value`
};

/// Parses a pose file. Errors name the entry and field ("mHandIndex1Left.rotation: expected an
/// array of 3 reals"); an entry that has none of enabled / rotation / position / scale is not a
/// joint and is an error (Firestorm's `posestand.xml`, a list of stand animations, is not a pose).
/// Keys Firestorm may add later inside a joint entry are ignored.
Result<PoserPose> parse_poser_xml(std::string_view xml);
/// Reads a file; errors start with the path.
Result<PoserPose> load_poser_xml(const std::string& path);

/// Firestorm's reading of a `rotation` triple: LLQuaternion(LLMatrix3(roll, pitch, yaw)) then
/// normalize, with the same float operations (m3math.cpp setRot / quaternion).
Quat poser_rotation(Vec3 roll_pitch_yaw);

/// Conversion settings; the defaults are documented in docs/creator-formats.md.
struct PoserConvertOptions {
    int priority = 4;            ///< 0..6: above the default animations (priority ≤ 3)
    float duration = 1.f;        ///< seconds, > 0; the pose loops over all of it
    float ease_in = 0.5f;        ///< seconds
    float ease_out = 0.5f;       ///< seconds
    std::uint32_t hand_pose = 1; ///< 0..14; 1 = relaxed, the viewer's default
    /// Entries that are not joints of the skeleton: false (default) is an error naming it,
    /// true drops them with a warning.
    bool skip_unknown_joints = false;
};

struct PoserConvertResult {
    Motion motion;  ///< quantized like the viewer holds it after loading the written file
    std::vector<std::string> warnings;
};

/// A pose → a looped motion with one key per changed joint at t = 0: every enabled joint whose
/// rotation is not the identity (any Euler component ≠ 0) gets that rotation, every enabled
/// joint with a non-zero position delta gets a position key (rest local position + delta; for
/// mPelvis the delta itself, an offset from the rest). Disabled joints and unchanged joints are
/// not written. Warnings: a scale delta (dropped: .anim has no scale), a rotation with
/// jointBaseRotationIsZero false (Firestorm applies it on top of the pose the avatar had; here on
/// the rest pose). Errors: no joint to write, an unknown joint (see skip_unknown_joints), options
/// out of range.
Result<PoserConvertResult> poser_to_motion(const PoserPose& pose, const Skeleton& skeleton,
                                           const PoserConvertOptions& options = {});

}  // namespace slanim
