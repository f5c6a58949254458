// SPDX-License-Identifier: MIT
// Crowds for benchmarks, `slanim crowd` and tests: many avatars playing a shared set of clips
// with staggered start times (the built-in mix of generated motions that needs no data files is
// in slanim/runtime/demo_motions.hpp). Crowd is the one set-up and step loop that `slanim crowd`
// and the crowd benchmarks both measure (docs/runtime-threading.md, "Settled and churn crowds"),
// so the two cannot drift apart: the same avatars, motions, schedule, warm-up and timed span.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slanim/core/clip.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/result.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/runtime/demo_motions.hpp"
#include "slanim/runtime/world.hpp"

namespace slanim {

class Appearance;

/// Makes `m` loop over its whole duration (loop in 0, loop out = duration), so a crowd keeps
/// playing it; a motion that already loops is left alone.
void make_looping(Motion& m);

/// Creates `avatars` avatars on `skeleton` and starts every clip on each, avatar k with a start
/// offset of frac(k × 0.618…) × the clip's duration (at least 1 s), so the crowd is not in
/// lockstep. Returns the entities in creation order. Not thread-safe (creates entities).
std::vector<Entity> populate_crowd(World& world, const std::shared_ptr<const Skeleton>& skeleton,
                                   std::span<const std::shared_ptr<const MotionClip>> clips, int avatars);

/// The real crowd mixes, as paths under the reference animations folder (../shared/anims):
/// the settled crowd of the benchmarks (a walk, a dance, a Bento bones-and-attachments motion, a
/// bow with two constraints; each looped) and the churn crowd's Linden mix (base motions, looped;
/// the gesture BLOWKISS has the Express_Kiss emote and the salute_r hand pose). Loading them is
/// the caller's (slanim::formats).
inline constexpr std::array<std::string_view, 4> kSettledCrowdFiles = {
    "linden/WALK.anim", "linden/DANCE4.anim", "reference/bento_randomize_bones_and_attachments.anim",
    "linden/BOW.anim"};
inline constexpr std::array<std::string_view, 3> kChurnBaseFiles = {
    "linden/ANIM_AGENT_FEMALE_WALK_NEW.anim", "linden/DANCE1.anim", "linden/ANIM_AGENT_BENTO_IDLE.anim"};
inline constexpr std::array<std::string_view, 1> kChurnGestureFiles = {"linden/BLOWKISS.anim"};

/// How a crowd's avatars play their motions.
enum class CrowdMode : std::uint8_t {
    /// Every avatar plays every clip of CrowdMix::clips, looped, with staggered starts
    /// (populate_crowd): once the ease-ins are over nothing starts, fades or stops.
    Settled,
    /// Every avatar keeps one base clip of CrowdMix::clips (looped, staggered start) and starts a
    /// gesture of CrowdMix::gestures every few seconds (see CrowdSettings), stopping the one
    /// before: starts, ease-ins and -outs, stops, and with an Appearance the gestures' emotes
    /// and hand-pose morphs, are always in flight somewhere in the crowd.
    Churn,
};

/// "settled" or "churn".
const char* crowd_mode_name(CrowdMode mode);

/// The clips a crowd plays (shared by every avatar; built for the crowd's skeleton).
struct CrowdMix {
    /// Settled: every clip on every avatar. Churn: the base motions, one per avatar. Made
    /// looping by the caller (make_looping) when they should loop. At least one.
    std::vector<std::shared_ptr<const MotionClip>> clips;
    /// Churn: the gestures, started in turn (not looped: each stops by itself after its
    /// duration, or at the next gesture). At least one in churn mode; unused when settled.
    std::vector<std::shared_ptr<const MotionClip>> gestures;
};

/// The crowd's schedule.
struct CrowdSettings {
    CrowdMode mode = CrowdMode::Churn;
    /// Churn: mean seconds between two gesture starts of one avatar (> 0). Each interval is
    /// drawn from [0.75, 1.25] × this from the seed, per avatar and gesture; avatar k's first
    /// gesture starts at a seeded time in [0, this).
    float gesture_period = 4.f;
    /// Churn: the schedule's seed (base clip and first gesture per avatar, the intervals).
    std::uint64_t seed = 1;
};

/// A crowd in a World: its avatars, their motions and the churn schedule, and the step loop
/// every crowd measurement uses. Deterministic: the schedule runs on the crowd's own clock (n
/// steps of `step_seconds`), on the thread that calls step(), so it is the same for every
/// thread count and every run. Once each avatar has played each of its gestures once, a step
/// allocates nothing (the controllers reuse the instances of finished gestures). Not
/// thread-safe; one Crowd per World.
class Crowd {
public:
    /// The fixed time step of crowd measurements, seconds.
    static constexpr float kStep = 1.f / 60.f;
    /// Steps of warm_up() for a settled crowd (1 s: past every ease-in).
    static constexpr int kWarmUpSteps = 60;
    /// Steps of warm_up(): kWarmUpSteps, and for a churn crowd as many more as cover 1.5
    /// gesture periods (420 steps, 7 s, with the default 4 s period), so that every avatar has
    /// started gestures and their starts, fades and stops are spread as in the steady state
    /// (the first gestures are staggered over one period: after 1 s only a quarter of the
    /// avatars had started one, and a skinned churn crowd then stepped ~30 % faster than in
    /// its steady state).
    [[nodiscard]] int warm_up_steps() const;

    /// Creates `avatars` (≥ 1) avatars on `skeleton` in `world` and starts their motions (see
    /// CrowdMode). Returns an Error (nothing created) for an empty mix, a churn crowd without
    /// gestures or a gesture period ≤ 0.
    static Result<std::unique_ptr<Crowd>> create(World& world, std::shared_ptr<const Skeleton> skeleton,
                                                 CrowdMix mix, const CrowdSettings& settings, int avatars);

    /// Gives avatar k the appearance `make(k)` builds (AppearanceFeature::set), k = 0, 1, …;
    /// the only place a crowd sets World features. The first error (or an appearance that does
    /// not fit the skeleton) ends it and is returned.
    std::optional<Error> set_appearances(const std::function<Result<std::shared_ptr<Appearance>>(int)>& make);

    /// warm_up_steps() steps, before any measured one.
    void warm_up();
    /// One step of kStep: the gestures due by the crowd's clock start (the avatar's previous
    /// gesture is stopped, easing out), then World::step(kStep).
    void step();
    /// step(), returning its wall time in seconds (one steady-clock read before and after: the
    /// span `slanim crowd` and the crowd benchmarks time).
    double timed_step();

    /// World::set_profiling, plus the time of the churn schedule's starts (which run before
    /// World::step, outside its systems): schedule_seconds().
    void set_profiling(bool on);
    /// World::reset_profile, and schedule_seconds() back to 0.
    void reset_profile();
    /// Seconds spent starting and stopping gestures in step() while profiling was on.
    [[nodiscard]] double schedule_seconds() const { return schedule_seconds_; }

    [[nodiscard]] std::span<const Entity> avatars() const { return avatars_; }
    [[nodiscard]] World& world() const { return world_; }
    [[nodiscard]] CrowdMode mode() const { return settings_.mode; }
    /// Seconds on the crowd's clock (steps × kStep).
    [[nodiscard]] double time() const { return static_cast<double>(steps_) * kStep; }
    /// Gestures started so far (churn), for reports and tests.
    [[nodiscard]] std::uint64_t gestures_started() const { return gestures_started_; }

private:
    Crowd(World& world, std::shared_ptr<const Skeleton> skeleton, CrowdMix mix, const CrowdSettings& settings);
    void populate(int avatars);
    void start_due_gestures();

    struct Schedule {       // per avatar, churn
        float next = 0.f;   // crowd-clock seconds of the next gesture start
        std::uint32_t gesture = 0;  // index of the next gesture in mix_.gestures
        std::uint32_t count = 0;    // gestures started
        const MotionClip* playing = nullptr;  // the last gesture started
    };
    World& world_;
    std::shared_ptr<const Skeleton> skeleton_;
    CrowdMix mix_;
    CrowdSettings settings_;
    std::vector<Entity> avatars_;
    std::vector<Schedule> schedule_;
    std::uint64_t steps_ = 0;
    std::uint64_t gestures_started_ = 0;
    bool profiling_ = false;
    double schedule_seconds_ = 0.0;
};

}  // namespace slanim
