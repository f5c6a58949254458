// SPDX-License-Identifier: MIT
// LOD and visibility (slanim/runtime/lod_feature.hpp).
#include "slanim/runtime/lod_feature.hpp"

#include <algorithm>
#include <cstring>

namespace slanim {

namespace {
std::size_t to_bytes(std::size_t n) { return n * (sizeof(Quat) + sizeof(Vec3)); }
}  // namespace

LodFeature::LodFeature(World& world) : world_(world) {
    using namespace component;
    // lod_select stays the first system of the control phase: it decides what the others run.
    System select{Phase::Control, "lod_select", {kController, kLod}, {kLod, kLocalPose}, {},
                  [this](World& w, std::size_t i, float dt, WorkerScratch&) { select_at(w, i, dt); }};
    select.always = true;
    world.add_system(std::move(select));
    world.add_system({Phase::Control, "motion_control", {kSkeleton, kLod}, {kController}, {},
                      [this](World& w, std::size_t i, float dt, WorkerScratch&) { control_at(w, i, dt); }});
    world.add_system({Phase::LocalToModel, "lod_interpolate", {kLod}, {kLocalPose, kLod}, {},
                      [this](World& w, std::size_t i, float, WorkerScratch&) { interpolate_at(w, i); }});
}

LodFeature& LodFeature::of(World& world) { return static_cast<LodFeature&>(*world.store(component::kLod)); }
const LodFeature& LodFeature::of(const World& world) {
    return static_cast<const LodFeature&>(*world.store(component::kLod));
}

void LodFeature::push(World&, std::size_t) { lod_.emplace_back(); }

void LodFeature::erase(World& world, std::size_t i, std::size_t last) {  // before the core arrays move
    if (lod_[i].to_block) world.release_block(to_bytes(joints_at(i)), lod_[i].to_block);
    if (i != last) lod_[i] = lod_[last];
    lod_.pop_back();
}

std::size_t LodFeature::bytes() const { return lod_.size() * sizeof(State); }

bool LodFeature::set_visible(Entity e, bool visible) {
    const std::size_t d = world_.index_of(e);
    if (d == kNoIndex) return false;
    lod_[d].visible = visible;
    return true;
}

bool LodFeature::visible(Entity e) const {
    const std::size_t d = world_.index_of(e);
    return d != kNoIndex && lod_[d].visible;
}

std::span<Quat> LodFeature::target_rotations_at(std::size_t i) const {
    if (!lod_[i].to_block) return {};
    return {static_cast<Quat*>(lod_[i].to_block), joints_at(i)};
}

std::span<Vec3> LodFeature::target_positions_at(std::size_t i) const {
    if (!lod_[i].to_block) return {};
    return {reinterpret_cast<Vec3*>(static_cast<Quat*>(lod_[i].to_block) + joints_at(i)), joints_at(i)};
}

// The controller's clock: a hidden avatar gets updateMotionsMinimal; a reduced-rate one advances
// by a whole update period when it is evaluated ahead.
void LodFeature::control_at(World& w, std::size_t i, float dt) const {
    const State& l = lod_[i];
    if (l.mode == Mode::Hidden)
        w.controller_at(i).control_minimal();
    else
        w.controller_at(i).control(l.mode == Mode::Full && l.behind == 0.f ? dt : l.control_dt);
}

// Decides this step's LOD mode of avatar i (the first control system). An avatar changes its
// update period only when its display has reached the last evaluated pose, so the controller's
// clock and the display's never drift apart.
void LodFeature::select_at(World& w, std::size_t i, float dt) {
    State& l = lod_[i];
    if (!l.visible) {
        l.mode = Mode::Hidden;
        w.set_evaluation_at(i, Evaluation::Control);
        return;
    }
    if (l.mode == Mode::Hidden) l.elapsed = l.span = 0.f;  // shown again: start afresh
    if (l.elapsed < l.span) {
        l.elapsed += dt;
        l.mode = Mode::Interpolate;
        w.set_evaluation_at(i, Evaluation::Display);
        return;
    }
    w.set_evaluation_at(i, Evaluation::Full);
    int period = 1;
    if (settings_.enabled) {
        const float area = w.controller_at(i).pixel_area();
        period = area >= settings_.full_rate_area ? 1 : area >= settings_.half_rate_area ? 2 : 4;
    }
    l.period = static_cast<std::uint8_t>(period);
    const float behind = l.elapsed - l.span;  // the display ran past the last target (≥ 0)
    l.elapsed = l.span = 0.f;
    if (period == 1) {
        if (l.to_block) {
            w.release_block(to_bytes(joints_at(i)), l.to_block);
            l.to_block = nullptr;
        }
        l.mode = Mode::Full;
        l.behind = behind;
        l.control_dt = dt + behind;
        return;
    }
    // Update: evaluate `period` steps ahead into the "to" pose; the display then moves toward
    // it over those steps (this one included).
    const std::size_t n = joints_at(i);
    LocalPose& lp = w.local_pose_at(i);
    if (!l.to_block) {
        l.to_block = w.acquire_block(to_bytes(n));
        std::copy(lp.rotations.begin(), lp.rotations.end(), static_cast<Quat*>(l.to_block));
        std::copy(lp.positions.begin(), lp.positions.end(), reinterpret_cast<Vec3*>(static_cast<Quat*>(l.to_block) + n));
    }
    l.display_rotations = lp.rotations;
    l.display_positions = lp.positions;
    lp.rotations = target_rotations_at(i);
    lp.positions = target_positions_at(i);
    l.span = static_cast<float>(period) * dt;
    l.elapsed = dt;
    l.last_f = 0.f;
    l.behind = 0.f;
    l.control_dt = behind + l.span;
    l.mode = Mode::Update;
}

// Moves the displayed local pose toward the evaluated one (the first local_to_model system):
// positions by lerp, rotations by the viewer's nlerp, each step the fraction of the way left
// that keeps the display on the straight line between the poses of the two updates.
void LodFeature::interpolate_at(World& w, std::size_t i) {
    State& l = lod_[i];
    if (l.mode != Mode::Update && l.mode != Mode::Interpolate) return;
    LocalPose& lp = w.local_pose_at(i);
    if (l.mode == Mode::Update) {
        lp.rotations = l.display_rotations;
        lp.positions = l.display_positions;
    }
    const std::size_t n = lp.positions.size();
    const Quat* to_rot = static_cast<const Quat*>(l.to_block);
    const Vec3* to_pos = reinterpret_cast<const Vec3*>(to_rot + n);
    const float f = l.span > 0.f ? std::min(1.f, l.elapsed / l.span) : 1.f;
    if (f >= 1.f) {
        std::copy(to_rot, to_rot + n, lp.rotations.begin());
        std::copy(to_pos, to_pos + n, lp.positions.begin());
    } else {
        // Joints no motion moves are already at their target (bit for bit): skip them, so the
        // cost follows the animated joints, not the skeleton.
        const float u = (f - l.last_f) / (1.f - l.last_f);
        for (std::size_t j = 0; j < n; ++j) {
            if (std::memcmp(&lp.rotations[j], &to_rot[j], sizeof(Quat)) != 0)
                lp.rotations[j] = ll_nlerp(u, lp.rotations[j], to_rot[j]);
            if (std::memcmp(&lp.positions[j], &to_pos[j], sizeof(Vec3)) != 0)
                lp.positions[j] = lerp(lp.positions[j], to_pos[j], u);
        }
    }
    l.last_f = f;
}

}  // namespace slanim
