// SPDX-License-Identifier: MIT
// `slanim convert IN.anim -o OUT.glb|OUT.gltf`: a decoded Motion as one glTF 2.0 animation on
// the SL skeleton as a glTF skin, optionally with the avatar base mesh of a character folder
// skinned to it. The encoder is slanim::gltf's (slanim/gltf/export.hpp, shared with the C API's
// slanim_anim_to_glb); this adds the character folder's shaped rest pose and meshes. See
// docs/creator-formats.md ("glTF 2.0 export").
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "mesh_export.hpp"
#include "slanim/core/result.hpp"
#include "slanim/gltf/axes.hpp"
#include "slanim/gltf/export.hpp"

namespace slanim {
class Appearance;  // slanim/runtime/appearance.hpp
}  // namespace slanim

namespace slanim::cli {

// The axis change (slanim/gltf/axes.hpp).
using gltf::gltf_to_sl;
using gltf::sl_to_gltf;

/// One mesh skinned to the glTF joints (gltf::SkinnedMesh owns nothing; this owns its arrays):
/// the rest-pose (bind) vertices in the SL avatar-root frame (SL axes; the encoder converts) and
/// up to 4 influences per vertex (glTF joint indices, weights summing to 1; unused slots have
/// joint 0 and weight 0).
struct GltfSkinnedMesh {
    ExportMesh mesh;
    std::vector<std::array<std::uint16_t, 4>> joints;
    std::vector<std::array<float, 4>> weights;
    /// The view gltf::encode_animation reads (valid while this mesh lives and is unchanged).
    [[nodiscard]] gltf::SkinnedMesh view() const;
};

/// The skinned meshes of an Appearance whose skinned vertices are in the rest pose (a world
/// stepped once with no motion): positions/normals/texcoords from `snapshot` (captured from
/// `appearance`), influences from the SL weights: a weight w gives the entry pair
/// (floor(w), floor(w) + 1 clamped to the list) with weights (1 − f, f), f = w − floor(w)
/// (docs/skinning.md); the pair's joints become glTF joints, the same joint twice is merged and
/// the weights are normalised to sum 1. Rigid meshes (the eyeballs) ride their one joint with
/// weight 1. Zero normals become (0, 0, 1) SL (glTF requires unit normals). Errors: a weight
/// that is not finite or negative, a joint the map does not have.
Result<std::vector<GltfSkinnedMesh>> gltf_skinned_meshes(const Appearance& appearance,
                                                         const SkinnedMeshSnapshot& snapshot,
                                                         const gltf::JointMap& map);

/// `slanim convert IN.anim -o OUT.glb|OUT.gltf` options.
struct GltfConvertOptions {
    std::string input, output;
    std::string character;               ///< --character DIR (skeleton + mesh); empty: embedded skeleton
    std::vector<std::string> wearables;  ///< --wearable FILE... (need --character, not with --no-mesh)
    bool no_mesh = false;                ///< --no-mesh: the skeleton and the animation only
};

/// Runs the conversion: loads the motion (the viewer's rules), the skeleton (pick_skeleton) and,
/// unless no_mesh or without a character folder (then a note on `err`: skeleton only), the
/// appearance shaped by the wearables in a world stepped once at rest; encodes and writes OUT
/// atomically. Returns 0, 1 (a failure: unreadable or invalid input, missing character files,
/// unwritable output — no file is left behind) or 2 (usage: --wearable without --character or
/// with --no-mesh, an output extension other than .glb/.gltf, an input other than .anim).
int convert_anim_to_gltf(std::ostream& err, const GltfConvertOptions& options);

}  // namespace slanim::cli
