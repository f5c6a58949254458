// SPDX-License-Identifier: MIT
// Crowds for benchmarks, `slanim crowd` and tests: many avatars playing a shared set of clips
// with staggered start times (the built-in mix of generated motions that needs no data files is
// in slanim/runtime/demo_motions.hpp).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "slanim/core/clip.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/runtime/demo_motions.hpp"
#include "slanim/runtime/world.hpp"

namespace slanim {

/// Makes `m` loop over its whole duration (loop in 0, loop out = duration), so a crowd keeps
/// playing it; a motion that already loops is left alone.
void make_looping(Motion& m);

/// Creates `avatars` avatars on `skeleton` and starts every clip on each, avatar k with a start
/// offset of frac(k × 0.618…) × the clip's duration (at least 1 s), so the crowd is not in
/// lockstep. Returns the entities in creation order. Not thread-safe (creates entities).
std::vector<Entity> populate_crowd(World& world, const std::shared_ptr<const Skeleton>& skeleton,
                                   std::span<const std::shared_ptr<const MotionClip>> clips, int avatars);

}  // namespace slanim
