// SPDX-License-Identifier: MIT
// glTF 2.0 export of a decoded Motion: the SL skeleton as nodes + one skin, optionally meshes
// skinned to it, and the motion as one animation; what `slanim convert IN.anim -o OUT.glb|.gltf`
// writes (tools/slanim/gltf_export.* adds the avatar mesh of a character folder on top) and what
// `slanim_anim_to_glb` (slanim_gltf.h) returns. See docs/creator-formats.md ("glTF 2.0 export").
//
// Axes: all data is written in glTF axes (slanim/gltf/axes.hpp: SL (x, y, z) → glTF (y, z, x)),
// metres and seconds; there is no axis-changing root matrix. tinygltf stays private to the .cpp.
// Every function is pure (no global state): thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slanim/core/math.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/result.hpp"
#include "slanim/core/skeleton.hpp"

namespace slanim::gltf {

/// The glTF joints of a skeleton: joint 0 is "mRoot" (the avatar root, identity), then every
/// skeleton joint except HUD attachment points (their parent is the screen, not the avatar), in
/// skeleton index order (parents before children). The skin's `joints` array and the first
/// nodes of the file use this order.
struct JointMap {
    std::vector<int> joint_of_skeleton;  ///< per skeleton joint: its glTF joint index, or −1 (HUD)
    std::vector<int> skeleton_of_joint;  ///< per glTF joint: the skeleton joint, −1 for mRoot
    /// glTF joint index of a skeleton joint index (−1 = the avatar root → 0), or −1.
    [[nodiscard]] int joint(int skeleton_joint) const {
        return skeleton_joint < 0 ? 0 : joint_of_skeleton[static_cast<std::size_t>(skeleton_joint)];
    }
};
JointMap make_joint_map(const Skeleton& skeleton);

/// `v` normalised in double, as the encoder writes normals; a zero or non-finite vector gives
/// (0, 0, 1) (glTF requires unit normals).
Vec3 unit_normal(Vec3 v);

/// One mesh skinned to the glTF joints (a view: the arrays belong to the caller). Rest-pose
/// (bind) vertices in the SL avatar-root frame, metres (SL axes; the encoder converts), normals
/// (normalised by the encoder) and texture coordinates (OpenGL convention, v up; the encoder
/// flips v to glTF's top-left origin) either empty or one per vertex; up to 4 influences per
/// vertex (glTF joint indices, weights summing to 1; unused slots have joint 0 and weight 0).
struct SkinnedMesh {
    std::string_view name;  ///< the mesh and node name, e.g. "headMesh"
    std::span<const Vec3> positions;
    std::span<const Vec3> normals;
    std::span<const Vec2> texcoords;
    std::span<const std::array<std::uint32_t, 3>> faces;  ///< triangles (vertex indices)
    std::span<const std::array<std::uint16_t, 4>> joints;
    std::span<const std::array<float, 4>> weights;
};

/// What encode_animation writes.
struct AnimationExport {
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
    std::string animation_name;           ///< the glTF animation's name
    std::span<const SkinnedMesh> meshes;  ///< empty: the skeleton only
    std::string comment;                  ///< asset.extras.comment (empty: none)
    /// The .anim the motion was read from (empty: none), kept in the animation extras as base64
    /// (gltf::kSourceAnimKey) so that importing the file unchanged gives these bytes back.
    std::span<const std::uint8_t> source_anim;
};

/// What was written, for the command's report and the tests.
struct ExportReport {
    int nodes = 0, joints = 0, meshes = 0;
    int rotation_channels = 0, translation_channels = 0;
    /// Motion joints not written: unknown to the skeleton (the viewer keeps them as dummies
    /// that animate nothing), HUD attachment points, repeated joints (the first one is written).
    std::vector<std::string> skipped_joints;
};

/// The version of the animation `extras` object ("format": "slanim-anim").
inline constexpr int kExtrasVersion = 1;

/// The container: glTF JSON with the buffer as a base64 data URI, or binary glTF (.glb).
enum class FileFormat : std::uint8_t { Gltf, Glb };

/// Encodes the skeleton as nodes + one skin, the meshes (when given) skinned to it, and the
/// motion as one animation (LINEAR samplers at the motion's own key times, plus keys sampling
/// the viewer's slerp where it takes the long way (viewer_slerp_keys); a rotation channel per
/// joint with rotation keys, a translation channel per joint with position keys, the value
/// being the key ∘ the parent's rest scale: the key replaces the rest local position;
/// mPelvis's key is its offset from the avatar root). Rotations are normalised. The motion's
/// header goes to the animation's extras (docs/creator-formats.md). Errors: no
/// skeleton/motion, pose spans of the wrong size, non-finite values, key times not increasing,
/// mesh arrays of the wrong size or indices out of range. A motion with nothing to animate is
/// fine (an animation with no channel cannot be written: then no animation is written and the
/// extras go to the scene). `report` (optional) receives what was written.
Result<std::vector<std::uint8_t>> encode_animation(const AnimationExport& in, FileFormat format,
                                                   ExportReport* report = nullptr);

/// asset.extras.comment of `slanim convert FILE -o OUT.glb`: "slanim convert FILE: SL skeleton
/// (CHARACTER_DIR, or "embedded default" when empty), no mesh" (or "avatar base mesh skinned to
/// it" when `with_mesh`). `file_name`: the input's file name without its folder.
std::string convert_comment(std::string_view file_name, std::string_view character_dir, bool with_mesh);

/// The export `slanim convert FILE -o OUT.glb` makes without a character folder: `motion`
/// (decoded on `skeleton`) at the skeleton's rest pose, no mesh, the animation named after
/// `file_name`'s stem, convert_comment(file_name, "", false), `source_anim` as given (the .anim
/// bytes, or empty). The spans point into `skeleton`, `motion` and `source_anim`, which must
/// outlive the result. `file_name`: the input's file name without its folder (UTF-8).
AnimationExport convert_export(const Skeleton& skeleton, const Motion& motion, std::string_view file_name,
                               std::span<const std::uint8_t> source_anim);

}  // namespace slanim::gltf
