// SPDX-License-Identifier: MIT
// Bulk edits of a decoded motion (what animDump, tanimbomb and AnimHacker do to `.anim` files),
// kept valid for the viewer: every result encodes (encode_motion) to a file that the viewer's
// deserialize accepts, provided the input did (spec §1.2, §1.5, §3.6, §5.1, §11.2).
//
// Every edit returns Result<bool>: true when the motion changed, false when it already was as
// asked (for example a glob that matched joints of the skeleton but none of this motion). On an
// error the motion is left exactly as it was.
//
// Joint globs are fnmatch-style patterns on canonical joint names (MotionJoint::name): `*` any
// run of characters, `?` one character, `[abc]`, `[a-z]`, `[!abc]` (or `[^abc]`) one character
// of / not of a set, `\x` the character x. Matching is case-sensitive, like the viewer's joint
// lookup. A pattern without any of `*?[\` that the skeleton resolves (an alias such as "lShldr",
// "hip" or "avatar_mHead", Skeleton::find) selects that joint's canonical name. A pattern that
// selects no joint of the skeleton and no joint of the motion is an error (a typo, not a no-op).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slanim/core/motion.hpp"
#include "slanim/core/result.hpp"

namespace slanim {

class Skeleton;

// ---------------------------------------------------------------------------------------------
// Globs

/// Checks a glob's syntax: an unterminated `[` set or a trailing `\` is an error.
Result<bool> check_glob(std::string_view pattern);
/// fnmatch-style match of the whole `name` (no special treatment of `/` or a leading `.`).
/// Precondition: check_glob(pattern) succeeded (an invalid pattern matches nothing).
bool glob_match(std::string_view pattern, std::string_view name);
/// Whether the motion joint `j` is selected by `pattern` (see the file comment: alias
/// resolution for a plain name, else a glob on the canonical name).
bool joint_matches(std::string_view pattern, const MotionJoint& j, const Skeleton& skeleton);

// ---------------------------------------------------------------------------------------------
// Priorities (spec §1.2, §3.6, §11.2)

/// Sets the base priority to `priority` (0..6) AND every joint's priority to `priority`
/// (explicitly, not −1), so that the whole motion plays at that priority and its hand-pose
/// priority (`max_priority`) is that priority too, like the viewer's upload-floater
/// `setPriority` (which sets mMaxPriority to the new priority). Use set_joint_priority
/// afterwards for per-joint exceptions.
/// Accepted: 0..6. Rejected: < 0 (−1 "use motion priority" exists only for joints) and ≥ 7
/// (7 is ADDITIVE_PRIORITY: the viewer clamps a base ≥ 7 to 6 on load, so ask for 6).
/// `max_priority` becomes what the viewer computes when it loads the written file.
Result<bool> set_base_priority(Motion& motion, int priority);

/// Sets the priority of the joints selected by `glob` (see joint_matches) to `priority`.
/// Accepted: −1 ("use the motion's base priority") and 0..6. Rejected: < −1 (the viewer
/// rejects the file) and ≥ 7 (the viewer does not bound joint priorities, but 7 is ADDITIVE
/// and > 7 is undefined behaviour in its joint-signature shift, spec §11.2).
/// `max_priority` is recomputed as the viewer does on load (max of LOW and the explicit joint
/// priorities).
Result<bool> set_joint_priority(Motion& motion, std::string_view glob, int priority,
                                const Skeleton& skeleton);

// ---------------------------------------------------------------------------------------------
// Joints and keys

/// Removes the joints selected by `glob`. Errors (motion unchanged) when no joint would be left
/// (the viewer rejects a motion without joints) or when a constraint's chain needs a dropped
/// joint (the viewer rejects such a constraint). `max_priority` is recomputed.
Result<bool> drop_joints(Motion& motion, std::string_view glob, const Skeleton& skeleton);
/// Removes the position keys of the joints selected by `glob` ("*": every joint).
Result<bool> drop_position_keys(Motion& motion, std::string_view glob, const Skeleton& skeleton);
/// Removes the rotation keys of the joints selected by `glob`.
Result<bool> drop_rotation_keys(Motion& motion, std::string_view glob, const Skeleton& skeleton);
/// Removes the joints that have neither rotation nor position keys, except the ones a
/// constraint's chain needs (the viewer requires them to be joints of the motion). Errors when
/// every joint is empty (a motion needs at least one joint). `max_priority` is recomputed.
Result<bool> drop_empty_joints(Motion& motion, const Skeleton& skeleton);

// ---------------------------------------------------------------------------------------------
// Header values

/// Ease-in / ease-out duration in seconds: finite and ≥ 0 (the viewer does not clamp negative
/// values, spec §11.2, so they are refused here).
Result<bool> set_ease_in(Motion& motion, float seconds);
Result<bool> set_ease_out(Motion& motion, float seconds);

/// Turns looping on or off. The loop points are not moved (loop_in == loop_out is legal and
/// holds that frame while looping).
Result<bool> set_loop(Motion& motion, bool loop);

/// A loop point as given by a user: seconds, or a percentage of the duration.
struct LoopPoint {
    double value = 0.0;
    bool percent = false;
    friend bool operator==(const LoopPoint&, const LoopPoint&) = default;
};
/// Parses "1.25" (seconds) or "50%" (of the duration). Seconds must be finite and ≥ 0, a
/// percentage finite and in [0, 100].
Result<LoopPoint> parse_loop_point(std::string_view text);
/// Sets the loop in and/or out point (an absent one keeps its value). Seconds beyond the
/// duration are clamped to the duration; the point kept is clamped to [0, duration] too
/// (the viewer does not range-check loop points, spec §11.2). Errors (motion unchanged) when
/// the result would have loop_in > loop_out. Set both at once when moving both, so that the
/// order does not matter.
Result<bool> set_loop_points(Motion& motion, std::optional<LoopPoint> loop_in,
                             std::optional<LoopPoint> loop_out);
inline Result<bool> set_loop_in(Motion& motion, LoopPoint p) { return set_loop_points(motion, p, std::nullopt); }
inline Result<bool> set_loop_out(Motion& motion, LoopPoint p) { return set_loop_points(motion, std::nullopt, p); }

/// Plays the motion `factor` times faster (2 = twice as fast): every key time, the duration,
/// the loop points, the ease-in/out durations and the constraints' ease times are divided by
/// `factor`. `factor` must be finite and > 0, and the new duration must stay ≤ 60 s (the
/// viewer's MAX_ANIM_DURATION). Keys whose times become equal collapse, the last one winning
/// (the viewer's std::map rule).
Result<bool> change_speed(Motion& motion, double factor);

/// The enum name of a hand pose, e.g. "HAND_POSE_FIST"; "" past 13.
std::string_view hand_pose_enum_name(std::uint32_t pose);
/// Parses a hand pose: a number 0..13, or a name of spec §5.1 with or without the "HAND_POSE_"
/// prefix, case-insensitive ("fist", "FIST_R", "hand_pose_palm_r").
Result<std::uint32_t> parse_hand_pose(std::string_view text);
/// Sets the hand pose (0..13; 14, which the viewer's off-by-one accepts, is refused).
Result<bool> set_hand_pose(Motion& motion, std::uint32_t pose);

/// Sets the emote (facial expression started with the motion), or clears it with "". Accepted:
/// what the viewer's deserialize keeps (spec §1.5 step 4): a built-in animation name,
/// case-insensitive ("express_smile", "Express_Laugh_Emote"), or a UUID string (the viewer
/// starts that animation asset). Refused: "Closed_Mouth" (cleared by the viewer) and unknown
/// names (cleared by the viewer).
Result<bool> set_emote(Motion& motion, std::string_view name);

// ---------------------------------------------------------------------------------------------
// Mirror

/// Left/right symmetry of a skeleton, derived from its names and rest positions.
struct MirrorTable {
    /// Per joint index: its left/right partner, itself (on the centre line), or −1 (no partner
    /// and off the centre line: a motion animating it cannot be mirrored).
    std::vector<int> partner;
    /// A pair the names suggest but the rest positions refuse (listed once, `joint` < `candidate`),
    /// with the distance (metres) between one's rest position and the other's mirrored one.
    /// For messages.
    struct Rejected {
        int joint = -1, candidate = -1;
        float distance = 0.f;
    };
    std::vector<Rejected> rejected;

    /// partner[joint], or −1 when `joint` is out of range.
    [[nodiscard]] int map(int joint) const {
        return joint >= 0 && joint < static_cast<int>(partner.size()) ? partner[joint] : -1;
    }
};

/// Rest positions of partners must mirror (y → −y) within this distance. The viewer's own
/// avatar_skeleton.xml is asymmetric by up to 3 mm in the legs (mHipLeft y 0.127 vs mHipRight
/// −0.129; mKneeLeft y −0.046 vs mKneeRight 0.049), so 1 mm would leave the legs unpaired.
inline constexpr float kMirrorPairTolerance = 0.005f;
/// A joint without a partner maps to itself when its model-space rest position has |y| below
/// this (metres): it lies on the centre line.
inline constexpr float kMirrorCentreTolerance = 0.001f;

/// The name a joint's partner would have: "Left" ↔ "Right", "LEFT" ↔ "RIGHT" anywhere in the
/// name (all occurrences), and the volume / attachment prefixes "L_" ↔ "R_" and "L " ↔ "R ".
/// Returns the name unchanged when it has none of them.
std::string mirrored_name(std::string_view name);

/// Builds the table for every joint (bones, collision volumes, attachment points): joints
/// pair when their names differ by mirrored_name AND their local rest positions mirror across
/// the XZ plane within `pair_tolerance`; an unpaired joint whose model-space rest position is
/// within kMirrorCentreTolerance of the centre line maps to itself; any other joint has −1.
MirrorTable build_mirror_table(const Skeleton& skeleton, float pair_tolerance = kMirrorPairTolerance);

/// Mirrors the motion left ↔ right across the avatar's XZ plane (Y is left): every joint's
/// track moves to its partner (keeping its priority with it; centre joints stay), rotations
/// map q(x, y, z, w) → (−x, y, −z, w) and positions (x, y, z) → (x, −y, z); constraints swap
/// their source/target volumes with their partners and negate the y of their offsets and
/// target direction; left/right hand poses swap (RELAXED_L ↔ RELAXED_R, POINT_L ↔ POINT_R,
/// FIST_L ↔ FIST_R; the right-only SALUTE_R, PEACE_R and PALM_R stay). Mirroring twice gives
/// the motion back exactly.
/// Errors (motion unchanged): a joint that has no partner and is off the centre line ("joint
/// 'X' has no mirror partner"), a joint the skeleton does not know (drop it first), or a
/// constraint volume without a partner.
Result<bool> mirror(Motion& motion, const Skeleton& skeleton, const MirrorTable& table);
/// The same with build_mirror_table(skeleton).
Result<bool> mirror(Motion& motion, const Skeleton& skeleton);

// ---------------------------------------------------------------------------------------------
// Consistency

/// The viewer's `mMaxPriority` for the motion as written by encode_motion and loaded again
/// (spec §1.5 steps 2 and 12): 6 when the base priority is ≥ 7 (clamped on load), else
/// max(LOW = 0, every joint priority ≠ −1). Joint priorities are not clamped by the viewer.
int viewer_max_priority(const Motion& motion);

/// Checks what the viewer's deserialize checks about constraints against the motion's joints
/// (spec §1.5 step 14): each source volume is a collision volume of the skeleton, the target is
/// GROUND or one, and the chain_length + 1 ancestors of the source volume are joints of the
/// motion; no joint may be unknown while there are constraints. The error names the
/// constraint and the joint.
Result<bool> check_constraint_chains(const Motion& motion, const Skeleton& skeleton);

}  // namespace slanim
