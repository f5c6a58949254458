// SPDX-License-Identifier: MIT
// glTF 2.0 animation import: one animation of a skinned armature → a Motion (what
// `slanim convert IN.glb|IN.gltf -o OUT.anim` and `slanim info FILE.glb` run). See
// docs/creator-formats.md ("glTF 2.0 import") for every rule.
//
// tinygltf parses the file (it is private to this module); slanim maps nodes to SL joints by
// name (Skeleton::find: canonical names and the skeleton's aliases), converts axes (glTF
// (X, Y, Z) → SL (z, x, y), gltf_to_sl in axes.hpp), retargets rest rotations that differ from
// SL's and samples STEP / CUBICSPLINE samplers. Frames and units: the result is in SL's frames
// (X forward, Y left, Z up), metres, seconds; rotations are unit quaternions with w ≥ 0.
//
// Thread safety: the functions share no state; concurrent calls are safe (the skeleton is read
// only).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slanim/core/motion.hpp"
#include "slanim/core/result.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/bvh_import.hpp"

namespace slanim::gltf {

/// The sampling rate of STEP and CUBICSPLINE samplers, frames per second (LINEAR keeps its key
/// times).
inline constexpr float kSampleFps = 30.f;

/// The longest motion, seconds: the viewer's MAX_ANIM_DURATION. Later key times are an error.
inline constexpr float kMaxDuration = 60.f;

/// What mPelvis's position keys are made relative to.
enum class PelvisOrigin : std::uint8_t {
    /// key = translation − the node's rest translation (an armature whose rest hip stands where
    /// the avatar's does); the rotation keys stay as they are.
    Rest,
    /// The uploader's rule for BVH (LLBVHLoader, relative to frame 0): with R0 and p0 the first
    /// rotation and position keys, rotation key = R0⁻¹ ⊗ R and position key = R0⁻¹ (p − p0).
    FirstFrame,
};

/// A translation key within this distance of its node's rest translation (metres, after
/// `scale`) counts as "at rest".
inline constexpr float kRestTolerance = 1e-4f;

/// The size check: the armature's bone lengths over SL's (median). Beyond ±20 % a warning;
/// beyond 3× (or below 1/3) an error naming the factor and `--scale`.
inline constexpr float kSizeWarnRatio = 1.2f;
inline constexpr float kSizeErrorRatio = 3.f;

/// The animation extras key under which the exporter stores the source .anim (base64).
inline constexpr const char* kSourceAnimKey = "source_anim";

struct ImportOptions {
    /// The animation: a name, or an index when all digits; empty = animation 0.
    std::string animation;
    /// Header overrides (they beat the exporter's `extras`) and skip_unknown_joints.
    BvhImportOptions import;
    /// mPelvis's position (and, FirstFrame, rotation) origin.
    PelvisOrigin pelvis_origin = PelvisOrigin::Rest;
    /// Keep the file's key times (default: the earliest key moves to 0 s).
    bool keep_times = false;
    /// Multiplies every translation (keys and node rests) before anything else: 0.0254 for an
    /// armature in inches read as metres. Finite and > 0.
    float scale = 1.f;
};

struct ImportResult {
    Motion motion;                      ///< not yet quantized
    std::vector<std::string> warnings;  ///< skipped joints, ignored channels, retargeted joints, dropped channels
    /// Set when the file is one slanim's exporter wrote from an .anim, with that .anim in its
    /// extras, and its keys, header and the options leave it unchanged: the original file's
    /// bytes, which the command writes as they are (motion is then that file decoded).
    std::vector<std::uint8_t> original_anim;
};

/// Base64 (RFC 4648, with padding) of `bytes`, and back (nullopt on any character outside the
/// alphabet or a bad length). Used for the source .anim in the exporter's extras.
std::string base64_encode(std::span<const std::uint8_t> bytes);
std::optional<std::vector<std::uint8_t>> base64_decode(std::string_view text);

/// The rig name table, used for node names the skeleton does not know (after its canonical names
/// and `aliases`): the control-bone names of Avastar-style rigs (Avastar's green bones, Bento
/// rigs that copy them), which are an SL bone's name without its leading "m" — `Torso` →
/// mTorso, `ShoulderLeft` → mShoulderLeft, `HandIndex1Left` → mHandIndex1Left, `FaceJaw` →
/// mFaceJaw, `Tail1` → mTail1, `Wing1Left`, `HindLimb1Left`, `Groin`... — for every SL bone but
/// mPelvis: Avastar's `Pelvis` control is reversed and hangs from `COG`, which carries the
/// body's motion, so neither matches mPelvis one to one (export the deform bones, docs/
/// creator-formats.md), and except names the skeleton itself resolves: `Chest`, `Neck`, `Skull`,
/// `Spine`… are SL attachment points (an .anim animates them by those names), never mChest...
/// A table name must match exactly (case too). In a file, a node named by
/// the table yields to a node that carries the joint's own name or alias (its channels are
/// ignored with a warning). Returns the joint, or −1. Thread-safe.
int rig_name_joint(const Skeleton& skeleton, std::string_view name);

/// Reads `path` (.glb, or .gltf with its buffers embedded or in files beside it) and converts
/// the chosen animation. Errors name the file and the JSON path (animations[a].channels[c],
/// accessors[i], nodes[n]...) and what was expected; nothing is returned on error.
Result<ImportResult> import_file(const std::string& path, const Skeleton& skeleton, const ImportOptions& options);

/// The same from bytes in memory: binary glTF when they start with the "glTF" magic, else glTF
/// JSON. `name` stands for the file in messages. External resources (buffer or image URIs that
/// are not data URIs) are never read: such a buffer is an error.
Result<ImportResult> import_bytes(std::span<const std::uint8_t> bytes, const std::string& name,
                                  const Skeleton& skeleton, const ImportOptions& options);

/// The text of `slanim info FILE.glb|.gltf`: one line for the file (nodes, skins, animations),
/// per animation its index, name, duration, channel and sampler counts by interpolation and the
/// animated nodes that are no SL joint, then the skin joints mapped to SL (through aliases named)
/// and not mapped. Errors: the file cannot be read or parsed.
Result<std::string> describe_file(const std::string& path, const Skeleton& skeleton);

}  // namespace slanim::gltf
