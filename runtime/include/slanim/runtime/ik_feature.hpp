// SPDX-License-Identifier: MIT
// The .anim constraints in a World (slanim/ik/constraints.hpp, docs/ik.md): the solver settings
// every avatar uses (the world's, or its own), each avatar's ground plane, and the `constraints`
// system, which runs in the sample phase after keyframe_sampling: each evaluated motion's
// constraints act on its sampled joint states before the blend, against the pose the last
// step left (LLKeyframeMotion::onUpdate → applyConstraints). A feature of every World (IkFeature::of(world)).
#pragma once

#include <vector>

#include "slanim/ik/constraints.hpp"
#include "slanim/runtime/world.hpp"

namespace slanim {

namespace component {
inline constexpr const char* kIk = "ik_settings";  ///< solver settings and ground per avatar
}  // namespace component

class IkFeature final : public ComponentStore {
public:
    /// Registers the `constraints` system on `world` (the World does this for itself).
    explicit IkFeature(World& world);
    /// The world's IK feature.
    static IkFeature& of(World& world);
    static const IkFeature& of(const World& world);

    /// Every avatar uses the world's settings unless it has its own. Error (nothing changed)
    /// for settings the solvers reject: max_iterations < 1, or a tolerance that is negative or NaN.
    Status set_default_settings(const ik::IkSettings& s);
    [[nodiscard]] const ik::IkSettings& default_settings() const { return default_; }
    /// The avatar's own settings; errors as set_default_settings, and for an invalid handle.
    Status set_settings(Entity e, const ik::IkSettings& s);
    /// Drops the avatar's own settings (it follows the world's again). Precondition for this
    /// and the next three: a valid handle.
    void clear_settings(Entity e);
    /// The settings the avatar's ik phase uses.
    [[nodiscard]] const ik::IkSettings& settings(Entity e) const { return settings_at(world_.index_of(e)); }
    /// The ground of constraints with a GROUND target, in the avatar-root frame. Default:
    /// ik::default_ground(skeleton), the soles' plane of the rest pose.
    void set_ground(Entity e, const ik::GroundPlane& g) { ik_[world_.index_of(e)].ground = g; }
    [[nodiscard]] const ik::GroundPlane& ground(Entity e) const { return ik_[world_.index_of(e)].ground; }
    /// Measure each constraint solve (ConstraintReport::solve_us). Off by default.
    void set_timing(bool on) { timing_ = on; }

    [[nodiscard]] const ik::IkSettings& settings_at(std::size_t i) const { return ik_[i].own ? ik_[i].settings : default_; }
    [[nodiscard]] const ik::GroundPlane& ground_at(std::size_t i) const { return ik_[i].ground; }
    /// The `constraints` system's work for avatar i (public for tools that drive phases
    /// themselves): after MotionController::sample(scratch) and before blend(pose, scratch),
    /// applies the constraints of every evaluated motion, in update order, to its joint states
    /// in `scratch`, reading and temporarily changing the avatar's local pose (the previous
    /// step's result) as the viewer does with its LLJoints.
    void apply_constraints_at(std::size_t i, BlendScratch& scratch);

    // ComponentStore
    [[nodiscard]] const char* name() const override { return component::kIk; }
    void push(World& world, std::size_t i) override;
    void erase(World& world, std::size_t i, std::size_t last) override;
    [[nodiscard]] std::size_t bytes() const override { return ik_.size() * sizeof(Slot); }

private:
    struct Slot {
        bool own = false;
        ik::IkSettings settings;
        ik::GroundPlane ground;
    };
    std::vector<Slot> ik_;
    ik::IkSettings default_;
    bool timing_ = false;
    World& world_;
};

}  // namespace slanim
