// SPDX-License-Identifier: MIT
// BVH → motion conversion exactly like the viewer's importer (`LLBVHLoader`, spec §8):
// translation table, reference frame 0, duration rule, keyframe reduction (`optimize`), axis
// conversion and inch-to-metre factor (`serialize`), defaults and overrides.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "slanim/formats/bvh.hpp"
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

/// Converts a parsed BVH. Errors: the root is not `hip` or another alias of mPelvis
/// (`E_ST_BAD_ROOT`), an unknown joint (see skip_unknown_joints), a rotation channel missing
/// from a joint (`E_ST_NO_ROTATION`), duration above 60 s (the preview refuses it), option
/// values out of range. The result is re-encoded with the viewer's quantization, so it equals
/// what `LLKeyframeMotion::deserialize` would hold after upload.
Result<BvhImportResult> import_bvh(const BvhMotion& bvh, const Skeleton& skeleton,
                                   const BvhImportOptions& options = {});

}  // namespace slanim
