// SPDX-License-Identifier: MIT
// Procedural motions and look-at per avatar (slanim/runtime/procedural_feature.hpp).
#include "slanim/runtime/procedural_feature.hpp"

namespace slanim {

ProceduralFeature& ProceduralFeature::of(World& world) {
    return static_cast<ProceduralFeature&>(*world.store(component::kProcedural));
}

bool ProceduralFeature::set_motions(Entity e, const ProceduralSet& set) {
    const std::size_t d = world_.index_of(e);
    if (d == kNoIndex) return false;
    const std::shared_ptr<const Skeleton>& key = world_.skeleton_ptr_at(d);
    const ProceduralMotionTypes* types = nullptr;
    for (const auto& [s, t] : types_)
        if (s == key) types = &t;
    if (!types) {
        types_.emplace_back(key, ProceduralMotionTypes::create(*key));
        types = &types_.back().second;
    }
    return apply_procedural_set(world_.controller_at(d), *types, set);
}

bool ProceduralFeature::set_look_at(Entity e, Vec3 target, LookAtFrame frame) {
    const std::size_t d = world_.index_of(e);
    if (d == kNoIndex || !is_finite(target)) return false;
    world_.controller_at(d).set_look_at(target, frame);
    return true;
}

bool ProceduralFeature::clear_look_at(Entity e) {
    const std::size_t d = world_.index_of(e);
    if (d == kNoIndex) return false;
    world_.controller_at(d).clear_look_at();
    return true;
}

}  // namespace slanim
