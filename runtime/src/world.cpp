// SPDX-License-Identifier: MIT
#include "slanim/runtime/world.hpp"

#include "slanim/core/local_to_model.hpp"
#include "slanim/runtime/appearance.hpp"

namespace slanim {

namespace {
constexpr std::uint32_t kIndexBits = 20;
constexpr std::uint32_t kIndexMask = (1u << kIndexBits) - 1u;
constexpr std::uint32_t kNoDense = 0xFFFFFFFFu;

void update_model_pose(const Skeleton& skeleton, const LocalPose& lp, ModelPose& mp) {
    LocalToModelJob job;
    job.skeleton = &skeleton;
    job.local_positions = lp.positions;
    job.local_rotations = lp.rotations;
    job.local_scales = lp.scales;
    job.model_positions = mp.positions;
    job.model_rotations = mp.rotations;
    job.run();
}
}  // namespace

const char* phase_name(Phase p) {
    switch (p) {
        case Phase::Ingest: return "ingest";
        case Phase::Control: return "control";
        case Phase::Sample: return "sample";
        case Phase::Blend: return "blend";
        case Phase::Ik: return "ik";
        case Phase::LocalToModel: return "local_to_model";
        case Phase::Morph: return "morph";
        case Phase::Skin: return "skin";
    }
    return "?";
}

World::World() {
    using namespace component;
    add_system({Phase::Control, "motion_control", {kSkeleton}, {kController},
                [](World& w, float dt) {
                    for (std::size_t i = 0; i < w.size(); ++i) w.controller_at(i).control(dt);
                }});
    add_system({Phase::Sample, "keyframe_sampling", {kController}, {kController},
                [](World& w, float) {
                    for (std::size_t i = 0; i < w.size(); ++i) w.controller_at(i).sample();
                }});
    add_system({Phase::Blend, "pose_blend", {kController}, {kLocalPose},
                [](World& w, float) {
                    for (std::size_t i = 0; i < w.size(); ++i)
                        w.controller_at(i).blend(w.local_pose_at(i).view());
                }});
    add_system({Phase::Ik, "constraints", {kSkeleton, kController, kIk}, {kLocalPose, kController},
                [](World& w, float) {
                    for (std::size_t i = 0; i < w.size(); ++i) w.apply_constraints_at(i);
                }});
    add_system({Phase::LocalToModel, "local_to_model", {kSkeleton, kLocalPose}, {kModelPose},
                [](World& w, float) {
                    for (std::size_t i = 0; i < w.size(); ++i)
                        update_model_pose(w.skeleton_at(i), w.local_pose_at(i), w.model_pose_at(i));
                }});
}

Entity World::create_avatar(std::shared_ptr<const Skeleton> skeleton) {
    std::uint32_t index;
    if (!free_.empty()) {
        index = free_.back();
        free_.pop_back();
    } else {
        index = static_cast<std::uint32_t>(sparse_.size());
        sparse_.push_back(kNoDense);
        generation_.push_back(0);
    }
    const Entity e = index | (generation_[index] << kIndexBits);
    sparse_[index] = static_cast<std::uint32_t>(controllers_.size());
    dense_to_entity_.push_back(e);

    const auto n = static_cast<std::size_t>(skeleton->num_joints());
    LocalPose lp;
    lp.positions.assign(skeleton->rest_positions().begin(), skeleton->rest_positions().end());
    lp.rotations.assign(skeleton->rest_rotations().begin(), skeleton->rest_rotations().end());
    lp.scales.assign(skeleton->rest_scales().begin(), skeleton->rest_scales().end());
    ModelPose mp;
    mp.positions.resize(n);
    mp.rotations.resize(n);
    update_model_pose(*skeleton, lp, mp);

    controllers_.push_back(std::make_unique<MotionController>(skeleton));
    skeletons_.push_back(std::move(skeleton));
    local_.push_back(std::move(lp));
    model_.push_back(std::move(mp));
    ik_.push_back({false, {}, ik::default_ground(*skeletons_.back())});
    appearance_.emplace_back();
    return e;
}

void World::apply_constraints_at(std::size_t i) {
    const ik::IkSettings& settings = ik_settings_at(i);
    if (!settings.enabled) return;
    MotionController& mc = *controllers_[i];
    const auto active = mc.active();
    // Oldest first, so the newest motion's constraints act last on a shared chain.
    for (std::size_t k = active.size(); k-- > 0;) {
        MotionInstance& m = *active[k];
        if (!m.evaluate || m.constraints.constraints.empty()) continue;
        ik::ApplyConstraintsJob job;
        job.skeleton = skeletons_[i].get();
        job.constraints = m.constraints.constraints;
        job.states = m.constraint_states;
        job.base_priority = m.clip->base_priority();
        job.time = m.curve_time;
        job.last_update_time = m.last_update_time;
        job.joint_mask = m.joint_mask;
        job.pose_weight = m.pose_weight;
        job.clip = m.clip.get();
        job.frame_dt = mc.frame_dt();
        job.pixel_area = mc.pixel_area();
        job.ground = ik_[i].ground;
        job.settings = settings;
        job.pose = local_[i].view();
        job.reports = m.constraint_reports;
        job.time_solves = ik_timing_;
        job.run();
    }
}

void World::set_ik_settings(Entity e, const ik::IkSettings& s) {
    IkComponent& c = ik_[dense_index(e)];
    c.own = true;
    c.settings = s;
}
void World::clear_ik_settings(Entity e) { ik_[dense_index(e)].own = false; }
const ik::IkSettings& World::ik_settings(Entity e) const { return ik_settings_at(dense_index(e)); }
void World::set_ground(Entity e, const ik::GroundPlane& g) { ik_[dense_index(e)].ground = g; }
const ik::GroundPlane& World::ground(Entity e) const { return ik_[dense_index(e)].ground; }

bool World::set_appearance(Entity e, std::shared_ptr<Appearance> appearance) {
    const std::uint32_t d = dense_index(e);
    if (d == kNoDense) return false;
    if (appearance && appearance->model().skeleton().num_joints() != skeletons_[d]->num_joints())
        return false;
    if (appearance && !appearance_systems_) {
        detail::add_appearance_systems(*this);
        appearance_systems_ = true;
    }
    appearance_[d] = std::move(appearance);
    return true;
}

Appearance* World::appearance(Entity e) const {
    const std::uint32_t d = dense_index(e);
    return d == kNoDense ? nullptr : appearance_[d].get();
}

std::uint32_t World::dense_index(Entity e) const {
    const std::uint32_t index = e & kIndexMask;
    if (e == kNullEntity || index >= sparse_.size()) return kNoDense;
    if (generation_[index] != (e >> kIndexBits)) return kNoDense;
    return sparse_[index];
}

bool World::valid(Entity e) const { return dense_index(e) != kNoDense; }

bool World::destroy(Entity e) {
    const std::uint32_t d = dense_index(e);
    if (d == kNoDense) return false;
    const std::uint32_t last = static_cast<std::uint32_t>(controllers_.size() - 1);
    if (d != last) {  // swap-remove keeps the arrays dense
        skeletons_[d] = std::move(skeletons_[last]);
        controllers_[d] = std::move(controllers_[last]);
        local_[d] = std::move(local_[last]);
        model_[d] = std::move(model_[last]);
        ik_[d] = ik_[last];
        appearance_[d] = std::move(appearance_[last]);
        dense_to_entity_[d] = dense_to_entity_[last];
        sparse_[dense_to_entity_[d] & kIndexMask] = d;
    }
    skeletons_.pop_back();
    controllers_.pop_back();
    local_.pop_back();
    model_.pop_back();
    ik_.pop_back();
    appearance_.pop_back();
    dense_to_entity_.pop_back();
    const std::uint32_t index = e & kIndexMask;
    sparse_[index] = kNoDense;
    generation_[index] = (generation_[index] + 1) & (0xFFFFFFFFu >> kIndexBits);
    free_.push_back(index);
    return true;
}

MotionController& World::controller(Entity e) { return *controllers_[dense_index(e)]; }
const Skeleton& World::skeleton(Entity e) const { return *skeletons_[dense_index(e)]; }
LocalPose& World::local_pose(Entity e) { return local_[dense_index(e)]; }
const ModelPose& World::model_pose(Entity e) const { return model_[dense_index(e)]; }

void World::add_system(System s) { systems_[static_cast<int>(s.phase)].push_back(std::move(s)); }

std::vector<const System*> World::schedule() const {
    std::vector<const System*> out;
    for (const auto& phase : systems_)
        for (const auto& s : phase) out.push_back(&s);
    return out;
}

void World::step(float dt) {
    for (auto& phase : systems_)
        for (auto& s : phase) s.run(*this, dt);
}

}  // namespace slanim
