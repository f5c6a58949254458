// SPDX-License-Identifier: MIT
// BVJ: the JSON form of BVH proposed by the SledjHamr project (onefang/SledjHamr,
// docs/ClientHamr/BVJ.html): a raw model for both of its forms, a reader and a writer, and the
// conversions to and from BVH and motions. See docs/creator-formats.md for the schema and for
// every point where the proposal left a decision open.
//
// A BVJ file is one JSON object:
//
//     { "priority": 3, "looped": true, "loop_in": 0.5, "loop_out": 2, "ease_in": 0.3,
//       "ease_out": 0.3, "hand_pose": 1, "emote": "", "duration": 2,
//       "HIERARCHY": { "NAME": "hip", "OFFSET": [0, 42, 0],
//                      "CHANNELS": ["Xposition", "Yposition", "Zposition",
//                                   "Xrotation", "Zrotation", "Yrotation"],
//                      "JOINTS": [ { "NAME": "abdomen", "ATTACH": [28], "PIVOT": [0, 0, 1],
//                                    "OFFSET": [...], "CHANNELS": [...],
//                                    "JOINTS": [ { "END": true, "OFFSET": [0, 3.1, 0] } ] } ] },
//       "MOTION": { "Frame Time": 0.033333, "Frames": [[...], [...]] }
//       -- or --
//       "KEYFRAMES": [ { "AT": 0, "hip": [8.03, 35.01, 88.36, -3.41, 14.78, -164.35],
//                        "abdomen": [13.09, 40.30, -24.60] }, { "AT": 0.5, ... } ] }
//
// MOTION is BVH's sampled motion (frame 0 the reference frame, as in a BVH file); KEYFRAMES
// gives channel values at absolute times (`AT`, seconds from the start), each channel linearly
// interpolated between the closest keyframes that give it (a value may be `null`, or a joint
// absent, where a keyframe does not key it). Slanim extensions, all optional: "duration",
// "loop_in"/"loop_out"/"ease_in"/"ease_out"/"hand_pose"/"emote" (the proposal names the
// concepts, not the keys), a per-joint "PRIORITY", and "constraints".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slanim/formats/bvh.hpp"
#include "slanim/formats/bvh_export.hpp"
#include "slanim/formats/bvh_import.hpp"
#include "slanim/core/math.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/result.hpp"

namespace slanim {

class Skeleton;

/// One joint object of HIERARCHY (the root object or a member of a JOINTS array).
struct BvjJoint {
    std::string name;                ///< NAME
    int parent = -1;                 ///< index in BvjMotion::joints, −1 for the root
    std::optional<Vec3> offset;      ///< OFFSET, file units; optional (the proposal allows it)
    std::vector<BvhChannel> channels;  ///< CHANNELS: 0..6 distinct names, any order
    std::vector<std::int64_t> attach;  ///< ATTACH: attachment point ids (any integers)
    std::optional<Vec3> pivot;       ///< PIVOT: each component in [−1, 1]
    std::optional<int> priority;     ///< PRIORITY (slanim extension): −1..6, −1 = the base
    bool has_end_site = false;       ///< a JOINTS member `{"END": true, "OFFSET": [...]}`
    std::optional<Vec3> end_site_offset;
    friend bool operator==(const BvjJoint&, const BvjJoint&) = default;
};

/// The values one keyframe gives one joint: one entry per channel of the joint, in CHANNELS
/// order; nullopt = `null` (the channel has no key at this time).
struct BvjJointValues {
    int joint = 0;  ///< index in BvjMotion::joints
    std::vector<std::optional<float>> values;
    friend bool operator==(const BvjJointValues&, const BvjJointValues&) = default;
};

struct BvjKeyframe {
    float at = 0.f;  ///< AT, seconds (≥ 0); keyframes are strictly increasing in AT
    std::vector<BvjJointValues> joints;  ///< in file order, each joint at most once
    friend bool operator==(const BvjKeyframe&, const BvjKeyframe&) = default;
};

/// The animation parameters (top level, or inside MOTION: the proposal's two placements).
struct BvjParameters {
    /// "priority": any number in the file (the proposal's example has 3.5); converting to a
    /// motion requires an integer 0..6.
    std::optional<double> priority;
    std::optional<bool> looped;          ///< "looped"
    std::optional<float> loop_in, loop_out, ease_in, ease_out;  ///< seconds, ≥ 0
    std::optional<std::uint32_t> hand_pose;  ///< "hand_pose", 0..14
    std::optional<std::string> emote;        ///< "emote"
    std::optional<float> duration;           ///< "duration", seconds, ≥ 0 (extension)
    friend bool operator==(const BvjParameters&, const BvjParameters&) = default;
};

enum class BvjForm : std::uint8_t { Motion, Keyframes };

/// The raw model of a BVJ file: everything it says, in file units (OFFSET and position channels
/// usually inches, rotation channels degrees), unconverted.
struct BvjMotion {
    std::vector<BvjJoint> joints;  ///< depth first, parents before children; joints[0] is the root
    BvjForm form = BvjForm::Motion;
    // MOTION form:
    float frame_time = 0.f;  ///< "Frame Time", seconds (> 0)
    int num_frames = 0;      ///< rows of "Frames" (≥ 1)
    /// num_frames × (channels of all joints) values, row-major in joint order (as BvhMotion).
    std::vector<float> frames;
    // KEYFRAMES form:
    std::vector<BvjKeyframe> keyframes;  ///< at least one
    BvjParameters params;
    /// The parameters were inside the MOTION object (written back there).
    bool params_in_motion = false;
    /// "constraints" (extension): the .anim constraints, see docs/creator-formats.md.
    std::vector<MotionConstraint> constraints;

    [[nodiscard]] std::size_t total_channels() const;
    friend bool operator==(const BvjMotion&, const BvjMotion&) = default;
};

/// Limits parse_bvj enforces.
inline constexpr int kBvjMaxJoints = kBvhMaxJoints;
inline constexpr int kBvjMaxDepth = kBvhMaxDepth;
inline constexpr std::size_t kBvjMaxKeyframes = 1'000'000;
/// Longest KEYFRAMES span bvj_to_bvh samples, seconds: an SL animation lasts at most 60 s
/// (MAX_ANIM_DURATION; the viewer's BVH upload refuses longer files). With fps ≤ 1000 a
/// sampled BVH has at most 60,002 frames, so its size follows the file's channel count instead
/// of one large AT value.
inline constexpr float kBvjMaxSampledSeconds = 60.f;

/// Parses BVJ text (UTF-8 JSON). Errors name the JSON path of the bad field and what was
/// expected, e.g. "$.HIERARCHY.JOINTS[0].CHANNELS[2]: expected a channel name (Xposition …
/// Zrotation), found \"Wrotation\""; syntax errors give the byte offset (Error::offset).
/// Rejected: not an object; unknown keys (a misspelt parameter is an error, not ignored); both
/// or neither of MOTION and KEYFRAMES; a parameter given both at the top level and inside
/// MOTION; a joint without NAME or CHANNELS; a repeated channel; an END object with anything
/// but OFFSET, or two of them under one joint; duplicate joint names (keyframes name joints);
/// PIVOT outside [−1, 1]; a frame row whose length is not the channel total; a keyframe without
/// AT, AT < 0 or not increasing, a keyframe naming an unknown joint or with the wrong number of
/// values, rotation values of one joint partly null; non-finite or out-of-float-range numbers;
/// more than kBvjMaxJoints joints, deeper than kBvjMaxDepth, more than kBvjMaxKeyframes
/// keyframes or kBvhMaxValues frame values. Never throws (but for std::bad_alloc), no
/// recursion deeper than kBvjMaxDepth.
Result<BvjMotion> parse_bvj(std::string_view text);

/// Writes the canonical text: 2-space indented JSON, parameters first, then HIERARCHY, then
/// MOTION (one frame per line) or KEYFRAMES (one keyframe per line), then constraints; floats
/// as their shortest text. parse_bvj(write_bvj(m)) == m for every m parse_bvj returns.
std::string write_bvj(const BvjMotion& m);

/// Reads and parses a file. Errors start with the path.
Result<BvjMotion> load_bvj(const std::string& path);
/// Writes write_bvj(m) atomically.
Result<bool> save_bvj(const std::string& path, const BvjMotion& m);

/// The channel values of joint `joint` at time t of a KEYFRAMES motion: each channel linearly
/// interpolated between the closest keyframes that key it, held before the first and after the
/// last; 0 for a channel no keyframe keys. `out` gets one value per channel. Precondition:
/// form == Keyframes and a valid joint index.
void sample_bvj_keyframes(const BvjMotion& m, int joint, float t, std::vector<float>& out);

/// The MOTION form as a BVH (same hierarchy, frames, frame time; a missing OFFSET is 0).
/// A KEYFRAMES motion is sampled at `fps` from AT 0 to the last AT (the last frame on it;
/// frame time last AT / round(last AT × fps)), after a reference frame that is the rest pose
/// (zero rotations; a hip of mPelvis at the skeleton's default pelvis position, the KEYFRAMES
/// convention of import_bvj; other position channels 0). Errors: fps out of (0, 1000], a last
/// AT beyond kBvjMaxSampledSeconds (named by its JSON path, `$.KEYFRAMES[i].AT`), the BVH limits.
Result<BvhMotion> bvj_to_bvh(const BvjMotion& m, const Skeleton& skeleton, float fps = 30.f);
/// A BVH as a MOTION-form BVJ (trailing lines are not kept).
BvjMotion bvh_to_bvj(const BvhMotion& bvh);

/// BVJ → motion. MOTION form: exactly import_bvh of the same BVH (the proposal: BVJ is BVH in
/// JSON), with the file's parameters as defaults that `options` override. KEYFRAMES form:
/// every keyframe that keys a joint's rotation (position) becomes a rotation (position) key at
/// its AT time, converted by the same importer (axes, inches, rotation orders, names,
/// ignored joints) with no key reduction; there is no reference frame: rotations are relative
/// to the rest pose (the pelvis's too) and hip positions are absolute in BVH axes, the rest
/// pelvis standing at the skeleton's default pelvis position (position = value × 0.02540005 −
/// default pelvis position); other joints' positions are local offsets. Duration: "duration",
/// else the last AT. Header defaults as the viewer's importer (priority 2, ease 0.3 s scaled
/// to fit a short one-shot motion, hand 1); PRIORITY per joint and constraints are applied.
/// SL plays rotations by nlerp between keys, not by the proposal's per-channel linear
/// interpolation: keys are exact, in-between poses of multi-axis turns differ slightly.
/// Errors: those of import_bvh, a non-integer priority or one outside 0..6, loop points
/// outside the duration, a key time beyond the duration.
Result<BvhImportResult> import_bvj(const BvjMotion& m, const Skeleton& skeleton,
                                   const BvhImportOptions& options = {});

/// Motion → BVJ settings.
struct BvjExportOptions {
    BvjForm form = BvjForm::Keyframes;
    /// Hierarchy, names, rotation orders, and (MOTION form) the sampling rate; see export_bvh.
    BvhExportOptions bvh;
};

/// Motion → BVJ. KEYFRAMES (default): one keyframe per distinct key time of the motion; each
/// joint gets its rotation and/or position values where it has a key of that kind, null
/// elsewhere, so every key is kept exactly: values are written at the centre of the key's
/// 16-bit quantization interval (times too, within the duration), so import_bvj gives back the
/// same quantized motion (equal after quantization). Header values, joint priorities
/// (PRIORITY) and constraints are written. MOTION: the frames of export_bvh (sampled, then
/// reduced again on import) plus the same parameters. Errors: those of bvh_export_hierarchy
/// and export_bvh.
Result<BvjMotion> export_bvj(const Motion& motion, const Skeleton& skeleton,
                             const BvjExportOptions& options = {});

/// The header values of `p` as a BVH sidecar (for .bvj → .bvh), and back.
BvhSidecar bvj_parameters_to_sidecar(const BvjMotion& m);
void sidecar_to_bvj_parameters(const BvhSidecar& s, BvjMotion& m);

}  // namespace slanim
