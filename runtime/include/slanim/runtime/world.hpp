// SPDX-License-Identifier: MIT
// The ECS-like world: avatars are entities, components live in dense arrays, and systems run in
// named phases in one fixed order: ingest → control → sample → blend → ik → local_to_model →
// morph → skin. The World holds the core (entities, skeleton, motion controller, local and
// model pose, systems, step); features keep their per-avatar state in ComponentStores the
// World owns (slanim/runtime/system.hpp) and are reached through `Feature::of(world)`: LOD
// (lod_feature.hpp), IK settings (ik_feature.hpp), attachment overrides
// (attachment_overrides.hpp), procedural motions (procedural.hpp), appearances (appearance.hpp).
// Every system declares the components it reads and writes; schedule() lists them in order.
//
// Threads (docs/runtime-threading.md): per-avatar systems run as parallel loops over chunks of
// avatars on a oneTBB task arena of WorldOptions::threads threads; consecutive per-avatar
// systems are fused, so one avatar goes through control → ... → local_to_model on one thread
// with that thread's scratch. Whole-world systems run alone on the stepping thread. Avatars are
// independent, so results are bit-identical for every thread count.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "slanim/core/pose.hpp"
#include "slanim/core/result.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/runtime/motion_controller.hpp"
#include "slanim/runtime/system.hpp"

namespace slanim {

/// How a World runs its per-avatar systems.
struct WorldOptions {
    /// Worker threads for per-avatar systems: 0 = std::thread::hardware_concurrency(), 1 = all
    /// work on the calling thread, at most 256. Results are bit-identical for every value. A
    /// build without oneTBB (the WebAssembly build, docs/web.md) always runs one thread.
    int threads = 0;
    int chunk = 8;  ///< avatars per task (the grain of the parallel loop), ≥ 1
    /// Ok, or an Error naming the field out of range.
    [[nodiscard]] Status validate() const;
};

class World {
public:
    /// A world with the default WorldOptions (cannot fail).
    World();
    /// A world with `options`, or the Error of options.validate().
    static Result<std::unique_ptr<World>> create(const WorldOptions& options);
    ~World();
    World(const World&) = delete;
    World& operator=(const World&) = delete;

    /// The worker threads per-avatar systems run on (the resolved WorldOptions::threads).
    [[nodiscard]] int threads() const { return threads_; }

    /// Creates an avatar in its rest pose (pelvis at the root origin). Not during step().
    Entity create_avatar(std::shared_ptr<const Skeleton> skeleton);
    /// Destroys an avatar; its handle becomes invalid. Returns false for an invalid handle.
    bool destroy(Entity e);
    [[nodiscard]] bool valid(Entity e) const { return index_of(e) != kNoIndex; }
    [[nodiscard]] std::size_t size() const { return controllers_.size(); }
    /// The dense index of a valid handle, kNoIndex for an invalid one.
    [[nodiscard]] std::size_t index_of(Entity e) const;
    [[nodiscard]] Entity entity_at(std::size_t i) const { return dense_to_entity_[i]; }

    // Core components by handle (precondition: valid(e)).
    MotionController& controller(Entity e) { return *controllers_[index_of(e)]; }
    [[nodiscard]] const Skeleton& skeleton(Entity e) const { return *skeletons_[index_of(e)]; }
    /// The avatar's shared skeleton (for components that keep it, e.g. puppetry playback).
    [[nodiscard]] const std::shared_ptr<const Skeleton>& skeleton_ptr(Entity e) const { return skeletons_[index_of(e)]; }
    /// The local pose, for reading and writing: the avatar gets its own scales first (until
    /// then its scales view the world's rest scales of its skeleton, shared by such avatars).
    LocalPose& local_pose(Entity e);
    /// The local pose for reading only: no side effect (shared rest scales stay shared).
    [[nodiscard]] const LocalPose& local_pose_read(Entity e) const { return local_[index_of(e)]; }
    [[nodiscard]] const ModelPose& model_pose(Entity e) const { return model_[index_of(e)]; }

    // Core components by dense index i in [0, size()), for systems and features.
    MotionController& controller_at(std::size_t i) { return *controllers_[i]; }
    LocalPose& local_pose_at(std::size_t i) { return local_[i]; }
    ModelPose& model_pose_at(std::size_t i) { return model_[i]; }
    [[nodiscard]] const Skeleton& skeleton_at(std::size_t i) const { return *skeletons_[i]; }
    [[nodiscard]] const std::shared_ptr<const Skeleton>& skeleton_ptr_at(std::size_t i) const { return skeletons_[i]; }
    /// Recomputes avatar i's model pose from its local pose now (LocalToModelJob), e.g. after a
    /// system changed the local pose after local_to_model. Safe from avatar i's own system.
    void update_model_pose_at(std::size_t i);
    /// Gives avatar i its own local scales (a copy of the shared rest scales) if it has none.
    /// Safe from per-avatar systems (the pool is locked; allocates only the first time).
    void own_scales_at(std::size_t i);
    [[nodiscard]] bool owns_scales_at(std::size_t i) const { return scale_block_[i] != nullptr; }
    /// How much of this step avatar i runs (Full for a new avatar); set by a system marked
    /// System::always of the control phase, for the systems after it.
    [[nodiscard]] Evaluation evaluation_at(std::size_t i) const { return evaluation_[i]; }
    void set_evaluation_at(std::size_t i, Evaluation v) { evaluation_[i] = v; }
    /// Pose memory for features (64-byte aligned blocks from the world's pool, counted in
    /// avatar_state_bytes). Thread-safe; release with the same byte count.
    void* acquire_block(std::size_t bytes);
    void release_block(std::size_t bytes, void* block);

    /// Adds a feature's per-avatar store (it receives push() for every existing avatar) and
    /// returns it; nullptr (nothing added) when a store of the same name() exists. Stores live
    /// as long as the world. Not during step().
    ComponentStore* add_store(std::unique_ptr<ComponentStore> store);
    /// The store of that component name, or nullptr.
    [[nodiscard]] ComponentStore* store(std::string_view name) const;

    /// Adds a system at the end of its phase. Returns false (and adds nothing) when it gives
    /// neither or both of `run` and `each`, or when a whole-world system would run in the sample
    /// or blend phase (the joint states between them live in per-thread scratch).
    bool add_system(System s);
    /// Every system in run order.
    [[nodiscard]] std::vector<const System*> schedule() const;
    /// Runs every phase once. dt in seconds (0 evaluates the current time again). Per-avatar
    /// systems run on threads() threads; not to be called concurrently on one World.
    void step(float dt);

    /// Measure the time of every system in step() (off by default; costs two clock reads per
    /// avatar and system). profile() lists them in run order.
    void set_profiling(bool on) { profiling_ = on; }
    [[nodiscard]] std::vector<SystemProfile> profile() const;
    void reset_profile();
    /// Bytes of per-avatar state (pose pool blocks, controllers and their motions, component
    /// slots, every store's bytes()), excluding shared skeletons and clips, appearances and the
    /// per-thread scratch. A measurement for benchmarks and `slanim crowd`.
    [[nodiscard]] std::size_t avatar_state_bytes() const;

private:
    explicit World(const WorldOptions& options);
    struct Impl;  // task arena, scratch, pose pool, systems, handle tables (world.cpp)
    std::unique_ptr<Impl> impl_;
    int threads_ = 1;
    bool profiling_ = false;
    // Dense core components (same index for the same avatar).
    std::vector<std::shared_ptr<const Skeleton>> skeletons_;
    std::vector<std::unique_ptr<MotionController>> controllers_;
    std::vector<LocalPose> local_;
    std::vector<ModelPose> model_;
    std::vector<Evaluation> evaluation_;
    std::vector<void*> pose_block_;   // the pool block behind local_[i] and model_[i]
    std::vector<void*> scale_block_;  // local_[i].scales when owned, else null
    std::vector<Entity> dense_to_entity_;
    void run_stage(std::size_t stage, float dt);
    void prefetch_ahead(std::size_t i, std::size_t end) const;
};

}  // namespace slanim
