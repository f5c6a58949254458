// SPDX-License-Identifier: MIT
#include "slanim/runtime/crowd.hpp"

#include <algorithm>
#include <cmath>

namespace slanim {

void make_looping(Motion& m) {
    if (m.loop) return;
    m.loop = true;
    m.loop_in = 0.f;
    m.loop_out = m.duration;
}

std::vector<Entity> populate_crowd(World& world, const std::shared_ptr<const Skeleton>& skeleton,
                                   std::span<const std::shared_ptr<const MotionClip>> clips, int avatars) {
    std::vector<Entity> out;
    out.reserve(static_cast<std::size_t>(std::max(avatars, 0)));
    constexpr double kGolden = 0.6180339887498949;
    for (int k = 0; k < avatars; ++k) {
        const Entity e = world.create_avatar(skeleton);
        const double frac = std::fmod(static_cast<double>(k) * kGolden, 1.0);
        for (const auto& clip : clips) {
            StartOptions o;
            o.start_offset = static_cast<float>(frac) * std::max(clip->duration(), 1.f);
            world.controller(e).start(clip, o);
        }
        out.push_back(e);
    }
    return out;
}

}  // namespace slanim
