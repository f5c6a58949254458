// SPDX-License-Identifier: MIT
// `slanim convert IN.glb|IN.gltf -o OUT.anim` and `slanim info FILE.glb`: the command side of the
// glTF import, whose mapping is the slanim::gltf module (slanim/gltf/import.hpp). See
// docs/creator-formats.md ("glTF 2.0 import").
#pragma once

#include <iosfwd>
#include <string>

#include "slanim/core/skeleton.hpp"
#include "slanim/gltf/import.hpp"

namespace slanim::cli {

using GltfImportOptions = gltf::ImportOptions;
using GltfImportResult = gltf::ImportResult;
inline constexpr float kGltfSampleFps = gltf::kSampleFps;
using gltf::import_file;

/// `slanim convert IN.glb|IN.gltf -o OUT.anim`: import, validate like an upload, write atomically.
/// Returns 0, 1 (failure; no output written) or 2 (usage).
int convert_gltf_to_anim(std::ostream& err, const std::string& input, const std::string& output,
                         const GltfImportOptions& options);

/// `slanim info FILE.glb|.gltf` (gltf::describe_file on `out`). Returns 0 or 1.
int info_gltf(std::ostream& out, std::ostream& err, const std::string& path, const Skeleton& skeleton);

}  // namespace slanim::cli
