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

struct ImportOptions {
    /// The animation: a name, or an index when all digits; empty = animation 0.
    std::string animation;
    /// Header overrides (they beat the exporter's `extras`) and skip_unknown_joints.
    BvhImportOptions import;
};

struct ImportResult {
    Motion motion;                      ///< not yet quantized
    std::vector<std::string> warnings;  ///< skipped joints, ignored channels, retargeted joints
};

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
