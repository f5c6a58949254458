// SPDX-License-Identifier: MIT
// The ECS-like world: avatars are entities, components live in dense arrays, and systems run in
// named phases in one fixed order:
//
//     ingest → control → sample → blend → ik → local_to_model → morph → skin
//
// `control`, `sample`, `blend`, `ik` (the .anim constraints, slanim/ik/constraints.hpp) and
// `local_to_model` are built in; `ingest` (puppetry) is filled by later modules through
// add_system(); `morph` and `skin` get their systems when the first avatar receives an
// Appearance (slanim/runtime/appearance.hpp: visual params, hand poses, emotes, skinning). Every system
// declares the components it reads and writes, and phases() lists them in one visible place.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "slanim/core/math.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/runtime/motion_controller.hpp"

namespace slanim {

/// An avatar handle: index in the low 20 bits, generation above (stale handles are detected).
using Entity = std::uint32_t;
inline constexpr Entity kNullEntity = 0xFFFFFFFFu;

enum class Phase : std::uint8_t { Ingest, Control, Sample, Blend, Ik, LocalToModel, Morph, Skin };
inline constexpr int kNumPhases = 8;
/// "ingest", "control", ...
const char* phase_name(Phase p);

/// Component names used in system declarations.
namespace component {
inline constexpr const char* kSkeleton = "skeleton";
inline constexpr const char* kController = "motion_controller";
inline constexpr const char* kLocalPose = "local_pose";
inline constexpr const char* kModelPose = "model_pose";
inline constexpr const char* kIk = "ik_settings";  ///< solver settings and ground per avatar
inline constexpr const char* kAppearance = "appearance";  ///< optional, see Appearance
}  // namespace component

class World;
class Appearance;

/// A system: a function over all avatars, run once per step in its phase.
struct System {
    Phase phase = Phase::Control;
    std::string name;
    std::vector<std::string> reads, writes;  ///< component names
    std::function<void(World&, float dt)> run;
};

/// Local pose component (parent frame, metres).
struct LocalPose {
    std::vector<Vec3> positions, scales;
    std::vector<Quat> rotations;
    [[nodiscard]] LocalPoseView view() { return {positions, rotations, scales}; }
};
/// Model pose component: joint transforms in the avatar-root frame (X forward, Y left, Z up).
struct ModelPose {
    std::vector<Vec3> positions;
    std::vector<Quat> rotations;
};

class World {
public:
    World();

    /// Creates an avatar in its rest pose (pelvis at the root origin).
    Entity create_avatar(std::shared_ptr<const Skeleton> skeleton);
    /// Destroys an avatar; its handle becomes invalid. Returns false for an invalid handle.
    bool destroy(Entity e);
    [[nodiscard]] bool valid(Entity e) const;
    [[nodiscard]] std::size_t size() const { return controllers_.size(); }

    // Component access (precondition: valid(e)).
    MotionController& controller(Entity e);
    [[nodiscard]] const Skeleton& skeleton(Entity e) const;
    /// The avatar's shared skeleton (for components that keep it, e.g. puppetry playback).
    [[nodiscard]] const std::shared_ptr<const Skeleton>& skeleton_ptr(Entity e) const {
        return skeletons_[dense_index(e)];
    }
    LocalPose& local_pose(Entity e);
    [[nodiscard]] const ModelPose& model_pose(Entity e) const;

    /// IK settings: every avatar uses the world's settings unless it has its own.
    void set_default_ik_settings(const ik::IkSettings& s) { default_ik_ = s; }
    [[nodiscard]] const ik::IkSettings& default_ik_settings() const { return default_ik_; }
    void set_ik_settings(Entity e, const ik::IkSettings& s);
    /// Drops the avatar's own settings (it follows the world's again).
    void clear_ik_settings(Entity e);
    /// The settings the avatar's ik phase uses.
    [[nodiscard]] const ik::IkSettings& ik_settings(Entity e) const;
    /// The ground of constraints with a GROUND target, in the avatar-root frame. Default:
    /// ik::default_ground(skeleton), the soles' plane of the rest pose.
    void set_ground(Entity e, const ik::GroundPlane& g);
    [[nodiscard]] const ik::GroundPlane& ground(Entity e) const;
    /// Gives the avatar an appearance component (visual params, morphs, skinning; one per
    /// avatar, not shared), replacing any; a null pointer removes it. The first one registers
    /// the `morph` and `skin` systems. Returns false for an invalid handle or an appearance
    /// built for a skeleton with a different joint count.
    bool set_appearance(Entity e, std::shared_ptr<Appearance> appearance);
    /// The avatar's appearance, or nullptr (also for an invalid handle).
    [[nodiscard]] Appearance* appearance(Entity e) const;
    /// Measure each constraint solve (ConstraintReport::solve_us). Off by default.
    void set_ik_timing(bool on) { ik_timing_ = on; }

    // Dense iteration for systems: index i in [0, size()).
    MotionController& controller_at(std::size_t i) { return *controllers_[i]; }
    LocalPose& local_pose_at(std::size_t i) { return local_[i]; }
    ModelPose& model_pose_at(std::size_t i) { return model_[i]; }
    [[nodiscard]] const Skeleton& skeleton_at(std::size_t i) const { return *skeletons_[i]; }
    [[nodiscard]] Entity entity_at(std::size_t i) const { return dense_to_entity_[i]; }
    [[nodiscard]] const ik::IkSettings& ik_settings_at(std::size_t i) const {
        return ik_[i].own ? ik_[i].settings : default_ik_;
    }
    [[nodiscard]] const ik::GroundPlane& ground_at(std::size_t i) const { return ik_[i].ground; }
    [[nodiscard]] Appearance* appearance_at(std::size_t i) const { return appearance_[i].get(); }

    /// Adds a system at the end of its phase.
    void add_system(System s);
    /// Every system in run order.
    [[nodiscard]] std::vector<const System*> schedule() const;

    /// Runs every phase once. dt in seconds (0 evaluates the current time again).
    void step(float dt);

    /// The built-in ik system's work for one avatar (public for tools that drive phases
    /// themselves): applies the constraints of every evaluated motion, oldest first.
    void apply_constraints_at(std::size_t i);

private:
    std::vector<System> systems_[kNumPhases];
    // Dense component arrays (same index for the same avatar).
    std::vector<std::shared_ptr<const Skeleton>> skeletons_;
    std::vector<std::unique_ptr<MotionController>> controllers_;
    std::vector<LocalPose> local_;
    std::vector<ModelPose> model_;
    struct IkComponent {
        bool own = false;
        ik::IkSettings settings;
        ik::GroundPlane ground;
    };
    std::vector<IkComponent> ik_;
    std::vector<std::shared_ptr<Appearance>> appearance_;  // null: no appearance
    bool appearance_systems_ = false;
    ik::IkSettings default_ik_;
    bool ik_timing_ = false;
    std::vector<Entity> dense_to_entity_;
    // Sparse side: entity index → dense index, generation per slot.
    std::vector<std::uint32_t> sparse_;
    std::vector<std::uint32_t> generation_;
    std::vector<std::uint32_t> free_;
    [[nodiscard]] std::uint32_t dense_index(Entity e) const;
};

}  // namespace slanim
