// SPDX-License-Identifier: MIT
// The viewer's procedural motions in a World (breathe, body noise, head and eye look-at with
// blinks and saccades; slanim/runtime/procedural.hpp, docs/procedural-motions.md) and each
// avatar's look-at target. A feature of every World (ProceduralFeature::of(world)); it keeps the
// motion types per skeleton, the motions themselves run in the avatars' controllers.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "slanim/runtime/procedural.hpp"
#include "slanim/runtime/world.hpp"

namespace slanim {

namespace component {
inline constexpr const char* kProcedural = "procedural_motions";
}  // namespace component

class ProceduralFeature final : public ComponentStore {
public:
    explicit ProceduralFeature(World& world) : world_(world) {}
    /// The world's procedural motions.
    static ProceduralFeature& of(World& world);

    /// Starts those in `set` that are not running for this avatar, stops the others (they ease
    /// out). All are off for a new avatar. Returns false for an invalid handle or when the
    /// skeleton lacks a requested motion's joints (the rest of `set` is applied). Not during
    /// step().
    bool set_motions(Entity e, const ProceduralSet& set);
    /// The avatar's look-at target, read by the head and eye motions and by custom motions as
    /// the viewer's "LookAtPoint" (`LLCharacter::setAnimationData`): by default a point in the
    /// avatar-root frame (metres; the head's position is subtracted each frame, as
    /// `LLHUDEffectLookAt::calcTargetPosition` does), or with LookAtFrame::HeadOffset the
    /// vector from the head to the target in avatar-root axes. A host with region coordinates
    /// converts them into the avatar-root frame first (p_root = (p_region − root position)
    /// rotated by the inverse of the avatar's region rotation). Returns false for an invalid
    /// handle or a non-finite target.
    bool set_look_at(Entity e, Vec3 target, LookAtFrame frame = LookAtFrame::AvatarRoot);
    /// No target (`removeAnimationData("LookAtPoint")`): the head follows the root, the eyes
    /// look ahead. Returns false for an invalid handle.
    bool clear_look_at(Entity e);

    // ComponentStore: no per-avatar slots (the motions live in the controllers).
    [[nodiscard]] const char* name() const override { return component::kProcedural; }
    void push(World&, std::size_t) override {}
    void erase(World&, std::size_t, std::size_t) override {}
    [[nodiscard]] std::size_t bytes() const override { return 0; }

private:
    World& world_;
    // Motion types per skeleton (shared by its avatars; the skeleton is kept alive, so a later
    // skeleton at the same address cannot pick up stale joint indices).
    std::vector<std::pair<std::shared_ptr<const Skeleton>, ProceduralMotionTypes>> types_;
};

}  // namespace slanim
