// SPDX-License-Identifier: MIT
// Level of detail and visibility (docs/runtime-threading.md, "LOD"): which avatars a World
// evaluates every step, every 2nd or 4th, or not at all (hidden), and the interpolation that
// keeps a reduced-rate avatar's displayed pose moving. A feature of every World
// (LodFeature::of(world)); it owns the `lod_select`, `motion_control` and `lod_interpolate`
// systems, because the update rate decides how far each avatar's clock advances.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "slanim/runtime/world.hpp"

namespace slanim {

namespace component {
/// Visibility, update period and interpolation state of the LOD rules (see LodSettings).
inline constexpr const char* kLod = "lod";
}  // namespace component

/// Level-of-detail rules for crowds. Off by default, so every visible avatar is evaluated every
/// step exactly as the viewer does. When enabled, an avatar whose pixel area
/// (MotionController::set_pixel_area) is below `full_rate_area` is evaluated every 2nd step,
/// below `half_rate_area` every 4th; in between, its local pose is interpolated toward a pose
/// evaluated one update ahead (the viewer's time-quantum path, LLMotionController::updateMotions
/// with mTimeStep, disabled there as SL-763; here the clock stays continuous, so playback speed
/// is exact). Visibility (LodFeature::set_visible) applies whether LOD is enabled or not.
struct LodSettings {
    bool enabled = false;
    /// Pixels². Defaults: the viewer's minimum pixel areas of hand motions (10000) and emotes
    /// (2000), below which those motions already fade out (spec §3.2).
    float full_rate_area = 10000.f;
    float half_rate_area = 2000.f;
};

class LodFeature final : public ComponentStore {
public:
    /// Registers the feature's systems on `world` (the World does this for itself).
    explicit LodFeature(World& world);
    /// The world's LOD feature.
    static LodFeature& of(World& world);
    static const LodFeature& of(const World& world);

    /// Level of detail for all avatars (see LodSettings). Not during step().
    void set_settings(const LodSettings& lod) { settings_ = lod; }
    [[nodiscard]] const LodSettings& settings() const { return settings_; }
    /// A hidden avatar (culled, or shown as an impostor) gets the viewer's
    /// `updateMotionsMinimal`: its clock stands still, stopped motions are deactivated, nothing
    /// is sampled, blended, solved or skinned, and its pose stays as it was. Default: visible.
    /// Returns false for an invalid handle.
    bool set_visible(Entity e, bool visible);
    /// False also for an invalid handle.
    [[nodiscard]] bool visible(Entity e) const;
    /// Steps between evaluations of avatar i under the LOD rules: 1, 2 or 4 (0 when hidden).
    [[nodiscard]] int update_period_at(std::size_t i) const { return lod_[i].visible ? lod_[i].period : 0; }
    /// The pose a reduced-rate avatar i moves toward (rotations, positions; empty spans at full
    /// rate): whoever writes joints of the local pose between steps writes them here too, so
    /// the interpolation does not pull them back.
    [[nodiscard]] std::span<Quat> target_rotations_at(std::size_t i) const;
    [[nodiscard]] std::span<Vec3> target_positions_at(std::size_t i) const;

    // ComponentStore
    [[nodiscard]] const char* name() const override { return component::kLod; }
    void push(World& world, std::size_t i) override;
    void erase(World& world, std::size_t i, std::size_t last) override;
    [[nodiscard]] std::size_t bytes() const override;

private:
    // This step's mode: evaluated fully, hidden, evaluated ahead ("to"), or interpolated.
    enum class Mode : std::uint8_t { Full, Hidden, Update, Interpolate };
    struct State {
        bool visible = true;
        Mode mode = Mode::Full;
        std::uint8_t period = 1;
        float elapsed = 0.f, span = 0.f;  // seconds into / length of the interpolation
        float last_f = 0.f;               // interpolation fraction shown last step
        float control_dt = 0.f;           // what motion_control advances the clock by
        float behind = 0.f;               // display past the last target (uneven steps)
        void* to_block = nullptr;         // the pose evaluated ahead: rotations, then positions
        std::span<Quat> display_rotations;  // the real local pose while "to" is swapped in
        std::span<Vec3> display_positions;
    };
    void select_at(World& w, std::size_t i, float dt);
    void control_at(World& w, std::size_t i, float dt) const;
    void interpolate_at(World& w, std::size_t i);
    [[nodiscard]] std::size_t joints_at(std::size_t i) const { return world_.skeleton_at(i).num_joints(); }
    LodSettings settings_;
    std::vector<State> lod_;
    World& world_;
};

}  // namespace slanim
