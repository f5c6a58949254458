// SPDX-License-Identifier: MIT
// The appearance component in a World (slanim/runtime/appearance.hpp: visual params, hand poses,
// emotes, skinning): at most one Appearance per avatar, and the `appearance_morph` (Phase::Morph)
// and `appearance_skin` (Phase::Skin) systems, registered when the first avatar receives one.
// A feature of every World (AppearanceFeature::of(world)).
#pragma once

#include <memory>
#include <vector>

#include "slanim/runtime/world.hpp"

namespace slanim {

class Appearance;
class AttachmentOverrideFeature;

namespace component {
inline constexpr const char* kAppearance = "appearance";  ///< optional, see Appearance
}  // namespace component

class AppearanceFeature final : public ComponentStore {
public:
    explicit AppearanceFeature(World& world) : world_(world) {}
    /// The world's appearances.
    static AppearanceFeature& of(World& world);
    static const AppearanceFeature& of(const World& world);

    /// Gives the avatar an appearance component (one per avatar, not shared), replacing any; a
    /// null pointer removes it. The first one registers the `morph` and `skin` systems; the
    /// avatar gets its own local scales (skeletal visual params scale joints). Returns false for
    /// an invalid handle or an appearance built for a skeleton with a different joint count.
    /// Not during step().
    bool set(Entity e, std::shared_ptr<Appearance> appearance);
    /// The avatar's appearance, or nullptr (also for an invalid handle).
    [[nodiscard]] Appearance* get(Entity e) const;
    [[nodiscard]] Appearance* appearance_at(std::size_t i) const { return appearance_[i].get(); }

    // ComponentStore
    [[nodiscard]] const char* name() const override { return component::kAppearance; }
    void push(World&, std::size_t) override { appearance_.emplace_back(); }
    void erase(World& world, std::size_t i, std::size_t last) override;
    [[nodiscard]] std::size_t bytes() const override { return appearance_.size() * sizeof(appearance_[0]); }

private:
    void add_systems();
    void morph_at(std::size_t i);
    void prefetch_after(std::size_t i) const;
    World& world_;
    std::vector<std::shared_ptr<Appearance>> appearance_;  // null: no appearance
    AttachmentOverrideFeature* overrides_ = nullptr;       // set with the systems
    bool systems_ = false;
};

}  // namespace slanim
