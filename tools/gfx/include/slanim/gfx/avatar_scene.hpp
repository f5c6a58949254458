// SPDX-License-Identifier: MIT
// Scene builders: fill a gfx::Scene from one avatar of a slanim::World — a generated body,
// the skeleton, which motion owns each joint, and the .anim constraint targets.
//
// Everything is in the avatar-root frame (X forward, Y left, Z up, metres), the frame of the
// World's model pose. The body is a replaceable input: the commands add GeneratedBody's meshes
// today; any other source of RenderMesh spans (for example the .llm meshes skinned on the CPU)
// can take its place without touching the overlays.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "slanim/core/skeleton.hpp"
#include "slanim/gfx/scene.hpp"
#include "slanim/runtime/motion_controller.hpp"
#include "slanim/runtime/world.hpp"

namespace slanim::gfx {

/// A simple body made of the skeleton's collision volumes — the ellipsoids the viewer uses for
/// collisions and for the .anim constraints (spec §4, §7.1: `scale` = radii in metres) — plus
/// small spheres for the eyes (mEyeLeft / mEyeRight when the skeleton has them). Each part is
/// rigidly attached to its joint. Built once per skeleton; update() rewrites the vertex arrays
/// in place (no allocation) from a model pose.
class GeneratedBody {
public:
    /// `rings` × `segments` facets per ellipsoid (≥ 3 each).
    explicit GeneratedBody(const Skeleton& skeleton, int rings = 10, int segments = 16);

    /// Poses every part from joint transforms in the avatar-root frame (one entry per skeleton
    /// joint; the World's ModelPose). Joints beyond the spans' sizes are left where they were.
    void update(std::span<const Vec3> model_positions, std::span<const Quat> model_rotations);
    /// The body meshes (skin, then eyes), valid until the next update() or destruction.
    [[nodiscard]] std::span<const RenderMesh> meshes() const { return meshes_; }
    /// Number of ellipsoid parts (collision volumes + eyes).
    [[nodiscard]] int num_parts() const { return static_cast<int>(parts_.size()); }

private:
    struct Part {
        int joint = -1;
        Vec3 radii;
        bool eye = false;
    };
    std::vector<Part> parts_;
    std::vector<Vec3> unit_;  // unit-sphere vertices (also their normals)
    std::vector<std::uint32_t> unit_indices_;
    std::vector<Vec3> body_pos_, body_nrm_, eye_pos_, eye_nrm_;
    std::vector<std::uint32_t> body_idx_, eye_idx_;
    std::vector<RenderMesh> meshes_;
};

/// Colours of the overlays (chosen to read on the default background).
namespace palette {
inline constexpr Rgba kSkeleton{0.95f, 0.85f, 0.35f, 1.f};
inline constexpr Rgba kUnowned{0.55f, 0.55f, 0.58f, 1.f};
inline constexpr Rgba kText{0.92f, 0.92f, 0.92f, 1.f};
inline constexpr Rgba kTarget{0.25f, 0.80f, 1.f, 1.f};   ///< constraint target point / plane
inline constexpr Rgba kGoal{1.f, 1.f, 1.f, 1.f};         ///< lerp(source, target, weight)
inline constexpr Rgba kApplied{0.20f, 0.95f, 0.35f, 1.f};     ///< solved, reachable
inline constexpr Rgba kUnreachable{1.f, 0.25f, 0.25f, 1.f};   ///< solved, not reachable
inline constexpr Rgba kZeroWeight{1.f, 0.80f, 0.15f, 1.f};    ///< in its window, weight 0
inline constexpr Rgba kInactive{0.60f, 0.60f, 0.60f, 1.f};    ///< masked / outside its window
/// The colour of owner number i (a fixed 10-colour cycle).
Rgba owner_colour(int i);
}  // namespace palette

/// Which evaluated motion owns each joint this frame: slanim::compute_joint_owners
/// (slanim/runtime/joint_owners.hpp, its rule), with a colour per owner for the overlay.
struct OwnerMap {
    struct Owner {
        std::string name;    ///< the clip's name (file stem for the commands)
        int base_priority = 0;
        int min_priority = 0, max_priority = 0;  ///< over the joints it owns
        int joints = 0;      ///< joints owned
        Rgba colour;
        const MotionInstance* instance = nullptr;
    };
    std::vector<Owner> owners;    ///< in the controller's order (newest first); owns ≥ 1 joint
    std::vector<int> joint_owner; ///< per skeleton joint: index in `owners`, or −1
    int unowned_bones = 0;        ///< bones (not volumes or attachments) without an owner
};
OwnerMap compute_owners(const MotionController& controller);

/// Overlay switches.
struct OverlayOptions {
    bool skeleton = false;     ///< bone lines and joint dots
    bool owners = false;       ///< skeleton coloured by owner, with a legend (implies bones)
    bool constraints = false;  ///< constraint source/target/goal points, with a legend
    float label_scale = 2.f;   ///< stb_easy_font scale of the legends
};

/// Bone lines (parent → child, bones only) and joint dots. Base bones are always drawn;
/// extended (Bento) bones only when a motion owns them (so an unused face, wings or tail do not
/// clutter the picture), thinner and smaller. Coloured `colour`, or by each child joint's owner
/// when `by_owner` (unowned base bones grey).
void add_skeleton(Scene& scene, const Skeleton& skeleton, const ModelPose& pose,
                  const OwnerMap& owners, bool by_owner, Rgba colour = palette::kSkeleton);

/// The owner legend: one line "name (priority N)" per owner in its colour (plus the range of
/// joint priorities when they differ from N and the number of joints), then "not animated".
/// Placed from pixel (x, y) down; returns the y below the last line.
float add_owner_legend(Scene& scene, const OwnerMap& owners, float x, float y, float scale);

/// The constraint targets of every evaluated motion, from MotionInstance::ik (its reports)
/// (written by the World's ik phase; root frame). Outcomes that carry geometry (applied, zero
/// weight, no position curve) draw: the target (a large cyan dot; a PLANE target adds a 0.2 m
/// square in the plane, its normal along target − source or the ground normal), the source
/// point before solving over it (coloured by state: green applied and reachable, red
/// unreachable, amber zero weight, grey no position curve), a line between them, and the goal
/// lerp(source, target, W) as a small white dot on top. Every constraint, including masked
/// and out-of-window ones, gets a legend line "motion #k SOURCE -> TARGET: outcome w=W err=E
/// mm" (oldest motion first, the ik phase's order). Legend from (x, y) down; returns the y
/// below the last line.
float add_constraints(Scene& scene, const MotionController& controller, const Skeleton& skeleton,
                      float x, float y, float scale);

/// Everything for one avatar: the given body meshes, the overlays `o` asks for, the ground at
/// the avatar's ground height. Legends start at the top-left corner.
void build_avatar_scene(Scene& scene, World& world, Entity avatar,
                        std::span<const RenderMesh> body, const OverlayOptions& o);

}  // namespace slanim::gfx
