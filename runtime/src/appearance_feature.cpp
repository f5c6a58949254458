// SPDX-License-Identifier: MIT
// Appearances per avatar and their systems (slanim/runtime/appearance_feature.hpp).
#include "slanim/runtime/appearance_feature.hpp"

#include "slanim/runtime/appearance.hpp"
#include "slanim/runtime/attachment_overrides.hpp"

namespace slanim {

AppearanceFeature& AppearanceFeature::of(World& world) {
    return static_cast<AppearanceFeature&>(*world.store(component::kAppearance));
}
const AppearanceFeature& AppearanceFeature::of(const World& world) {
    return static_cast<const AppearanceFeature&>(*world.store(component::kAppearance));
}

void AppearanceFeature::erase(World&, std::size_t i, std::size_t last) {
    if (i != last) appearance_[i] = std::move(appearance_[last]);
    appearance_.pop_back();
}

bool AppearanceFeature::set(Entity e, std::shared_ptr<Appearance> appearance) {
    const std::size_t d = world_.index_of(e);
    if (d == kNoIndex) return false;
    if (appearance && appearance->model().skeleton().num_joints() != world_.skeleton_at(d).num_joints()) return false;
    if (appearance && !systems_) {
        add_systems();
        systems_ = true;
    }
    if (appearance) world_.own_scales_at(d);  // skeletal visual params scale joints
    appearance_[d] = std::move(appearance);
    return true;
}

Appearance* AppearanceFeature::get(Entity e) const {
    const std::size_t d = world_.index_of(e);
    return d == kNoIndex ? nullptr : appearance_[d].get();
}

// Appearances are reached through pointers: each level is fetched one avatar before the next
// level is read (the object three ahead, its mesh array two ahead, what that array points to one
// ahead), so following them does not stall.
void AppearanceFeature::prefetch_after(std::size_t i) const {
    const std::size_t end = appearance_.size();
    if (i + 3 < end)
        if (const Appearance* a = appearance_[i + 3].get()) {
            __builtin_prefetch(a, 0, 3);
            __builtin_prefetch(reinterpret_cast<const char*>(a) + 64, 0, 3);
            __builtin_prefetch(reinterpret_cast<const char*>(a) + 128, 0, 3);
        }
    if (i + 2 < end)
        if (const Appearance* a = appearance_[i + 2].get()) a->prefetch(0);
    if (i + 1 < end)
        if (const Appearance* a = appearance_[i + 1].get()) a->prefetch(1);
}

void AppearanceFeature::morph_at(std::size_t i) {
    prefetch_after(i);
    Appearance* a = appearance_[i].get();
    if (!a) return;
    // Skeletal params moved joints: an active attachment override replaces what they wrote
    // (LLPolySkeletalDistortion::apply), then the model pose.
    if (a->morph(world_.controller_at(i), world_.local_pose_at(i))) {
        overrides_->apply_at(i, a->touched_joints());
        world_.update_model_pose_at(i);
    }
}

void AppearanceFeature::add_systems() {
    using namespace component;
    overrides_ = &AttachmentOverrideFeature::of(world_);
    // Per avatar: an Appearance belongs to one avatar, so avatars morph and skin in parallel.
    world_.add_system({Phase::Morph, "appearance_morph", {kController, kAppearance},
                       {kAppearance, kLocalPose, kModelPose}, {},
                       [this](World&, std::size_t i, float, WorkerScratch&) { morph_at(i); }});
    world_.add_system({Phase::Skin, "appearance_skin", {kModelPose, kLocalPose, kAppearance}, {kAppearance}, {},
                       [this](World& w, std::size_t i, float, WorkerScratch&) {
                           Appearance* a = appearance_[i].get();
                           if (a && a->options().skin) a->skin(w.model_pose_at(i), w.local_pose_at(i));
                       }});
}

}  // namespace slanim
