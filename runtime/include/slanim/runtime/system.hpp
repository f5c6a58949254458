// SPDX-License-Identifier: MIT
// The vocabulary of the World (slanim/runtime/world.hpp): avatar handles, the phases a step runs
// in, systems, the per-thread scratch, and ComponentStore, the one way a feature keeps
// per-avatar state that follows the world's dense arrays.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "slanim/runtime/motion_controller.hpp"

namespace slanim {

class World;

/// An avatar handle: index in the low 20 bits, generation above (stale handles are detected).
using Entity = std::uint32_t;
inline constexpr Entity kNullEntity = 0xFFFFFFFFu;
/// World::index_of for an invalid handle.
inline constexpr std::size_t kNoIndex = static_cast<std::size_t>(-1);

enum class Phase : std::uint8_t { Ingest, Control, Sample, Blend, Ik, LocalToModel, Morph, Skin };
inline constexpr int kNumPhases = 8;
/// "ingest", "control", ...
const char* phase_name(Phase p);

/// Component names used in system declarations (features add their own, e.g. kLod).
namespace component {
inline constexpr const char* kSkeleton = "skeleton";
inline constexpr const char* kController = "motion_controller";
inline constexpr const char* kLocalPose = "local_pose";
inline constexpr const char* kModelPose = "model_pose";
/// The sampled joint states of the evaluated motions (per-thread scratch, sample → blend).
inline constexpr const char* kJointStates = "joint_states";
}  // namespace component

/// How much of the step an avatar runs (World::set_evaluation_at; the LOD feature sets it in
/// its first control system, slanim/runtime/lod_feature.hpp). Systems marked `always` run for
/// every avatar.
enum class Evaluation : std::uint8_t {
    Full,     ///< every system
    Control,  ///< the viewer's `updateMotionsMinimal`: systems of phases up to Control only
    Display,  ///< only systems of phases after Ik (the displayed pose moves, nothing evaluated)
};

/// Per-thread working memory a per-avatar system may use during one call (the World keeps one
/// per worker thread; see docs/runtime-threading.md).
struct WorkerScratch {
    BlendScratch blend;  ///< joint states from sample to blend of the same avatar, the blender
};

/// A system, run once per step in its phase. Give exactly one of:
///  - `each`: per-avatar work, called once for every avatar (dense index i), possibly on a
///    worker thread and concurrently with other avatars. It may touch only avatar i's
///    components and the worker's scratch; consecutive per-avatar systems run back to back for
///    one avatar on one thread (so joint states can stay in the scratch).
///  - `run`: whole-world work, called once per step on the thread that calls step(), with no
///    per-avatar system running. A system that touches several avatars' data (puppetry routing)
///    must be of this kind, and says so in its reads/writes.
struct System {
    Phase phase = Phase::Control;
    std::string name;
    std::vector<std::string> reads, writes;  ///< component names
    std::function<void(World&, float dt)> run;
    std::function<void(World&, std::size_t i, float dt, WorkerScratch&)> each;
    /// Runs whatever the avatar's Evaluation (the system that decides it).
    bool always = false;
    [[nodiscard]] bool per_avatar() const { return static_cast<bool>(each); }
};

/// Time spent in one system over the steps since reset_profile() (see set_profiling).
struct SystemProfile {
    const System* system = nullptr;
    double seconds = 0.0;  ///< summed over worker threads for per-avatar systems (CPU time)
    std::uint64_t calls = 0;
};

/// Per-avatar state of a feature, kept in the world's dense order: slot i belongs to the
/// avatar at dense index i. The World owns its stores (World::add_store) and calls them, between
/// steps, as avatars come and go; a feature's per-avatar systems then index its slots with the
/// index they are given. A feature is reached from a World through a static `of(World&)` of its
/// class (e.g. LodFeature::of), which looks its store up by name().
class ComponentStore {
public:
    virtual ~ComponentStore() = default;
    /// The component name (as in System::reads/writes), unique per world.
    [[nodiscard]] virtual const char* name() const = 0;
    /// Appends the slot of the avatar just created at dense index i (i == the slots before).
    virtual void push(World& world, std::size_t i) = 0;
    /// Avatar i is destroyed: releases its slot, then moves the slot at `last` into i when
    /// i != last (swap-remove) and drops the last slot.
    virtual void erase(World& world, std::size_t i, std::size_t last) = 0;
    /// Bytes of per-avatar state held (slots and what they own), for World::avatar_state_bytes.
    [[nodiscard]] virtual std::size_t bytes() const = 0;
};

}  // namespace slanim
