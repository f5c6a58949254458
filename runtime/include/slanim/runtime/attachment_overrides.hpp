// SPDX-License-Identifier: MIT
// Joint attachment overrides: the joint positions (and locked scales) a rigged mesh attachment
// imposes on the skeleton it is worn on, with the viewer's rules (`LLJoint::
// addAttachmentPosOverride` and friends in lljoint.cpp, `LLVOAvatar::
// addAttachmentOverridesForObject` / `removeAttachmentOverridesForObject` /
// `clearAttachmentOverrides` / `resetSkeleton` in llvoavatar.cpp). The World keeps them per
// avatar (World::add_attachment_overrides …, slanim/runtime/world.hpp); this header holds the
// plain types of that API and the conversion from a mesh's skin info. docs/attachment-overrides.md
// explains the rules with hand-computed examples.
//
// Frames and units: local joint frames of the SL skeleton (X forward, Y left, Z up), metres;
// scales are unitless factors.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "slanim/core/math.hpp"
#include "slanim/core/result.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/llsd.hpp"

namespace slanim {

/// `LL_JOINT_TRESHOLD_POS_OFFSET` (lljoint.h): 0.1 mm. A mesh's joint position is applied only
/// when its squared distance from the joint's default position is strictly greater than the
/// square of this (`LLJoint::aboveJointPosThreshold`, float arithmetic).
inline constexpr float kJointPositionThreshold = 0.0001f;

/// True when `position` (metres, the joint's parent frame) differs from `default_position`
/// by more than kJointPositionThreshold: |p − d|² > 0.0001², evaluated in float as the viewer
/// does (`LLJoint::aboveJointPosThreshold`).
[[nodiscard]] inline bool above_joint_position_threshold(Vec3 position, Vec3 default_position) {
    const Vec3 d = position - default_position;
    return dot(d, d) > kJointPositionThreshold * kJointPositionThreshold;
}

/// One joint's override from one mesh. `joint` is a skeleton joint index (bones, collision
/// volumes and attachment points: the viewer looks mesh joint names up with `getJoint`, which
/// finds all three). Give a position, a scale, or both.
struct JointOverride {
    std::int32_t joint = -1;
    bool has_position = false;
    /// Local position in the parent's frame, metres (the translation of the mesh's
    /// `alt_inverse_bind_matrix` for this joint). Applied only above the threshold (see
    /// above_joint_position_threshold, against Skeleton::default_position).
    Vec3 position;
    bool has_scale = false;
    /// Local scale. Applied as given, with no threshold (`LLJoint::addAttachmentScaleOverride`;
    /// the viewer's own meshes only ever lock the default scale, see
    /// AttachmentOverrides::lock_scale_if_joint_position). Must be finite.
    Vec3 scale{1.f, 1.f, 1.f};
};

/// Everything one rigged mesh (one `LLMeshSkinInfo`) overrides.
struct AttachmentOverrides {
    std::span<const JointOverride> joints;
    /// `mLockScaleIfJointPosition` (skin LLSD `lock_scale_if_joint_position`): every joint
    /// whose position override is applied (above the threshold) also gets a scale override of
    /// its default scale (Skeleton::rest_scales), so scaling visual params cannot stretch it.
    /// An explicit scale of the same joint in `joints` is added after the lock and wins.
    bool lock_scale_if_joint_position = false;
    /// `mPelvisOffset` (skin LLSD `pelvis_offset`), metres along Z: non-zero adds a pelvis
    /// fix-up keyed by the mesh (`LLAvatarAppearance::addPelvisFixup`); the active one is
    /// World::pelvis_fixup.
    float pelvis_offset = 0.f;
};

/// What an override call did.
enum class OverrideStatus : std::uint8_t {
    Ok = 0,
    InvalidEntity,  ///< stale or null avatar handle; nothing changed
    NullMesh,       ///< the null UUID is not a mesh id (the viewer ignores it); nothing changed
    InvalidJoint,   ///< a joint index outside [0, joint count); nothing changed
    NonFinite,      ///< a position, scale or pelvis offset is NaN or infinite; nothing changed
    AlreadyActive,  ///< this mesh's overrides are already applied (the viewer skips such a mesh:
                    ///< remove it first to change them); nothing changed
    NotFound,       ///< no overrides of this mesh are applied; nothing changed
    TooManyMeshes,  ///< the avatar already has 65535 meshes applied; nothing changed
};
/// "ok", "invalid entity", … (static strings).
const char* override_status_name(OverrideStatus s);

/// The active override of one joint (or the active pelvis fix-up), as
/// `LLVector3OverrideMap::findActiveOverride` picks it: among the meshes that override it, the
/// one with the largest UUID (bytes compared in order as unsigned values, `LLUUID::operator<`).
struct ActiveOverride {
    bool found = false;
    Uuid mesh;    ///< null when !found
    Vec3 value;   ///< position (metres), scale, or (0, 0, fix-up) for the pelvis fix-up
    std::uint32_t count = 0;  ///< how many meshes override it
};

/// The joint overrides of a mesh from its skin info (`LLMeshSkinInfo::fromLLSD`, then the loop
/// of `LLVOAvatar::addAttachmentOverridesForObject`): joint i is `joint_names[i]` resolved with
/// Skeleton::find (names the skeleton does not know are skipped, as `getJoint` returning null
/// is, and listed in `unknown_joints`), and its position is the translation of
/// `alt_bind_matrices[i]` — 16 numbers in the LLSD's order, row-major with the translation in
/// elements 12, 13, 14 (`LLMatrix4::getTranslation`). No alternate matrices (a mesh uploaded
/// without joint positions) gives no overrides. Error when both are given and their counts
/// differ (the viewer then ignores the mesh's overrides: "invalid mesh").
struct SkinJointOverrides {
    std::vector<JointOverride> joints;
    std::vector<std::string> unknown_joints;
};
Result<SkinJointOverrides> joint_overrides_from_skin(const Skeleton& skeleton,
                                                     std::span<const std::string> joint_names,
                                                     std::span<const std::array<float, 16>> alt_bind_matrices);

/// The same from a mesh asset's skin block as LLSD (a map with `joint_names` (array of
/// strings) and optionally `alt_inverse_bind_matrix` (array of 16-number arrays),
/// `pelvis_offset` (real) and `lock_scale_if_joint_position` (boolean)); `lock_scale` and
/// `pelvis_offset` receive those two fields (false / 0 when absent). Errors name the LLSD path
/// and what was expected.
Result<SkinJointOverrides> joint_overrides_from_skin_llsd(const Skeleton& skeleton, const Llsd& skin,
                                                          bool& lock_scale, float& pelvis_offset);

/// `LLAvatarAppearance::computeBodySize` from a local pose: pelvis-to-foot height
/// (`mPelvisToFoot`) and body height (`mBodySize.mV[VZ]`), metres, from the local positions and
/// scales of mPelvis, mTorso, mChest, mNeck, mHead, mSkull, mHipLeft, mKneeLeft, mAnkleLeft and
/// mFootLeft. The viewer recomputes it after overrides change (`postPelvisSetRecalc`) and
/// places the avatar root at render position + hover − (0.5·height − pelvis_to_foot)
/// (`updateRootPositionAndRotation`, spec §2.4). Zero for skeletons missing one of those bones.
struct BodySize {
    float pelvis_to_foot = 0.f;
    float height = 0.f;
};
BodySize compute_body_size(const Skeleton& skeleton, std::span<const Vec3> local_positions,
                           std::span<const Vec3> local_scales);

}  // namespace slanim
