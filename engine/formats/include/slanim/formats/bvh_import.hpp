// SPDX-License-Identifier: MIT
// BVH → motion conversion exactly like the viewer's importer (`LLBVHLoader`, spec §8):
// translation table, reference frame 0, duration rule, keyframe reduction (`optimize`), axis
// conversion and inch-to-metre factor (`serialize`), defaults and overrides.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "slanim/formats/bvh.hpp"
#include "slanim/core/math.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/result.hpp"

namespace slanim {

class Skeleton;

/// Which importer's conventions to reproduce.
enum class BvhImporter : std::uint8_t {
    /// Today's `LLBVHLoader` (spec §8): frame 0 is a reference frame that is never played,
    /// key time (frame − 1) × frame time, duration max(frames − 2, 1) × frame time, pelvis
    /// rotations and positions relative to frame 0.
    Current,
    /// The older loader that made Linden's own default animations (`anims/linden`), with
    /// Linden's "Translations 1.0" table (the anim.ini the 2007–2009 viewers shipped): every
    /// frame is played, frame 0 included and kept by the key reduction; key time
    /// (frame + 1) × frame time; duration frames × frame time; the reduction does not restore
    /// the most deviating dropped frame and still joints are kept (first and last key); the
    /// pelvis rotation is not made relative to frame 0 (absolute); only the root joint gets
    /// position keys, made relative as legacy_pelvis_origin says; `neckDummy` and `figureHair`
    /// are ignored. Verified against the Linden pairs (docs/creator-formats.md).
    LindenLegacy,
};

/// LindenLegacy: what pelvis positions are relative to (the old anim.ini `relativepos`).
enum class LegacyPelvisOrigin : std::uint8_t {
    /// `relativepos = x y z` with the skeleton's default pelvis position (mPelvis `pos`,
    /// 0 0 1.067 m): position = BVH position (converted) − default position. Most Linden files.
    Rest,
    /// `relativepos = firstkey`: position = BVH position − frame 0's (WALK, the punches, ...).
    FirstFrame,
};

/// Importer settings. Unset optionals keep the viewer's defaults (`LLBVHLoader::reset`):
/// priority 2, no loop, ease in/out 0.3 s, hand pose 1 (relaxed), no emote.
struct BvhImportOptions {
    std::optional<int> priority;      ///< base priority 0..6 (every joint gets it)
    std::optional<bool> loop;
    std::optional<float> loop_in;     ///< seconds
    std::optional<float> loop_out;    ///< seconds
    std::optional<float> ease_in;     ///< seconds
    std::optional<float> ease_out;    ///< seconds
    std::optional<std::uint32_t> hand_pose;  ///< 0..13
    std::optional<std::string> emote;
    /// BVH joints dropped by the translation table. Default: Linden's historical `anim.ini`
    /// entry `[neckDummy] ignore = true` (Poser's dummy neck joint).
    std::vector<std::string> ignore_joints{"neckDummy"};
    /// BVH joints that are not SL joints: the viewer emits them and then rejects the whole file
    /// (false, the default, reports an error naming the joint); true drops them with a warning.
    bool skip_unknown_joints = false;
    /// Skip keyframe reduction (every played frame becomes a key).
    bool keep_all_frames = false;
    /// Current (the default) or the conventions of the loader that made Linden's files.
    BvhImporter importer = BvhImporter::Current;
    /// LindenLegacy only: the pelvis position origin.
    LegacyPelvisOrigin legacy_pelvis_origin = LegacyPelvisOrigin::Rest;
    /// LindenLegacy only: the root's `offset` rotation of the old table (LL order
    /// out = ~F · in · F · offset; positions are turned by it too). Linden's dances face −X in
    /// their BVH and were imported with a 180° turn about Z.
    Quat legacy_pelvis_offset = Quat::identity();
};

/// What an import produced.
struct BvhImportResult {
    Motion motion;                      ///< as the viewer would upload it (quantized)
    std::vector<std::string> warnings;  ///< dropped joints, clamped values
};

/// One joint's frames for the viewer's keyframe reduction (`LLBVHLoader::optimize`, spec §8.3).
struct KeyReductionInput {
    std::span<const Quat> rotations;  ///< one per frame, in the frame the metric is taken in
    std::span<const Vec3> positions;  ///< one per frame (same count)
    /// Empty: uniform frames, as in a BVH (a dropped frame is predicted 1/n of the way back from
    /// the current frame to the last kept one, n − 1 frames skipped). Otherwise one increasing
    /// time per frame, seconds, and the prediction uses the time ratio instead (keys at any times,
    /// e.g. a glTF LINEAR sampler); on uniform frames both agree.
    std::span<const float> times;
    /// The joint's deepest descendant distance (mChildTreeMaxDepth): the rotation threshold is
    /// 0.01 / max(0.33 · depth, 1), tighter near the root.
    int child_tree_max_depth = 0;
    /// Positions are multiplied by this before the thresholds, which are in BVH units (inches:
    /// 0.03 to keep a key, 0.001 for "moves"); 1 / 0.02540005 for positions in metres.
    float position_scale = 1.f;
    /// Frame 0 is a reference that is never output (today's loader).
    bool reference_frame = true;
    /// Today's rules: the last frame closes a skipped run, and the most deviating dropped frame
    /// of a run is restored when a key is kept. False: the legacy loader's rules.
    bool current_rules = true;
    /// 0 (the viewer, the BVH importer): the greedy pass only, which tests each dropped frame
    /// against one line and can drift over long runs (a 180° turn reduced to its ends plays the
    /// other way round). f > 0: a second pass keeps, run by run, the worst dropped frame that
    /// playback (ll_nlerp / lerp between the kept keys at its time) misses by f × the threshold
    /// or more, until none does.
    float verify_fraction = 0.f;
};

/// Which frames keep their rotation and position key.
struct KeyReduction {
    std::vector<bool> keep_rot, keep_pos;  ///< per frame; the last frame is always kept
    /// Some frame moved from frame 0 by more than the motion thresholds (metric 0.001, 0.001
    /// unit): the viewer drops the joint when not.
    bool moves = false;
};

/// The viewer's greedy keyframe reduction for one joint (spec §8.3), shared by the BVH importer
/// and the glTF importer (slanim::gltf). Rotation metric |X·a − X·b| + |Y·a − Y·b| (rotated unit
/// axes), prediction by ll_lerp toward the last kept key. Malformed input (sizes differing)
/// keeps every key. Pure function, thread-safe.
KeyReduction reduce_keys(const KeyReductionInput& input);

/// Converts a parsed BVH. Errors: the root is not `hip` or another alias of mPelvis
/// (`E_ST_BAD_ROOT`), an unknown joint (see skip_unknown_joints), a rotation channel missing
/// from a joint (`E_ST_NO_ROTATION`), duration above 60 s (the preview refuses it), option
/// values out of range. The result is re-encoded with the viewer's quantization, so it equals
/// what `LLKeyframeMotion::deserialize` would hold after upload.
Result<BvhImportResult> import_bvh(const BvhMotion& bvh, const Skeleton& skeleton,
                                   const BvhImportOptions& options = {});

}  // namespace slanim
