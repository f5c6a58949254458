// SPDX-License-Identifier: MIT
// BVH → motion conversion exactly like the viewer's importer (`LLBVHLoader`, spec §8):
// translation table, reference frame 0, duration rule, keyframe reduction (`optimize`), axis
// conversion and inch-to-metre factor (`serialize`), defaults and overrides.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "slanim/engine/bvh.hpp"
#include "slanim/engine/motion.hpp"
#include "slanim/engine/result.hpp"

namespace slanim {

class Skeleton;

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
