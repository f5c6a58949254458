// SPDX-License-Identifier: MIT
// IK settings, ground and the constraints system (slanim/runtime/ik_feature.hpp).
#include "slanim/runtime/ik_feature.hpp"

#include <string>

#include "job_check.hpp"

namespace slanim {

IkFeature::IkFeature(World& world) : world_(world) {
    using namespace component;
    // In the sample phase, after keyframe_sampling (registered before this feature): each
    // motion's constraints act on its joint states before the blend, as in
    // LLKeyframeMotion::onUpdate.
    world.add_system({Phase::Sample, "constraints", {kSkeleton, kController, kIk, kJointStates, kLocalPose},
                      {kJointStates, kLocalPose, kController}, {},
                      [this](World&, std::size_t i, float, WorkerScratch& s) { apply_constraints_at(i, s.blend); }});
}

IkFeature& IkFeature::of(World& world) { return static_cast<IkFeature&>(*world.store(component::kIk)); }
const IkFeature& IkFeature::of(const World& world) { return static_cast<const IkFeature&>(*world.store(component::kIk)); }

void IkFeature::push(World& world, std::size_t i) { ik_.push_back({false, {}, ik::default_ground(world.skeleton_at(i))}); }

void IkFeature::erase(World&, std::size_t i, std::size_t last) {
    if (i != last) ik_[i] = ik_[last];
    ik_.pop_back();
}

namespace {
Status check(const ik::IkSettings& s) {
    if (s.max_iterations < 1) return Error{"IK settings: max_iterations " + std::to_string(s.max_iterations) + " is less than 1"};
    if (!(s.tolerance >= 0.f)) return Error{"IK settings: the tolerance must be a number ≥ 0"};
    return {};
}
}  // namespace

Status IkFeature::set_default_settings(const ik::IkSettings& s) {
    Status st = check(s);
    if (st) default_ = s;
    return st;
}

Status IkFeature::set_settings(Entity e, const ik::IkSettings& s) {
    const std::size_t d = world_.index_of(e);
    if (d == kNoIndex) return Error{"IK settings: invalid avatar handle"};
    Status st = check(s);
    if (!st) return st;
    ik_[d].own = true;
    ik_[d].settings = s;
    return st;
}

void IkFeature::clear_settings(Entity e) { ik_[world_.index_of(e)].own = false; }

void IkFeature::apply_constraints_at(std::size_t i, BlendScratch& scratch) {
    const ik::IkSettings& settings = settings_at(i);
    if (!settings.enabled) return;
    MotionController& mc = world_.controller_at(i);
    // In update order (LLMotionController::updateMotionsByType): what one motion's constraint
    // leaves on the live pose is what the next one reads, as with the viewer's LLJoints.
    for (MotionInstance* m : mc.evaluated()) {
        if (m->custom || !m->ik) continue;
        const std::size_t tracks = m->clip->tracks().size();
        ik::ApplyConstraintsJob job;
        job.skeleton = &world_.skeleton_at(i);
        job.constraints = m->ik->constraints.constraints;
        job.states = m->ik->states;
        job.base_priority = m->clip->base_priority();
        job.time = m->curve_time;
        job.last_update_time = m->last_update_time;
        job.joint_mask = m->ik->joint_mask;
        job.clip = m->clip.get();
        job.state_rotations = std::span<Quat>(scratch.rotations).subspan(m->state_offset, tracks);
        job.state_positions = std::span<Vec3>(scratch.positions).subspan(m->state_offset, tracks);
        job.frame_dt = mc.frame_dt();
        job.pixel_area = mc.pixel_area();
        job.ground = ik_[i].ground;
        job.settings = settings;
        job.joints = world_.local_pose_at(i);  // as the last step left it: the viewer's LLJoints
        job.reports = m->ik->reports;
        job.time_solves = timing_;
        detail::require_ran(job.run(), "ik::ApplyConstraintsJob (a motion's constraints)");
    }
}

}  // namespace slanim
