// SPDX-License-Identifier: MIT
// `slanim convert IN.anim -o OUT.glb|OUT.gltf`: a decoded Motion as one glTF 2.0 animation on
// the SL skeleton as a glTF skin, optionally with the avatar base mesh skinned to it. See
// docs/creator-formats.md ("glTF 2.0 export").
//
// Axes: glTF is +Y up, +Z forward, +X left, metres. SL (X forward, Y left, Z up) maps to glTF
// (X, Y, Z) = (y, z, x) — a proper rotation (a cyclic permutation) — and quaternions the same
// way: (qx, qy, qz, qw)_SL → (qy, qz, qx, qw)_glTF. All data is written in glTF axes; there is
// no axis-changing root matrix.
//
// tinygltf is private to the .cpp (the CLI library links it; slanim::core/formats never do).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "mesh_export.hpp"
#include "slanim/core/math.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/result.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/gltf/axes.hpp"

namespace slanim {
class Appearance;  // slanim/runtime/appearance.hpp
}  // namespace slanim

namespace slanim::cli {

// The axis change (slanim/gltf/axes.hpp).
using gltf::gltf_to_sl;
using gltf::sl_to_gltf;

/// The glTF joints of a skeleton: joint 0 is "mRoot" (the avatar root, identity), then every
/// skeleton joint except HUD attachment points (their parent is the screen, not the avatar), in
/// skeleton index order (parents before children). The skin's `joints` array and the first
/// nodes of the file use this order.
struct GltfJointMap {
    std::vector<int> joint_of_skeleton;  ///< per skeleton joint: its glTF joint index, or −1 (HUD)
    std::vector<int> skeleton_of_joint;  ///< per glTF joint: the skeleton joint, −1 for mRoot
    /// glTF joint index of a skeleton joint index (−1 = the avatar root → 0), or −1.
    [[nodiscard]] int joint(int skeleton_joint) const {
        return skeleton_joint < 0 ? 0 : joint_of_skeleton[static_cast<std::size_t>(skeleton_joint)];
    }
};
GltfJointMap make_gltf_joint_map(const Skeleton& skeleton);

/// One mesh skinned to the glTF joints: the rest-pose (bind) vertices in the SL avatar-root frame
/// (SL axes; the encoder converts) and up to 4 influences per vertex (glTF joint indices, weights
/// summing to 1; unused slots have joint 0 and weight 0).
struct GltfSkinnedMesh {
    ExportMesh mesh;
    std::vector<std::array<std::uint16_t, 4>> joints;
    std::vector<std::array<float, 4>> weights;
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
                                                         const GltfJointMap& map);

/// What encode_gltf_animation writes.
struct GltfAnimationExport {
    const Skeleton* skeleton = nullptr;
    /// The rest local pose per skeleton joint (the skeleton's rest_* arrays, or the local pose of
    /// a shaped avatar at rest). Node TRS: translation = position ∘ the parent's scale (the
    /// viewer scales a child's offset by its parent's scale; scale is not inherited, so no node
    /// has a scale), rotation = rotation. Inverse bind matrices: the inverse of each joint's
    /// model transform from LocalToModelJob on this pose (avatar root at the origin).
    std::span<const Vec3> rest_positions;
    std::span<const Quat> rest_rotations;
    std::span<const Vec3> rest_scales;
    const Motion* motion = nullptr;
    std::string animation_name;               ///< the glTF animation's name
    std::span<const GltfSkinnedMesh> meshes;  ///< empty: the skeleton only
    std::string comment;                      ///< asset.extras.comment (empty: none)
    /// The .anim the motion was read from (empty: none), kept in the animation extras as base64
    /// (gltf::kSourceAnimKey) so that importing the file unchanged gives these bytes back.
    std::span<const std::uint8_t> source_anim;
};

/// What was written, for the command's report and the tests.
struct GltfExportReport {
    int nodes = 0, joints = 0, meshes = 0;
    int rotation_channels = 0, translation_channels = 0;
    /// Motion joints not written: unknown to the skeleton (the viewer keeps them as dummies
    /// that animate nothing), HUD attachment points, repeated joints (the first one is written).
    std::vector<std::string> skipped_joints;
};

/// The version of the animation `extras` object ("format": "slanim-anim").
inline constexpr int kGltfExtrasVersion = 1;

/// Encodes the skeleton as nodes + one skin, the meshes (when given) skinned to it, and the motion
/// as one animation (LINEAR samplers at the motion's own key times; a rotation channel per
/// joint with rotation keys, a translation channel per joint with position keys, the value
/// being the key ∘ the parent's rest scale: the key replaces the rest local position; mPelvis's
/// key is its offset from the avatar root). Rotations are normalised. The motion's header goes
/// to the animation's extras (docs/creator-formats.md). `format` is Gltf (JSON with the buffer
/// as a data URI) or Glb. Errors: no skeleton/motion, pose spans of the wrong size, non-finite
/// values, a motion with nothing to animate is fine (an animation with no channel cannot be
/// written: then no animation is written and the extras go to the scene).
Result<std::vector<std::uint8_t>> encode_gltf_animation(const GltfAnimationExport& in, MeshFormat format,
                                                        GltfExportReport* report = nullptr);

}  // namespace slanim::cli

namespace slanim::cli {

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
