// SPDX-License-Identifier: MIT
// Joint attachment overrides: the joint positions (and locked scales) a rigged mesh attachment
// imposes on the skeleton it is worn on, with the viewer's rules (`LLJoint::
// addAttachmentPosOverride` and friends in lljoint.cpp, `LLVOAvatar::
// addAttachmentOverridesForObject` / `removeAttachmentOverridesForObject` /
// `clearAttachmentOverrides` / `resetSkeleton` in llvoavatar.cpp). A feature of every World
// (AttachmentOverrideFeature::of(world)) keeps them per avatar; this header also holds the plain
// types of that API and the conversion from a mesh's skin info. docs/attachment-overrides.md
// explains the rules with hand-computed examples.
//
// Frames and units: local joint frames of the SL skeleton (X forward, Y left, Z up), metres;
// scales are unitless factors.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "slanim/core/math.hpp"
#include "slanim/core/result.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/llsd.hpp"
#include "slanim/runtime/world.hpp"

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
    /// AttachmentOverrideFeature::pelvis_fixup.
    float pelvis_offset = 0.f;
};

/// Why an override call failed: the Error::code of the Status it returns (override_error reads
/// it back). Whatever the error, nothing changed.
enum class OverrideError : std::uint8_t {
    None = 0,       ///< no error (the call succeeded)
    InvalidEntity,  ///< stale or null avatar handle
    NullMesh,       ///< the null UUID is not a mesh id (the viewer ignores it)
    InvalidJoint,   ///< a joint index outside [0, joint count)
    NonFinite,      ///< a position, scale or pelvis offset is NaN or infinite
    AlreadyActive,  ///< this mesh's overrides are already applied (the viewer skips such a mesh:
                    ///< remove it first to change them)
    NotFound,       ///< no overrides of this mesh are applied
    TooManyMeshes,  ///< the avatar already has 65535 meshes applied
};
/// "ok", "invalid entity", … (static strings; also the Error::message of that error).
const char* override_error_name(OverrideError e);
/// The OverrideError of a Status an override call returned (None when it is ok).
OverrideError override_error(const Status& s);

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

class LodFeature;
namespace detail {
struct AttachmentState;
}

namespace component {
inline constexpr const char* kAttachmentOverrides = "attachment_overrides";
}  // namespace component

/// The joint attachment overrides of a World's avatars: per avatar, per joint, position and
/// scale overrides keyed by the rigged mesh's UUID, the active one being the largest UUID.
/// Written into the local pose when they change (as `LLJoint::updatePos`/`updateScale` do);
/// animation positions are blended without them, so a playing motion that positions a joint
/// wins, and the joint keeps the animated value after the motion stops, as in the viewer, until
/// the override changes or reset_skeleton(). Call between steps, not during step() (they
/// allocate; the avatar's model pose is recomputed before they return). An avatar with no
/// overrides holds one null pointer for them. A feature of every World.
class AttachmentOverrideFeature final : public ComponentStore {
public:
    explicit AttachmentOverrideFeature(World& world);
    /// The world's attachment overrides.
    static AttachmentOverrideFeature& of(World& world);
    static const AttachmentOverrideFeature& of(const World& world);

    /// `LLVOAvatar::addAttachmentOverridesForObject` for one mesh: for each entry in order, a
    /// position above the threshold from Skeleton::default_position becomes the joint's
    /// position override of `mesh` (`LLJoint::addAttachmentPosOverride`: the first override of
    /// a joint saves its current local position; the local pose gets the active value when the
    /// active value changed), then, with lock_scale_if_joint_position, a scale override of the
    /// joint's rest scale; an explicit scale becomes a scale override (`addAttachmentScaleOverride`:
    /// the local scale gets the active value); a non-zero pelvis_offset a pelvis fix-up. The mesh
    /// then counts as applied even when no entry passed the threshold. Errors (OverrideError):
    /// InvalidEntity, NullMesh, InvalidJoint, NonFinite, AlreadyActive, TooManyMeshes.
    Status add(Entity e, const Uuid& mesh, const AttachmentOverrides& overrides);
    /// `LLVOAvatar::removeAttachmentOverridesForObject(mesh_id)`: drops the mesh's position and
    /// scale overrides of every joint (a joint whose active value changed gets the new active
    /// value, or when none is left the value saved before its first override) and its pelvis
    /// fix-up, then sets the pelvis's local position to (0, 0, 0) (the viewer's SL-315 step, done
    /// for every removal). Errors: NotFound when the mesh's overrides are not applied (the
    /// viewer would still zero the pelvis), InvalidEntity, NullMesh.
    Status remove(Entity e, const Uuid& mesh);
    /// `LLVOAvatar::clearAttachmentOverrides`: every joint with overrides gets its value from
    /// before them (`clearAttachmentPosOverrides`/`ScaleOverrides`); when pelvis fix-ups
    /// existed they are dropped and the pelvis's local position is set to 0. Ok also when there
    /// was nothing to clear; error InvalidEntity.
    Status clear(Entity e);
    /// `LLVOAvatar::resetSkeleton(false)` for the joints: every joint's local position,
    /// rotation and scale back to the rest pose (plus the applied skeletal visual params of the
    /// avatar's Appearance), then every override applied again on top (the values "before
    /// overrides" become the reset values). This is how the viewer undoes positions an animation
    /// left behind. Motions keep playing. Error InvalidEntity.
    Status reset_skeleton(Entity e);
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
    [[nodiscard]] std::size_t mesh_count(Entity e) const;
    [[nodiscard]] Uuid mesh(Entity e, std::size_t k) const;
    /// `computeBodySize` on the avatar's current local pose (see compute_body_size); zeros for
    /// a bad handle.
    [[nodiscard]] BodySize body_size(Entity e) const;
    /// For the morph phase (per-avatar, no allocation): writes the active override of every
    /// joint flagged in `touched` (bit 1: position, bit 2: scale, indexed by joint) into avatar
    /// i's local pose — skeletal visual params write joints with `setPosition(…, true)` /
    /// `setScale(…, true)`, so an active override replaces the param's result
    /// (`LLPolySkeletalDistortion::apply`).
    void apply_at(std::size_t i, std::span<const std::uint8_t> touched);

    // ComponentStore
    [[nodiscard]] const char* name() const override { return component::kAttachmentOverrides; }
    void push(World& world, std::size_t i) override;
    void erase(World& world, std::size_t i, std::size_t last) override;
    [[nodiscard]] std::size_t bytes() const override;

    ~AttachmentOverrideFeature() override;

private:
    void set_joint_position_at(std::size_t i, int joint, Vec3 v);
    void set_joint_scale_at(std::size_t i, int joint, Vec3 v);
    std::vector<std::unique_ptr<detail::AttachmentState>> overrides_;  // null: no overrides
    World& world_;
    LodFeature* lod_;  // the world's, for the pose a reduced-rate avatar moves toward
};

}  // namespace slanim
