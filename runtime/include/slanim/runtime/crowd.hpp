// SPDX-License-Identifier: MIT
// Crowds for benchmarks, `slanim crowd` and tests: many avatars playing a shared set of clips
// with staggered start times, and a built-in mix of generated motions that needs no data files.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "slanim/core/clip.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/runtime/world.hpp"

namespace slanim {

/// Four generated motions (made by code, no third-party data), the mix of a crowd when no file
/// is given: "demo_walk" (legs, arms and pelvis bob, priority 1, 1 s loop), "demo_dance"
/// (spine, arms and head, priority 2, 2 s loop), "demo_hands" (Bento fingers and face,
/// priority 3, 1.5 s loop) and "demo_reach" (left arm, priority 2, 2 s loop, with one
/// constraint of chain length 2 holding the left hand to the left hip, like the viewer's
/// constrained motions). Joint indices are resolved against `skeleton` (joints it lacks are
/// left unresolved, −1).
struct DemoMotion {
    std::string name;
    Motion motion;
};
std::vector<DemoMotion> make_crowd_demo_motions(const Skeleton& skeleton);

/// Makes `m` loop over its whole duration (loop in 0, loop out = duration), so a crowd keeps
/// playing it; a motion that already loops is left alone.
void make_looping(Motion& m);

/// Creates `avatars` avatars on `skeleton` and starts every clip on each, avatar k with a start
/// offset of frac(k × 0.618…) × the clip's duration (at least 1 s), so the crowd is not in
/// lockstep. Returns the entities in creation order. Not thread-safe (creates entities).
std::vector<Entity> populate_crowd(World& world, const std::shared_ptr<const Skeleton>& skeleton,
                                   std::span<const std::shared_ptr<const MotionClip>> clips, int avatars);

}  // namespace slanim
