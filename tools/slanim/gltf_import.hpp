// SPDX-License-Identifier: MIT
// `slanim convert IN.glb|IN.gltf -o OUT.anim`: one glTF 2.0 animation of a skinned armature to
// a Motion, and `slanim info` for glTF files. See docs/creator-formats.md ("glTF 2.0 import").
//
// Nodes map to SL joints by name (Skeleton::find: canonical names and aliases). Axes: glTF
// (X, Y, Z) → SL (z, x, y) (gltf_to_sl, the inverse of the exporter's mapping), quaternions the
// same way. tinygltf is private to the .cpp.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "slanim/core/motion.hpp"
#include "slanim/core/result.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/bvh_import.hpp"

namespace slanim::cli {

/// The sampling rate of STEP and CUBICSPLINE samplers (LINEAR keeps its key times).
inline constexpr float kGltfSampleFps = 30.f;

struct GltfImportOptions {
    /// --animation: a name, or an index when all digits; empty = animation 0.
    std::string animation;
    /// Header overrides (they beat the exporter's `extras`) and skip_unknown_joints.
    BvhImportOptions import;
};

struct GltfImportResult {
    Motion motion;                      ///< not yet quantized
    std::vector<std::string> warnings;  ///< skipped joints, ignored channels, retargeted joints
};

/// Reads `path` (.glb or .gltf) and converts the chosen animation. Errors name the file and the
/// JSON path (animations[a].channels[c], accessors[i]...).
Result<GltfImportResult> import_gltf_file(const std::string& path, const Skeleton& skeleton,
                                          const GltfImportOptions& options);

/// `slanim convert IN.glb|IN.gltf -o OUT.anim`: import, validate like an upload, write atomically.
/// Returns 0, 1 (failure; no output written) or 2 (usage).
int convert_gltf_to_anim(std::ostream& err, const std::string& input, const std::string& output,
                         const GltfImportOptions& options);

/// `slanim info FILE.glb|.gltf`: animations (name, duration, channels, sampler interpolations)
/// and the nodes mapped / not mapped to SL joints. Returns 0 or 1.
int info_gltf(std::ostream& out, std::ostream& err, const std::string& path, const Skeleton& skeleton);

}  // namespace slanim::cli
