// SPDX-License-Identifier: MIT
// Motion → BVH export, the inverse of the viewer's importer (`LLBVHLoader`, spec §8), and the
// JSON sidecar that keeps what a BVH cannot say (priorities, ease, loop, hand pose, emote).
//
// The BVH is written so that importing it with import_bvh (BvhImporter::Current, the viewer's
// uploader) gives the same poses back: every value is converted with the inverse of the
// importer's axis change (BVH x, y, z = SL y, z, x) and unit factor (inches = metres /
// 0.02540005), frame 0 is a reference frame (the rest pose: zero rotations, the hip at the
// skeleton's default pelvis position) that the importer never plays, and frame f ≥ 1 holds the
// motion sampled at (f − 1) × frame time with the project's sampler (MotionClip + SamplingJob).
// See docs/creator-formats.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slanim/formats/bvh.hpp"
#include "slanim/formats/bvh_import.hpp"
#include "slanim/core/math.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/result.hpp"

namespace slanim {

class Skeleton;

/// The order of a joint's three rotation channels as written in the file (`XZY` is
/// `Xrotation Zrotation Yrotation`). The rotation is the intrinsic product in channel order
/// (Hamilton q = q_first ⊗ q_second ⊗ q_third), which is how the viewer reads it
/// (`bvhStringToOrder` reverses the order into a `mayaQ` order).
enum class BvhRotationOrder : std::uint8_t { XYZ, XZY, YXZ, YZX, ZXY, ZYX };

/// "XYZ" … "ZYX".
std::string_view bvh_rotation_order_name(BvhRotationOrder order);
/// Parses "XYZ" … "ZYX" (case-insensitive); nullopt for anything else.
std::optional<BvhRotationOrder> parse_bvh_rotation_order(std::string_view text);
/// The three rotation channels of `order`, in file order.
std::vector<BvhChannel> bvh_rotation_channels(BvhRotationOrder order);

/// Euler angles in degrees, indexed by axis (x = the Xrotation channel's value, …), such that
/// composing them in `order` (what the importer does with `mayaQ`) gives the rotation `q_bvh`
/// (a rotation in BVH axes; it is normalised first). Computed in double precision. At gimbal
/// lock (the middle angle at ±90°) the first angle is 0 and the third takes the whole turn.
/// Angles are in (−180°, 180°], the middle one in [−90°, 90°].
Vec3 bvh_euler_degrees(Quat q_bvh, BvhRotationOrder order);
/// The importer's inverse: rotation `q_sl` in SL axes (X forward, Y left, Z up) to the same
/// rotation in BVH axes (X left, Y up, Z forward): F⁻¹ ⊗ q ⊗ F with F the importer's frame matrix.
Quat sl_to_bvh_rotation(Quat q_sl);
/// A vector in SL axes, metres → BVH axes, inches (x_bvh = y_sl, y_bvh = z_sl, z_bvh = x_sl,
/// divided by the importer's INCHES_TO_METERS 0.02540005).
Vec3 sl_to_bvh_inches(Vec3 v_sl);

/// The importer's conversion of one BVH rotation (Euler degrees indexed by axis, composed in
/// channel order `order`, as `mayaQ` with the reversed order) to SL axes: ~F · in · F (LL order).
Quat bvh_rotation_to_sl(Vec3 degrees, BvhRotationOrder order);
/// The importer's conversion of a BVH position (inches, BVH axes) to metres in SL axes.
Vec3 bvh_inches_to_sl(Vec3 v_bvh);
/// The rotation order of a channel list: its three rotation channels in list order; nullopt
/// when it does not have exactly one of each.
std::optional<BvhRotationOrder> bvh_rotation_order_of(const std::vector<BvhChannel>& channels);

/// Which joint names the BVH gets.
enum class BvhJointNames : std::uint8_t {
    /// The classic BVH name of the joint where the skeleton has one (the first `aliases` token
    /// that does not start with `avatar_`: hip, abdomen, chest, neck, head, lCollar, …, as in
    /// Linden's and QAvimator's files), else the canonical name (mSpine1, mHandIndex1Left, …).
    Classic,
    /// The canonical skeleton names (mPelvis, mTorso, …).
    Canonical,
};

/// Export settings.
struct BvhExportOptions {
    /// Sampling rate, frames per second, > 0 and ≤ 1000. The frame time is
    /// duration / round(duration × fps) (at least one interval), so the last frame lands on
    /// the motion's duration exactly and the re-imported duration is the original one.
    float fps = 30.f;
    /// One rotation order for every joint. Unset: Linden's per-joint orders for the 19 classic
    /// joints (as in Linden's own BVH sources: XZY for the spine, head and legs, YZX for the
    /// collars and forearms, ZYX for the shoulders and hands, XYZ for the feet) and XZY for all
    /// other joints.
    std::optional<BvhRotationOrder> rotation_order;
    /// Per-joint orders by canonical joint name (or alias); they beat rotation_order.
    std::vector<std::pair<std::string, BvhRotationOrder>> joint_rotation_orders;
    BvhJointNames names = BvhJointNames::Classic;
};

/// One joint of the exported hierarchy (what export_bvh and export_bvj write).
struct BvhExportJoint {
    int skeleton_joint = -1;  ///< skeleton index
    std::string name;         ///< the name written (see BvhJointNames)
    int parent = -1;          ///< index in the hierarchy; −1 for the root (mPelvis)
    Vec3 offset;              ///< inches, BVH axes: the skeleton's rest local position
    BvhRotationOrder order = BvhRotationOrder::XZY;
    /// Position channels: the pelvis when the motion has pelvis position keys, and every other
    /// joint that has position keys.
    bool positions = false;
    bool end_site = false;  ///< a leaf: an End Site at the bone's `end` (inches, BVH axes)
    Vec3 end_offset;
};

/// The hierarchy export_bvh writes for `motion`: the joints it animates (rotation or position
/// keys) and their ancestors, in skeleton (depth-first) order, rooted at mPelvis. The root's
/// OFFSET is 0 when it has position channels (the positions are then absolute, the hip standing
/// at the default pelvis height) and the default pelvis position otherwise. Motion joints the
/// skeleton does not know (joint −1: the viewer keeps them as dummies that animate nothing) are
/// left out. Errors: a joint not below mPelvis (HUD attachment points), a motion that animates
/// no skeleton joint, a rotation order for an unknown joint.
Result<std::vector<BvhExportJoint>> bvh_export_hierarchy(const Motion& motion,
                                                         const Skeleton& skeleton,
                                                         const BvhExportOptions& options = {});

/// Converts a motion to BVH (see the file comment). Frames: 1 reference frame + n + 1 sampled
/// frames with n = max(round(duration × fps), 1) intervals; frame time duration / n (1 / fps
/// for a motion of duration 0). Joints that are only ancestors get zero rotations (the rest
/// pose). What is lost: the header values (use the sidecar), constraints, joints whose
/// rotation equals the rest pose throughout (the importer drops still joints), and detail
/// between samples (the importer's key reduction then keeps what moves). Errors: those of
/// bvh_export_hierarchy, fps out of range, a non-finite duration.
Result<BvhMotion> export_bvh(const Motion& motion, const Skeleton& skeleton,
                             const BvhExportOptions& options = {});

/// What a BVH file cannot hold, kept in `OUT.bvh.json` next to it. JSON schema (every field
/// optional on read; written: all that apply):
///
///     { "format": "slanim-bvh-sidecar", "version": 1,
///       "priority": 0..6, "loop": bool, "loop_in": s, "loop_out": s, "ease_in": s,
///       "ease_out": s, "hand_pose": 0..14, "emote": "name", "duration": s,
///       "joint_priorities": { "<canonical joint name>": -1..6, ... } }
///
/// `duration` is informative (the BVH's frames decide it on import). `joint_priorities`
/// lists every joint whose priority differs from the base priority (−1 = use the base).
struct BvhSidecar {
    std::optional<int> priority;
    std::optional<bool> loop;
    std::optional<float> loop_in, loop_out, ease_in, ease_out;  ///< seconds
    std::optional<std::uint32_t> hand_pose;
    std::optional<std::string> emote;
    std::optional<float> duration;  ///< seconds
    std::vector<std::pair<std::string, int>> joint_priorities;
    friend bool operator==(const BvhSidecar&, const BvhSidecar&) = default;
};

/// The sidecar of a motion: every header value, and the joints whose priority is not the base.
BvhSidecar make_bvh_sidecar(const Motion& motion);
/// JSON text (pretty, 2-space indent, trailing newline).
std::string write_bvh_sidecar(const BvhSidecar& sidecar);
/// Parses a sidecar. Errors name the JSON path ("$.joint_priorities.mHead: expected an
/// integer -1..6, found \"high\""); unknown keys, a wrong `format` or a `version` other than 1
/// are errors. parse_bvh_sidecar(write_bvh_sidecar(s)) == s.
Result<BvhSidecar> parse_bvh_sidecar(std::string_view json);
/// Reads `path` (usually IN.bvh + ".json"). Errors start with the path.
Result<BvhSidecar> load_bvh_sidecar(const std::string& path);

/// Uses the sidecar's header values as import defaults: each one fills the matching option
/// only when it is unset (so explicit options, e.g. from the command line, win). Loop points
/// are clamped to the duration the importer will give `bvh` (they were written for the same
/// duration; the clamp absorbs float rounding of the frame time).
void apply_bvh_sidecar_defaults(const BvhSidecar& sidecar, const BvhMotion& bvh,
                                BvhImportOptions& options);
/// Restores the sidecar's per-joint priorities on an imported motion: joint priority =
/// sidecar priority + (motion base − sidecar base), clamped to 0..6 (−1 stays −1), the same
/// shift the importer applies to every joint for a priority override; max_priority follows.
/// Joints the motion does not have are ignored.
void apply_bvh_sidecar_joint_priorities(const BvhSidecar& sidecar, Motion& motion);

}  // namespace slanim
