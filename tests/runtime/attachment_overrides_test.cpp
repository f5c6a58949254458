// SPDX-License-Identifier: MIT
// Joint attachment overrides in the World, one rule per test, against hand-computed values
// (LLJoint::addAttachmentPosOverride & co., LLVOAvatar::addAttachmentOverridesForObject &
// co.; docs/attachment-overrides.md).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "slanim/appearance/visual_params.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/formats/skeleton_xml.hpp"
#include "slanim/runtime/appearance.hpp"
#include "slanim/runtime/appearance_feature.hpp"
#include "slanim/runtime/attachment_overrides.hpp"
#include "slanim/runtime/lod_feature.hpp"
#include "slanim/runtime/world.hpp"
#include "test_util.hpp"

using namespace slanim;

namespace {

Uuid uuid(const char* text) {
    const auto u = Uuid::parse(text);
    EXPECT_TRUE(u.has_value()) << text;
    return u.value_or(Uuid{});
}

// Ordered as LLUUID::operator< orders them (bytes as unsigned, first byte first):
// kLow < kMid < kHigh, and kHigh's first byte 0x80 would sort first if compared as signed.
const char* const kLowText = "0fffffff-ffff-ffff-ffff-ffffffffffff";
const char* const kMidText = "10000000-0000-0000-0000-000000000000";
const char* const kHighText = "80000000-0000-0000-0000-000000000001";

JointOverride pos(int joint, Vec3 p) {
    JointOverride o;
    o.joint = joint;
    o.has_position = true;
    o.position = p;
    return o;
}

JointOverride scl(int joint, Vec3 s) {
    JointOverride o;
    o.joint = joint;
    o.has_scale = true;
    o.scale = s;
    return o;
}

OverrideError add(World& w, Entity e, const Uuid& mesh, std::initializer_list<JointOverride> joints,
                  bool lock_scale = false, float pelvis_offset = 0.f) {
    const std::vector<JointOverride> v(joints);
    AttachmentOverrides o;
    o.joints = v;
    o.lock_scale_if_joint_position = lock_scale;
    o.pelvis_offset = pelvis_offset;
    return override_error(AttachmentOverrideFeature::of(w).add(e, mesh, o));
}

}  // namespace

// One mesh moves mHead; the local pose, the model pose and the query follow; removing the mesh
// gives back the value from before the override (the rest position here).
TEST(AttachmentOverrides, PositionOverrideIsAppliedAndRemovalRestoresTheValueBefore) {
    World w;
    const auto skel = Skeleton::default_skeleton();
    const Entity e = w.create_avatar(skel);
    const int head = skel->find("mHead"), neck = skel->find("mNeck");
    const Vec3 rest = skel->rest_positions()[head];
    const Uuid a = uuid(kMidText);

    ASSERT_EQ(add(w, e, a, {pos(head, {0.01f, 0.f, 0.1f})}), OverrideError::None);
    EXPECT_EQ(w.local_pose(e).positions[head], (Vec3{0.01f, 0.f, 0.1f}));
    // Rest rotations are identity and scales 1: the head sits 0.1 m above the neck, 1 cm ahead,
    // at once (no step needed: postPelvisSetRecalc updates the joint matrices).
    const ModelPose& mp = w.model_pose(e);
    EXPECT_NEAR(mp.positions[head].x - mp.positions[neck].x, 0.01f, 1e-6f);
    EXPECT_NEAR(mp.positions[head].z - mp.positions[neck].z, 0.1f, 1e-6f);
    const ActiveOverride q = AttachmentOverrideFeature::of(w).active_position_override(e, head);
    EXPECT_TRUE(q.found);
    EXPECT_EQ(q.mesh, a);
    EXPECT_EQ(q.count, 1u);
    EXPECT_EQ(q.value, (Vec3{0.01f, 0.f, 0.1f}));
    EXPECT_FALSE(AttachmentOverrideFeature::of(w).active_position_override(e, neck).found);
    EXPECT_EQ(AttachmentOverrideFeature::of(w).mesh_count(e), 1u);
    EXPECT_EQ(AttachmentOverrideFeature::of(w).mesh(e, 0), a);
    w.step(1.f / 30.f);  // nothing animates the head: it stays overridden
    EXPECT_EQ(w.local_pose(e).positions[head], (Vec3{0.01f, 0.f, 0.1f}));

    ASSERT_EQ(override_error(AttachmentOverrideFeature::of(w).remove(e, a)), OverrideError::None);
    EXPECT_EQ(w.local_pose(e).positions[head], rest);
    EXPECT_FALSE(AttachmentOverrideFeature::of(w).active_position_override(e, head).found);
    EXPECT_EQ(AttachmentOverrideFeature::of(w).mesh_count(e), 0u);
    EXPECT_NEAR(w.model_pose(e).positions[head].z - w.model_pose(e).positions[neck].z, rest.z, 1e-6f);
    EXPECT_EQ(override_error(AttachmentOverrideFeature::of(w).remove(e, a)), OverrideError::NotFound);
}

// The value restored is the one the joint had when its first override came, not the rest value.
TEST(AttachmentOverrides, RemovalRestoresTheValueFromBeforeTheFirstOverride) {
    World w;
    const auto skel = Skeleton::default_skeleton();
    const Entity e = w.create_avatar(skel);
    const int head = skel->find("mHead");
    w.local_pose(e).positions[head] = {0.f, 0.f, 0.2f};
    ASSERT_EQ(add(w, e, uuid(kLowText), {pos(head, {0.f, 0.f, 0.3f})}), OverrideError::None);
    w.local_pose(e).positions[head] = {0.f, 0.f, 0.5f};  // someone moves it meanwhile
    ASSERT_EQ(add(w, e, uuid(kMidText), {pos(head, {0.f, 0.f, 0.4f})}), OverrideError::None);
    EXPECT_EQ(w.local_pose(e).positions[head].z, 0.4f);
    // An animation moves it again; a mesh with a smaller UUID comes and goes: the active value
    // (0.4, mesh kMid) does not change, so the joint is not rewritten either time.
    w.local_pose(e).positions[head] = {0.f, 0.f, 0.6f};
    const Uuid lowest = uuid("00000000-0000-0000-0000-000000000001");
    ASSERT_EQ(add(w, e, lowest, {pos(head, {0.f, 0.f, 0.35f})}), OverrideError::None);
    EXPECT_EQ(w.local_pose(e).positions[head].z, 0.6f);
    ASSERT_EQ(override_error(AttachmentOverrideFeature::of(w).remove(e, lowest)), OverrideError::None);
    EXPECT_EQ(w.local_pose(e).positions[head].z, 0.6f);
    ASSERT_EQ(override_error(AttachmentOverrideFeature::of(w).remove(e, uuid(kLowText))), OverrideError::None);
    EXPECT_EQ(w.local_pose(e).positions[head].z, 0.6f);
    ASSERT_EQ(override_error(AttachmentOverrideFeature::of(w).remove(e, uuid(kMidText))), OverrideError::None);
    EXPECT_EQ(w.local_pose(e).positions[head].z, 0.2f);  // saved when kLow's override came
}

// findActiveOverride: the largest mesh UUID wins, whatever the order the meshes came in;
// UUID bytes compare as unsigned values.
TEST(AttachmentOverrides, TheLargestMeshUuidIsTheActiveOverride) {
    World w;
    const auto skel = Skeleton::default_skeleton();
    const Entity e = w.create_avatar(skel);
    const int j = skel->find("mChest");
    const Vec3 rest = skel->rest_positions()[j];
    const Uuid lo = uuid(kLowText), mid = uuid(kMidText), hi = uuid(kHighText);
    const Vec3 plo{0.f, 0.f, 0.21f}, pmid{0.f, 0.f, 0.22f}, phi{0.f, 0.f, 0.23f};

    ASSERT_EQ(add(w, e, mid, {pos(j, pmid)}), OverrideError::None);
    ASSERT_EQ(add(w, e, lo, {pos(j, plo)}), OverrideError::None);  // smaller: mid stays active
    EXPECT_EQ(w.local_pose(e).positions[j], pmid);
    EXPECT_EQ(AttachmentOverrideFeature::of(w).active_position_override(e, j).mesh, mid);
    EXPECT_EQ(AttachmentOverrideFeature::of(w).active_position_override(e, j).count, 2u);
    ASSERT_EQ(add(w, e, hi, {pos(j, phi)}), OverrideError::None);  // 0x80… > 0x10…
    EXPECT_EQ(w.local_pose(e).positions[j], phi);
    EXPECT_EQ(AttachmentOverrideFeature::of(w).active_position_override(e, j).mesh, hi);

    ASSERT_EQ(override_error(AttachmentOverrideFeature::of(w).remove(e, hi)), OverrideError::None);
    EXPECT_EQ(w.local_pose(e).positions[j], pmid);
    ASSERT_EQ(override_error(AttachmentOverrideFeature::of(w).remove(e, mid)), OverrideError::None);
    EXPECT_EQ(w.local_pose(e).positions[j], plo);
    ASSERT_EQ(override_error(AttachmentOverrideFeature::of(w).remove(e, lo)), OverrideError::None);
    EXPECT_EQ(w.local_pose(e).positions[j], rest);
}

// aboveJointPosThreshold: |p − default|² > 0.0001² in float. mHead's default x is 0, so an
// offset of exactly 0.0001 along x is not above it; 0.00011 is. A diagonal offset counts by
// its length: (6e-5, 6e-5, 0) is 8.5e-5 m (not applied), (8e-5, 8e-5, 0) 1.13e-4 m (applied).
// A mesh with nothing above the threshold still counts as applied.
TEST(AttachmentOverrides, OffsetsWithinATenthOfAMillimetreAreNotApplied) {
    const auto skel = Skeleton::default_skeleton();
    const int head = skel->find("mHead");
    const Vec3 d = skel->default_position(head);
    ASSERT_EQ(d.x, 0.f);
    EXPECT_FALSE(above_joint_position_threshold({d.x + 0.0001f, d.y, d.z}, d));
    EXPECT_TRUE(above_joint_position_threshold({d.x + 0.00011f, d.y, d.z}, d));
    EXPECT_FALSE(above_joint_position_threshold({d.x + 6e-5f, d.y + 6e-5f, d.z}, d));
    EXPECT_TRUE(above_joint_position_threshold({d.x + 8e-5f, d.y + 8e-5f, d.z}, d));

    World w;
    const Entity e = w.create_avatar(skel);
    const Vec3 rest = skel->rest_positions()[head];
    ASSERT_EQ(add(w, e, uuid(kMidText), {pos(head, {d.x + 0.0001f, d.y, d.z})}), OverrideError::None);
    EXPECT_FALSE(AttachmentOverrideFeature::of(w).active_position_override(e, head).found);
    EXPECT_EQ(w.local_pose(e).positions[head], rest);
    EXPECT_EQ(AttachmentOverrideFeature::of(w).mesh_count(e), 1u);
    EXPECT_EQ(add(w, e, uuid(kMidText), {pos(head, {1.f, 0.f, 0.f})}), OverrideError::AlreadyActive);
    ASSERT_EQ(add(w, e, uuid(kHighText), {pos(head, {d.x + 0.00011f, d.y, d.z})}), OverrideError::None);
    EXPECT_TRUE(AttachmentOverrideFeature::of(w).active_position_override(e, head).found);
    EXPECT_EQ(w.local_pose(e).positions[head].x, 0.00011f);

    // The pelvis is compared with its file position (0, 0, 1.067), not its local rest (0):
    // a mesh that puts it at 1.067 (the usual upload) overrides nothing, one at 0 does.
    const int pelvis = skel->pelvis();
    const Entity f = w.create_avatar(skel);
    ASSERT_EQ(add(w, f, uuid(kLowText), {pos(pelvis, skel->default_position(pelvis))}), OverrideError::None);
    EXPECT_FALSE(AttachmentOverrideFeature::of(w).active_position_override(f, pelvis).found);
    ASSERT_EQ(add(w, f, uuid(kMidText), {pos(pelvis, {0.f, 0.f, 0.f})}), OverrideError::None);
    EXPECT_TRUE(AttachmentOverrideFeature::of(w).active_position_override(f, pelvis).found);
}

// Animation positions are blended without overrides: a motion positioning the joint wins while
// it plays; when it stops the joint keeps the animated value (the viewer's blender leaves
// joints nobody drives as they are), until the skeleton is reset, which applies the override
// again. An override that changes during playback is written at once and lasts until the next
// blend.
TEST(AttachmentOverrides, AnimatedPositionsWinWhileTheyPlay) {
    World w;
    const auto skel = Skeleton::default_skeleton();
    const Entity e = w.create_avatar(skel);
    const int head = skel->find("mHead");
    const Vec3 over{0.f, 0.f, 0.1f}, anim{0.f, 0.02f, 0.09f};
    ASSERT_EQ(add(w, e, uuid(kMidText), {pos(head, over)}), OverrideError::None);

    MotionJoint j = test::rot_joint("mHead", {{0.f, 0.f}, {1.f, 0.f}});
    j.pos_keys = {{0.f, anim}, {1.f, anim}};
    const auto clip = test::clip(test::motion({j}, 1.f, 3));
    w.controller(e).start(clip);
    w.step(0.f);
    EXPECT_EQ(w.local_pose(e).positions[head], anim);
    w.step(0.25f);
    EXPECT_EQ(w.local_pose(e).positions[head], anim);
    // A new, larger override during playback: written now (updatePos), replaced by the next blend.
    const Vec3 over2{0.f, 0.f, 0.12f};
    ASSERT_EQ(add(w, e, uuid(kHighText), {pos(head, over2)}), OverrideError::None);
    EXPECT_EQ(w.local_pose(e).positions[head], over2);
    w.step(0.25f);
    EXPECT_EQ(w.local_pose(e).positions[head], anim);
    w.controller(e).stop(clip.get(), true);
    w.step(0.25f);
    w.step(0.25f);
    EXPECT_FALSE(w.controller(e).is_active(clip.get()));
    EXPECT_EQ(w.local_pose(e).positions[head], anim);  // left behind, as in the viewer
    ASSERT_EQ(override_error(AttachmentOverrideFeature::of(w).reset_skeleton(e)), OverrideError::None);
    EXPECT_EQ(w.local_pose(e).positions[head], over2);
    // The reset made the rest value the one restored when the overrides go.
    ASSERT_EQ(override_error(AttachmentOverrideFeature::of(w).clear(e)), OverrideError::None);
    EXPECT_EQ(w.local_pose(e).positions[head], skel->rest_positions()[head]);
}

// Scale overrides: explicit ones are applied as given (no threshold), the largest UUID wins,
// and removing the last one gives back the scale from before.
TEST(AttachmentOverrides, ScaleOverridesFollowTheSameBooks) {
    World w;
    const auto skel = Skeleton::default_skeleton();
    const Entity e = w.create_avatar(skel);
    const int chest = skel->find("mChest");
    w.local_pose(e).scales[chest] = {1.1f, 1.1f, 1.1f};
    ASSERT_EQ(add(w, e, uuid(kMidText), {scl(chest, {2.f, 2.f, 2.f})}), OverrideError::None);
    EXPECT_EQ(w.local_pose(e).scales[chest], (Vec3{2.f, 2.f, 2.f}));
    ASSERT_EQ(add(w, e, uuid(kLowText), {scl(chest, {3.f, 3.f, 3.f})}), OverrideError::None);
    EXPECT_EQ(w.local_pose(e).scales[chest], (Vec3{2.f, 2.f, 2.f}));
    EXPECT_EQ(AttachmentOverrideFeature::of(w).active_scale_override(e, chest).count, 2u);
    EXPECT_FALSE(AttachmentOverrideFeature::of(w).active_position_override(e, chest).found);
    ASSERT_EQ(override_error(AttachmentOverrideFeature::of(w).remove(e, uuid(kMidText))), OverrideError::None);
    EXPECT_EQ(w.local_pose(e).scales[chest], (Vec3{3.f, 3.f, 3.f}));
    ASSERT_EQ(override_error(AttachmentOverrideFeature::of(w).remove(e, uuid(kLowText))), OverrideError::None);
    EXPECT_EQ(w.local_pose(e).scales[chest], (Vec3{1.1f, 1.1f, 1.1f}));
    // A scale of 1.00001 is 1e-5 from the default: still applied (no threshold for scales).
    ASSERT_EQ(add(w, e, uuid(kHighText), {scl(chest, {1.00001f, 1.f, 1.f})}), OverrideError::None);
    EXPECT_EQ(w.local_pose(e).scales[chest].x, 1.00001f);
}

// mLockScaleIfJointPosition: each joint whose position override is applied also gets its
// default scale as a scale override; joints below the position threshold get no lock.
TEST(AttachmentOverrides, LockScaleIfJointPositionLocksTheDefaultScale) {
    World w;
    const auto skel = Skeleton::default_skeleton();
    const Entity e = w.create_avatar(skel);
    const int head = skel->find("mHead"), neck = skel->find("mNeck");
    w.local_pose(e).scales[head] = {1.2f, 1.2f, 1.2f};
    w.local_pose(e).scales[neck] = {1.3f, 1.3f, 1.3f};
    ASSERT_EQ(add(w, e, uuid(kMidText),
                  {pos(head, {0.f, 0.f, 0.1f}), pos(neck, skel->default_position(neck))}, /*lock_scale=*/true),
              OverrideError::None);
    EXPECT_EQ(w.local_pose(e).scales[head], skel->rest_scales()[head]);
    EXPECT_EQ(AttachmentOverrideFeature::of(w).active_scale_override(e, head).value, (Vec3{1.f, 1.f, 1.f}));
    EXPECT_EQ(w.local_pose(e).scales[neck], (Vec3{1.3f, 1.3f, 1.3f}));  // not above the threshold
    EXPECT_FALSE(AttachmentOverrideFeature::of(w).active_scale_override(e, neck).found);
    ASSERT_EQ(override_error(AttachmentOverrideFeature::of(w).remove(e, uuid(kMidText))), OverrideError::None);
    EXPECT_EQ(w.local_pose(e).scales[head], (Vec3{1.2f, 1.2f, 1.2f}));

    // Without the flag, positions only.
    ASSERT_EQ(add(w, e, uuid(kHighText), {pos(head, {0.f, 0.f, 0.1f})}), OverrideError::None);
    EXPECT_EQ(w.local_pose(e).scales[head], (Vec3{1.2f, 1.2f, 1.2f}));
    EXPECT_FALSE(AttachmentOverrideFeature::of(w).active_scale_override(e, head).found);
}

// The pelvis: fix-ups (mPelvisOffset) keyed by mesh, largest UUID active; every removal sets
// the pelvis's local position to 0 (SL-315); a pelvis position override is written like any
// other but the always-running pelvis fix motion writes 0 at the next blend, as in the viewer.
TEST(AttachmentOverrides, PelvisFixupsAndThePelvisPosition) {
    World w;
    const auto skel = Skeleton::default_skeleton();
    const Entity e = w.create_avatar(skel);
    const int pelvis = skel->pelvis();
    ASSERT_EQ(add(w, e, uuid(kMidText), {}, false, 0.05f), OverrideError::None);
    ActiveOverride f = AttachmentOverrideFeature::of(w).pelvis_fixup(e);
    EXPECT_TRUE(f.found);
    EXPECT_EQ(f.value, (Vec3{0.f, 0.f, 0.05f}));
    ASSERT_EQ(add(w, e, uuid(kLowText), {}, false, -0.02f), OverrideError::None);
    EXPECT_EQ(AttachmentOverrideFeature::of(w).pelvis_fixup(e).value.z, 0.05f);  // kMid > kLow
    ASSERT_EQ(add(w, e, uuid(kHighText), {}, false, -0.03f), OverrideError::None);
    EXPECT_EQ(AttachmentOverrideFeature::of(w).pelvis_fixup(e).value.z, -0.03f);
    EXPECT_EQ(AttachmentOverrideFeature::of(w).pelvis_fixup(e).count, 3u);

    w.local_pose(e).positions[pelvis] = {0.f, 0.f, 0.3f};  // e.g. a sit animation left it there
    ASSERT_EQ(override_error(AttachmentOverrideFeature::of(w).remove(e, uuid(kHighText))), OverrideError::None);
    EXPECT_EQ(AttachmentOverrideFeature::of(w).pelvis_fixup(e).value.z, 0.05f);
    EXPECT_EQ(w.local_pose(e).positions[pelvis], (Vec3{0.f, 0.f, 0.f}));
    w.local_pose(e).positions[pelvis] = {0.f, 0.f, 0.3f};
    ASSERT_EQ(override_error(AttachmentOverrideFeature::of(w).clear(e)), OverrideError::None);  // fix-ups existed: pelvis to 0
    EXPECT_FALSE(AttachmentOverrideFeature::of(w).pelvis_fixup(e).found);
    EXPECT_EQ(w.local_pose(e).positions[pelvis], (Vec3{0.f, 0.f, 0.f}));

    // A pelvis position override (1.2 is above the threshold from 1.067).
    ASSERT_EQ(add(w, e, uuid(kMidText), {pos(pelvis, {0.f, 0.f, 1.2f})}), OverrideError::None);
    EXPECT_EQ(w.local_pose(e).positions[pelvis], (Vec3{0.f, 0.f, 1.2f}));
    EXPECT_NEAR(w.model_pose(e).positions[skel->find("mTorso")].z, 1.2f + 0.084f, 1e-5f);
    w.controller(e).start_pelvis_fix();
    w.step(1.f / 30.f);
    EXPECT_EQ(w.local_pose(e).positions[pelvis], (Vec3{0.f, 0.f, 0.f}));
}

// computeBodySize on the default skeleton (spec §7.2 table A, scales 1):
//   pelvis_to_foot = hip.z − knee.z − ankle.z − foot.z = −0.041 + 0.491 + 0.468 + 0.061 = 0.979
//   height = 0.979 + √2·0.079 (skull) + 0.076 (head) + 0.251 (neck) + 0.205 (chest) + 0.084 (torso)
//          = 1.706723
// A knee override 5 cm higher (knee.z −0.441) shortens the leg: 0.929 and 1.656723.
TEST(AttachmentOverrides, BodySizeFollowsTheOverrides) {
    World w;
    const auto skel = Skeleton::default_skeleton();
    const Entity e = w.create_avatar(skel);
    BodySize b = AttachmentOverrideFeature::of(w).body_size(e);
    EXPECT_NEAR(b.pelvis_to_foot, 0.979f, 2e-6f);
    EXPECT_NEAR(b.height, 1.706723f, 2e-6f);
    const int knee = skel->find("mKneeLeft");
    Vec3 k = skel->default_position(knee);
    k.z += 0.05f;
    ASSERT_EQ(add(w, e, uuid(kMidText), {pos(knee, k)}), OverrideError::None);
    b = AttachmentOverrideFeature::of(w).body_size(e);
    EXPECT_NEAR(b.pelvis_to_foot, 0.929f, 2e-6f);
    EXPECT_NEAR(b.height, 1.656723f, 2e-6f);
}

// Bad input changes nothing and says why.
TEST(AttachmentOverrides, BadInputChangesNothing) {
    World w;
    const auto skel = Skeleton::default_skeleton();
    const Entity e = w.create_avatar(skel);
    const int head = skel->find("mHead");
    const Vec3 rest = skel->rest_positions()[head];
    const float nan = std::numeric_limits<float>::quiet_NaN();
    EXPECT_EQ(add(w, e, Uuid{}, {pos(head, {0.f, 0.f, 0.1f})}), OverrideError::NullMesh);
    EXPECT_EQ(add(w, e, uuid(kMidText), {pos(head, {0.f, 0.f, 0.1f}), pos(skel->num_joints(), {})}),
              OverrideError::InvalidJoint);
    EXPECT_EQ(add(w, e, uuid(kMidText), {pos(-1, {})}), OverrideError::InvalidJoint);
    EXPECT_EQ(add(w, e, uuid(kMidText), {pos(head, {0.f, 0.f, 0.1f}), scl(head, {nan, 1.f, 1.f})}),
              OverrideError::NonFinite);
    EXPECT_EQ(add(w, e, uuid(kMidText), {}, false, nan), OverrideError::NonFinite);
    EXPECT_EQ(w.local_pose(e).positions[head], rest);
    EXPECT_EQ(AttachmentOverrideFeature::of(w).mesh_count(e), 0u);
    EXPECT_EQ(override_error(AttachmentOverrideFeature::of(w).remove(e, uuid(kMidText))), OverrideError::NotFound);
    EXPECT_EQ(override_error(AttachmentOverrideFeature::of(w).remove(e, Uuid{})), OverrideError::NullMesh);
    EXPECT_EQ(override_error(AttachmentOverrideFeature::of(w).clear(e)), OverrideError::None);
    const Entity gone = w.create_avatar(skel);
    w.destroy(gone);
    EXPECT_EQ(add(w, gone, uuid(kMidText), {}), OverrideError::InvalidEntity);
    EXPECT_EQ(override_error(AttachmentOverrideFeature::of(w).remove(gone, uuid(kMidText))), OverrideError::InvalidEntity);
    EXPECT_EQ(override_error(AttachmentOverrideFeature::of(w).clear(gone)), OverrideError::InvalidEntity);
    EXPECT_EQ(override_error(AttachmentOverrideFeature::of(w).reset_skeleton(gone)), OverrideError::InvalidEntity);
    EXPECT_FALSE(AttachmentOverrideFeature::of(w).active_position_override(gone, head).found);
    EXPECT_FALSE(AttachmentOverrideFeature::of(w).active_position_override(e, 100000).found);
    EXPECT_STREQ(override_error_name(OverrideError::AlreadyActive), "mesh overrides already applied");
    const Status st = AttachmentOverrideFeature::of(w).remove(e, uuid(kMidText));  // the error's message and code
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().message, "mesh overrides not applied");
    EXPECT_EQ(override_error(st), OverrideError::NotFound);
    EXPECT_EQ(override_error(Status{}), OverrideError::None);
}

// The books follow their avatar when another is destroyed (dense arrays swap-remove), and they
// are counted in avatar_state_bytes().
TEST(AttachmentOverrides, OverridesStayWithTheirAvatar) {
    World w;
    const auto skel = Skeleton::default_skeleton();
    const Entity a = w.create_avatar(skel), b = w.create_avatar(skel);
    const int head = skel->find("mHead");
    const std::size_t bytes0 = w.avatar_state_bytes();
    ASSERT_EQ(add(w, b, uuid(kMidText), {pos(head, {0.f, 0.f, 0.1f})}), OverrideError::None);
    EXPECT_GT(w.avatar_state_bytes(), bytes0);
    ASSERT_TRUE(w.destroy(a));
    EXPECT_EQ(AttachmentOverrideFeature::of(w).active_position_override(b, head).value, (Vec3{0.f, 0.f, 0.1f}));
    EXPECT_EQ(w.local_pose(b).positions[head], (Vec3{0.f, 0.f, 0.1f}));
    const Entity c = w.create_avatar(skel);
    EXPECT_FALSE(AttachmentOverrideFeature::of(w).active_position_override(c, head).found);

    // A full rig: every bone 1 cm off its default, scales locked: 2 × 133 entries of 16 bytes,
    // 2 × 133 saved values of 16 bytes, the mesh id, the books' 96-byte header, and the
    // avatar's own local scales (a pool block of 214 × 12 bytes rounded to 64: 2,624).
    std::vector<JointOverride> rig;
    for (int j = 0; j < skel->num_bones(); ++j) rig.push_back(pos(j, skel->default_position(j) + Vec3{0.01f, 0.f, 0.f}));
    const std::size_t before = w.avatar_state_bytes();
    AttachmentOverrides o;
    o.joints = rig;
    o.lock_scale_if_joint_position = true;
    ASSERT_EQ(override_error(AttachmentOverrideFeature::of(w).add(c, uuid(kHighText), o)), OverrideError::None);
    const std::size_t per_rig = w.avatar_state_bytes() - before;
    RecordProperty("full_rig_bytes", std::to_string(per_rig));
    EXPECT_EQ(per_rig, 96u + 2u * 133u * 16u + 2u * 133u * 16u + 16u + 2624u);
}

// Skin info: joint names resolved with the skeleton, translation of each alternate bind
// matrix (elements 12–14), the two flags; mismatched counts and wrong types are errors.
TEST(AttachmentOverrides, SkinInfoGivesTheJointPositions) {
    const auto skel = Skeleton::default_skeleton();
    Llsd skin = Llsd::empty_map();
    Llsd names = Llsd::empty_array();
    names.append("mHead");
    names.append("NotAJoint");
    names.append("L_FOOT");  // a collision volume: getJoint finds it too
    skin.set("joint_names", names);
    Llsd mats = Llsd::empty_array();
    for (int i = 0; i < 3; ++i) {
        Llsd m = Llsd::empty_array();
        for (int k = 0; k < 16; ++k) m.append(k == 12 ? 0.01 * (i + 1) : k == 14 ? 0.5 : (k % 5 == 0 ? 1.0 : 0.0));
        mats.append(m);
    }
    skin.set("alt_inverse_bind_matrix", mats);
    skin.set("pelvis_offset", 0.25);
    skin.set("lock_scale_if_joint_position", true);
    bool lock = false;
    float offset = 0.f;
    auto r = joint_overrides_from_skin_llsd(*skel, skin, lock, offset);
    ASSERT_TRUE(r) << r.error().describe();
    EXPECT_TRUE(lock);
    EXPECT_FLOAT_EQ(offset, 0.25f);
    ASSERT_EQ(r->joints.size(), 2u);
    EXPECT_EQ(r->joints[0].joint, skel->find("mHead"));
    EXPECT_TRUE(r->joints[0].has_position);
    EXPECT_FALSE(r->joints[0].has_scale);
    EXPECT_EQ(r->joints[0].position, (Vec3{0.01f, 0.f, 0.5f}));
    EXPECT_EQ(r->joints[1].joint, skel->find("L_FOOT"));
    EXPECT_EQ(r->joints[1].position, (Vec3{0.03f, 0.f, 0.5f}));
    ASSERT_EQ(r->unknown_joints.size(), 1u);
    EXPECT_EQ(r->unknown_joints[0], "NotAJoint");

    Llsd no_alt = skin;
    no_alt.as_map().erase("alt_inverse_bind_matrix");
    auto none = joint_overrides_from_skin_llsd(*skel, no_alt, lock, offset);
    ASSERT_TRUE(none);
    EXPECT_TRUE(none->joints.empty());

    Llsd short_alt = skin;
    short_alt.as_map()["alt_inverse_bind_matrix"].as_array().pop_back();
    auto mismatch = joint_overrides_from_skin_llsd(*skel, short_alt, lock, offset);
    ASSERT_FALSE(mismatch);
    EXPECT_NE(mismatch.error().message.find("2 alt_inverse_bind_matrix entries for 3 joint_names"), std::string::npos)
        << mismatch.error().message;

    Llsd bad = skin;
    bad.as_map()["alt_inverse_bind_matrix"].as_array()[1].as_array()[13] = "x";
    auto typed = joint_overrides_from_skin_llsd(*skel, bad, lock, offset);
    ASSERT_FALSE(typed);
    EXPECT_NE(typed.error().message.find("/alt_inverse_bind_matrix[1][13]"), std::string::npos)
        << typed.error().message;
    Llsd flag = skin;
    flag.set("lock_scale_if_joint_position", 1);
    EXPECT_FALSE(joint_overrides_from_skin_llsd(*skel, flag, lock, offset));
    EXPECT_FALSE(joint_overrides_from_skin_llsd(*skel, Llsd(3), lock, offset));
}

// Skeletal visual params write joints through the overrides (LLPolySkeletalDistortion::apply
// with setPosition(…, true) / setScale(…, true)): an overridden joint keeps its override when
// a param that moves or scales it changes; a second avatar without overrides shows the param's
// effect. Removing the override gives back the value saved when it came (the param change made
// meanwhile is not in it, as in the viewer); reset_skeleton() brings the param's effect back.
TEST(AttachmentOverrides, SkeletalVisualParamsDoNotMoveOverriddenJoints) {
    const std::filesystem::path dir = std::filesystem::path(SLANIM_SHARED_DIR) / "sl-character";
    if (!std::filesystem::exists(dir / "avatar_lad.xml"))
        GTEST_SKIP() << "../shared/sl-character is absent (" << SLANIM_SHARED_DIR << ")";
    auto skel = load_skeleton(dir);
    ASSERT_TRUE(skel) << skel.error().describe();
    auto model = load_appearance_model(dir, *skel);
    ASSERT_TRUE(model) << model.error().describe();
    const AppearanceModel& m = **model;
    // The first skeletal param (id order) that offsets a joint and scales one.
    ParamIndex param = kNoParam;
    int moved = -1, scaled = -1;
    for (ParamIndex p = 0; p < m.num_params() && param == kNoParam; ++p) {
        const AppearanceParam& info = m.param(p);
        if (info.kind != VisualParamKind::Skeleton || info.offsets_count == 0 || info.scales_count == 0 ||
            info.sex != Sex::Both)
            continue;
        const JointOffsetBinding& ob = m.offset_bindings()[info.offsets_first];
        const JointScaleBinding& sb = m.scale_bindings()[info.scales_first];
        if (ob.offset == Vec3{} || sb.scale == Vec3{}) continue;
        param = p;
        moved = ob.joint;
        scaled = sb.joint;
    }
    ASSERT_NE(param, kNoParam) << "no skeletal param with offsets and scales in avatar_lad.xml";
    const AppearanceParam& info = m.param(param);
    RecordProperty("param", info.name + " moves " + (*skel)->name(moved) + ", scales " + (*skel)->name(scaled));

    World w;
    const Entity plain = w.create_avatar(*skel), over = w.create_avatar(*skel);
    for (Entity e : {plain, over}) {
        auto app = Appearance::create(*model, AppearanceOptions{.skin = false});
        ASSERT_TRUE(app) << app.error().describe();
        ASSERT_TRUE(AppearanceFeature::of(w).set(e, std::shared_ptr<Appearance>(std::move(*app))));
    }
    w.step(0.f);  // defaults applied
    const Vec3 before_pos = w.local_pose(over).positions[moved];
    const Vec3 before_scale = w.local_pose(over).scales[scaled];
    const Vec3 op = (*skel)->default_position(moved) + Vec3{0.f, 0.f, 0.02f};
    ASSERT_EQ(add(w, over, uuid(kMidText), {pos(moved, op), scl(scaled, {1.5f, 1.5f, 1.5f})}), OverrideError::None);

    const float target = info.default_weight == info.max ? info.min : info.max;
    for (Entity e : {plain, over}) ASSERT_TRUE(AppearanceFeature::of(w).get(e)->state().set_weight(param, target)) << info.name;
    w.step(1.f / 30.f);
    EXPECT_NE(w.local_pose(plain).positions[moved], before_pos) << info.name << " moves " << (*skel)->name(moved);
    EXPECT_NE(w.local_pose(plain).scales[scaled], before_scale) << info.name << " scales " << (*skel)->name(scaled);
    EXPECT_EQ(w.local_pose(over).positions[moved], op);
    EXPECT_EQ(w.local_pose(over).scales[scaled], (Vec3{1.5f, 1.5f, 1.5f}));
    EXPECT_EQ(AppearanceFeature::of(w).get(over)->touched_joints()[moved] & 1u, 1u);

    ASSERT_EQ(override_error(AttachmentOverrideFeature::of(w).remove(over, uuid(kMidText))), OverrideError::None);
    EXPECT_EQ(w.local_pose(over).positions[moved], before_pos);
    EXPECT_EQ(w.local_pose(over).scales[scaled], before_scale);
    ASSERT_EQ(override_error(AttachmentOverrideFeature::of(w).reset_skeleton(over)), OverrideError::None);
    EXPECT_EQ(w.local_pose(over).positions[moved], w.local_pose(plain).positions[moved]);
    EXPECT_EQ(w.local_pose(over).scales[scaled], w.local_pose(plain).scales[scaled]);
}

// A real animation that positions a joint, on an avatar whose joint is overridden: every step
// of playback the joint is exactly where the same animation puts it on an avatar without
// overrides; after the motion stops it stays there (the viewer does not restore it), and
// reset_skeleton() brings the override back.
TEST(AttachmentOverrides, RealAnimationPositionsWinOverOverrides) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(SLANIM_SHARED_DIR) / "anims";
    if (!fs::is_directory(dir)) GTEST_SKIP() << "../shared/anims is absent (" << SLANIM_SHARED_DIR << ")";
    std::vector<fs::path> files;
    for (const auto& f : fs::recursive_directory_iterator(dir))
        if (f.path().extension() == ".anim") files.push_back(f.path());
    std::sort(files.begin(), files.end());
    const auto skel = Skeleton::default_skeleton();
    // The first file (sorted) with position keys on a joint other than the pelvis.
    std::shared_ptr<const MotionClip> clip;
    Motion motion;
    int joint = -1;
    fs::path chosen;
    for (const auto& f : files) {
        auto m = load_motion(f.string(), *skel);
        if (!m) continue;
        for (const auto& j : m->joints)
            if (j.joint > 0 && j.joint < skel->num_bones() && j.pos_keys.size() >= 2) {
                joint = j.joint;
                break;
            }
        if (joint >= 0) {
            motion = *m;
            chosen = f;
            clip = MotionClip::build(motion, *skel, f.filename().string());
            break;
        }
    }
    if (!clip) GTEST_SKIP() << "no animation with position keys on a bone under " << dir;
    SCOPED_TRACE(chosen.string() + " positions " + skel->name(joint));
    RecordProperty("animation", chosen.filename().string() + " positions " + skel->name(joint));

    World w;
    const Entity plain = w.create_avatar(skel), over = w.create_avatar(skel);
    const Vec3 op = skel->default_position(joint) + Vec3{0.03f, -0.02f, 0.04f};
    ASSERT_EQ(add(w, over, uuid(kMidText), {pos(joint, op)}), OverrideError::None);
    for (Entity e : {plain, over}) w.controller(e).start(clip);
    w.step(0.f);
    w.step(1.f / 30.f);  // past time 0, where an easing-in motion still weighs 0
    const float end = std::min(motion.duration, 10.f);
    int steps = 0;
    for (float t = 0.f; t < end; t += 1.f / 30.f, ++steps) {
        ASSERT_EQ(w.local_pose(over).positions[joint], w.local_pose(plain).positions[joint]) << "t=" << t;
        ASSERT_NE(w.local_pose(over).positions[joint], op) << "t=" << t;
        w.step(1.f / 30.f);
    }
    EXPECT_GT(steps, 0);
    for (Entity e : {plain, over}) w.controller(e).stop(clip.get(), true);
    w.step(1.f / 30.f);
    w.step(1.f / 30.f);
    EXPECT_FALSE(w.controller(over).is_active(clip.get()));
    const Vec3 left = w.local_pose(plain).positions[joint];
    EXPECT_EQ(w.local_pose(over).positions[joint], left);
    ASSERT_EQ(override_error(AttachmentOverrideFeature::of(w).reset_skeleton(over)), OverrideError::None);
    EXPECT_EQ(w.local_pose(over).positions[joint], op);
    w.step(1.f / 30.f);
    EXPECT_EQ(w.local_pose(over).positions[joint], op);
    ASSERT_EQ(override_error(AttachmentOverrideFeature::of(w).remove(over, uuid(kMidText))), OverrideError::None);
    EXPECT_EQ(w.local_pose(over).positions[joint], skel->rest_positions()[joint]);
}

// A reduced-rate avatar (LOD) moves its shown pose toward a pose evaluated ahead: an override
// set between steps is written into both, so the interpolation does not pull the joint back.
TEST(AttachmentOverrides, ReducedRateAvatarsKeepTheOverride) {
    World w;
    LodSettings lod;
    lod.enabled = true;
    LodFeature::of(w).set_settings(lod);
    const auto skel = Skeleton::default_skeleton();
    const Entity e = w.create_avatar(skel);
    w.controller(e).set_pixel_area(100.f);  // below half_rate_area: every 4th step
    const int head = skel->find("mHead"), arm = skel->find("mShoulderLeft");
    const auto clip = test::clip(test::motion({test::rot_joint("mShoulderLeft", {{0.f, 0.f}, {4.f, 90.f}})}, 4.f, 3));
    w.controller(e).start(clip);
    for (int k = 0; k < 2; ++k) w.step(1.f / 30.f);  // inside an interpolation span
    ASSERT_EQ(LodFeature::of(w).update_period_at(0), 4);
    const Vec3 over{0.f, 0.f, 0.1f};
    ASSERT_EQ(add(w, e, uuid(kMidText), {pos(head, over)}), OverrideError::None);
    const Quat arm_before = w.local_pose(e).rotations[arm];
    for (int k = 0; k < 6; ++k) {
        w.step(1.f / 30.f);
        EXPECT_EQ(w.local_pose(e).positions[head], over) << "step " << k;
    }
    EXPECT_NE(w.local_pose(e).rotations[arm], arm_before);  // the avatar did animate meanwhile
}
