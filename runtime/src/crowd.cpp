// SPDX-License-Identifier: MIT
#include "slanim/runtime/crowd.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "slanim/runtime/appearance.hpp"
#include "slanim/runtime/appearance_feature.hpp"

namespace slanim {

namespace {

constexpr double kGolden = 0.6180339887498949;

/// splitmix64: the schedule's deterministic draws.
std::uint64_t mix64(std::uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/// A draw in [0, 1) from the seed and two keys.
float unit(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
    const std::uint64_t z = mix64(seed ^ mix64(a * 0x100000001B3ull + b));
    return static_cast<float>(static_cast<double>(z >> 11) * 0x1.0p-53);
}

/// Avatar k's start offset of a clip: frac(k × 0.618…) × its duration (at least 1 s).
float stagger(int k, const MotionClip& clip) {
    const double frac = std::fmod(static_cast<double>(k) * kGolden, 1.0);
    return static_cast<float>(frac) * std::max(clip.duration(), 1.f);
}

}  // namespace

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
    for (int k = 0; k < avatars; ++k) {
        const Entity e = world.create_avatar(skeleton);
        for (const auto& clip : clips) {
            StartOptions o;
            o.start_offset = stagger(k, *clip);
            world.controller(e).start(clip, o);
        }
        out.push_back(e);
    }
    return out;
}

const char* crowd_mode_name(CrowdMode mode) { return mode == CrowdMode::Settled ? "settled" : "churn"; }

Crowd::Crowd(World& world, std::shared_ptr<const Skeleton> skeleton, CrowdMix mix, const CrowdSettings& settings)
    : world_(world), skeleton_(std::move(skeleton)), mix_(std::move(mix)), settings_(settings) {}

Result<std::unique_ptr<Crowd>> Crowd::create(World& world, std::shared_ptr<const Skeleton> skeleton, CrowdMix mix,
                                             const CrowdSettings& settings, int avatars) {
    if (!skeleton) return Error{"crowd: no skeleton"};
    if (avatars < 1) return Error{"crowd: at least one avatar"};
    if (mix.clips.empty() || std::find(mix.clips.begin(), mix.clips.end(), nullptr) != mix.clips.end())
        return Error{"crowd: no motions to play"};
    if (settings.mode == CrowdMode::Churn) {
        if (mix.gestures.empty() || std::find(mix.gestures.begin(), mix.gestures.end(), nullptr) != mix.gestures.end())
            return Error{"crowd: a churn crowd needs at least one gesture"};
        if (!(settings.gesture_period > 0.f) || !std::isfinite(settings.gesture_period))
            return Error{"crowd: the gesture period must be a positive number of seconds"};
    }
    std::unique_ptr<Crowd> c(new Crowd(world, std::move(skeleton), std::move(mix), settings));
    c->populate(avatars);
    return c;
}

void Crowd::populate(int avatars) {
    if (settings_.mode == CrowdMode::Settled) {
        avatars_ = populate_crowd(world_, skeleton_, mix_.clips, avatars);
        return;
    }
    avatars_.reserve(static_cast<std::size_t>(avatars));
    schedule_.resize(static_cast<std::size_t>(avatars));
    const std::uint64_t seed = settings_.seed;
    const auto bases = static_cast<std::uint64_t>(mix_.clips.size());
    const auto gestures = static_cast<std::uint64_t>(mix_.gestures.size());
    for (int k = 0; k < avatars; ++k) {
        const Entity e = world_.create_avatar(skeleton_);
        const auto key = static_cast<std::uint64_t>(k);
        const auto& base = mix_.clips[static_cast<std::size_t>(mix64(seed ^ mix64(key)) % bases)];
        StartOptions o;
        o.start_offset = stagger(k, *base);
        world_.controller(e).start(base, o);
        Schedule& s = schedule_[static_cast<std::size_t>(k)];
        s.next = unit(seed, key, 0) * settings_.gesture_period;
        s.gesture = static_cast<std::uint32_t>(mix64(seed + mix64(key + 0x51ED)) % gestures);
        avatars_.push_back(e);
    }
}

std::optional<Error> Crowd::set_appearances(const std::function<Result<std::shared_ptr<Appearance>>(int)>& make) {
    for (std::size_t k = 0; k < avatars_.size(); ++k) {
        auto a = make(static_cast<int>(k));
        if (!a) return a.error();
        if (!AppearanceFeature::of(world_).set(avatars_[k], std::move(*a)))
            return Error{"crowd: an appearance does not fit the crowd's skeleton"};
    }
    return std::nullopt;
}

void Crowd::start_due_gestures() {
    const float now = static_cast<float>(time());
    const std::uint64_t seed = settings_.seed;
    for (std::size_t k = 0; k < schedule_.size(); ++k) {
        Schedule& s = schedule_[k];
        if (s.next > now) continue;
        MotionController& c = world_.controller(avatars_[k]);
        if (s.playing) c.stop(s.playing);
        const auto& g = mix_.gestures[s.gesture];
        c.start(g);
        s.playing = g.get();
        s.gesture = static_cast<std::uint32_t>((s.gesture + 1) % mix_.gestures.size());
        ++s.count;
        ++gestures_started_;
        s.next += settings_.gesture_period * (0.75f + 0.5f * unit(seed, k, s.count));
    }
}

int Crowd::warm_up_steps() const {
    if (settings_.mode != CrowdMode::Churn) return kWarmUpSteps;
    return kWarmUpSteps + static_cast<int>(std::ceil(1.5f * settings_.gesture_period / kStep));
}

void Crowd::warm_up() {
    const int steps = warm_up_steps();
    for (int f = 0; f < steps; ++f) step();
}

void Crowd::set_profiling(bool on) {
    world_.set_profiling(on);
    profiling_ = on;
}

void Crowd::reset_profile() {
    world_.reset_profile();
    schedule_seconds_ = 0.0;
}

void Crowd::step() {
    if (settings_.mode == CrowdMode::Churn) {
        if (profiling_) {
            const auto before = std::chrono::steady_clock::now();
            start_due_gestures();
            schedule_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
        } else {
            start_due_gestures();
        }
    }
    world_.step(kStep);
    ++steps_;
}

double Crowd::timed_step() {
    const auto before = std::chrono::steady_clock::now();
    step();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
}

}  // namespace slanim
