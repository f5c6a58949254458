// SPDX-License-Identifier: MIT
#include "slanim/runtime/world.hpp"

#if SLANIM_RUNTIME_TBB
#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <string>
#include <thread>

#include "job_check.hpp"
#include "slanim/core/local_to_model.hpp"
#include "slanim/runtime/appearance_feature.hpp"
#include "slanim/runtime/attachment_overrides.hpp"
#include "slanim/runtime/ik_feature.hpp"
#include "slanim/runtime/lod_feature.hpp"
#include "slanim/runtime/procedural_feature.hpp"

namespace slanim {

namespace {
constexpr std::uint32_t kIndexBits = 20;
constexpr std::uint32_t kIndexMask = (1u << kIndexBits) - 1u;
constexpr std::uint32_t kNoDense = 0xFFFFFFFFu;

void update_model_pose(const Skeleton& skeleton, const LocalPose& lp, const ModelPose& mp) {
    LocalToModelJob job;
    job.skeleton = &skeleton;
    job.local_positions = lp.positions;
    job.local_rotations = lp.rotations;
    job.local_scales = lp.scales;
    job.model_positions = mp.positions;
    job.model_rotations = mp.rotations;
    detail::require_ran(job.run(), "LocalToModelJob (a world's model pose)");
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Whether a system is left out for an avatar of this evaluation (not Full).
inline bool skips(const System& s, Evaluation v) {
    if (s.always) return false;
    return v == Evaluation::Control ? s.phase > Phase::Control : s.phase <= Phase::Ik;
}

// Pose blocks: one per avatar, holding its local pose (rotations, positions) and model pose
// (rotations, positions) back to back, 64-byte aligned; local scales get a block of their own
// only when the avatar owns scales, and features take blocks too (World::acquire_block). Blocks
// of one size are cut from slabs of kBlocksPerSlab and recycled through a free list, so a
// crowd's poses sit in a few large contiguous allocations and creating or destroying avatars
// does not fragment them.
struct PosePool {
    static constexpr std::size_t kBlocksPerSlab = 32;
    struct SizeClass {
        std::size_t block_bytes = 0;
        std::vector<std::byte*> free;
        std::vector<std::byte*> slabs;
    };
    std::vector<SizeClass> classes;
    std::size_t live_bytes = 0;

    static std::size_t round64(std::size_t b) { return (b + 63) & ~std::size_t{63}; }
    static std::size_t pose_bytes(std::size_t n) { return round64(n * 2 * (sizeof(Quat) + sizeof(Vec3))); }
    static std::size_t scale_bytes(std::size_t n) { return round64(n * sizeof(Vec3)); }
    PosePool() = default;
    PosePool(const PosePool&) = delete;
    PosePool& operator=(const PosePool&) = delete;
    ~PosePool() {
        for (auto& c : classes)
            for (std::byte* s : c.slabs) ::operator delete(s, std::align_val_t{64});
    }
    SizeClass& size_class(std::size_t bytes) {
        for (auto& c : classes)
            if (c.block_bytes == bytes) return c;
        classes.push_back({bytes, {}, {}});
        return classes.back();
    }
    std::byte* acquire(std::size_t bytes) {
        SizeClass& c = size_class(bytes);
        if (c.free.empty()) {
            auto* slab = static_cast<std::byte*>(::operator new(bytes * kBlocksPerSlab, std::align_val_t{64}));
            c.slabs.push_back(slab);
            for (std::size_t k = kBlocksPerSlab; k-- > 0;) c.free.push_back(slab + k * bytes);
        }
        std::byte* b = c.free.back();
        c.free.pop_back();
        live_bytes += bytes;
        return b;
    }
    void release(std::size_t bytes, std::byte* b) {
        size_class(bytes).free.push_back(b);
        live_bytes -= bytes;
    }
    static void views(std::byte* b, std::size_t n, LocalPose& lp, ModelPose& mp) {
        auto* q = reinterpret_cast<Quat*>(b);
        lp.rotations = {q, n};
        mp.rotations = {q + n, n};
        auto* v = reinterpret_cast<Vec3*>(q + 2 * n);
        lp.positions = {v, n};
        mp.positions = {v + n, n};
    }
};
}  // namespace

// The task arena and the per-thread scratch (slot k belongs to the arena's thread k,
// tbb::this_task_arena::current_thread_index(); with one thread, slot 0 and no arena), the pose
// pool, the systems and their stages, the feature stores and the handle tables.
struct World::Impl {
    // More threads than cores (tests, oversubscription experiments) need oneTBB's worker limit
    // raised for as long as this world lives.
#if SLANIM_RUNTIME_TBB
    std::unique_ptr<tbb::global_control> allow;
    std::unique_ptr<tbb::task_arena> arena;
#endif
    std::vector<WorkerScratch> scratch;
    int chunk = 8;
    // The largest joint-state count any controller reached (MotionController::
    // set_state_need_sink) and the most joints of any skeleton: what every thread's scratch is
    // sized to before a step, without visiting every avatar.
    std::atomic<std::size_t> state_need{0};
    int max_joints = 0;
    std::vector<std::vector<double>> seconds;  // per thread slot, per system (flat run order)
    std::vector<std::uint64_t> calls;           // per system (flat run order)
    struct Stage {
        bool parallel = false;
        std::vector<const System*> systems;
        std::vector<std::size_t> index;  // flat run-order index of each system
    };
    std::vector<Stage> stages;
    std::vector<System> systems[kNumPhases];
    PosePool pool;
    std::mutex pool_mutex;
    std::vector<std::pair<const Skeleton*, std::vector<Vec3>>> rest_scales;  // shared scales
    std::vector<std::unique_ptr<ComponentStore>> stores;
    // Sparse side: entity index → dense index, generation per slot.
    std::vector<std::uint32_t> sparse;
    std::vector<std::uint32_t> generation;
    std::vector<std::uint32_t> free;

    std::span<Vec3> shared_rest_scales(const Skeleton& skeleton) {
        for (auto& [s, v] : rest_scales)
            if (s == &skeleton) return v;
        rest_scales.emplace_back(&skeleton, std::vector<Vec3>(skeleton.rest_scales().begin(), skeleton.rest_scales().end()));
        return rest_scales.back().second;
    }
};

void detail::job_rejected(const char* job) {
    std::fprintf(stderr, "slanim: %s rejected the input the runtime built for it (a runtime invariant is broken)\n", job);
    std::abort();
}

const char* phase_name(Phase p) {
    switch (p) {
        case Phase::Ingest: return "ingest";
        case Phase::Control: return "control";
        case Phase::Sample: return "sample";
        case Phase::Blend: return "blend";
        case Phase::Ik: return "ik";
        case Phase::LocalToModel: return "local_to_model";
        case Phase::Morph: return "morph";
        case Phase::Skin: return "skin";
    }
    return "?";
}

Status WorldOptions::validate() const {
    if (threads < 0 || threads > 256)
        return Error{"WorldOptions: threads " + std::to_string(threads) + " is not in [0, 256] (0 = one per core)"};
    if (chunk < 1) return Error{"WorldOptions: chunk " + std::to_string(chunk) + " is less than 1"};
    return {};
}

Result<std::unique_ptr<World>> World::create(const WorldOptions& options) {
    if (Status s = options.validate(); !s) return s.error();
    return std::unique_ptr<World>(new World(options));
}

World::World() : World(WorldOptions{}) {}

World::World(const WorldOptions& options) : impl_(std::make_unique<Impl>()) {
    Impl& x = *impl_;
    threads_ = options.threads != 0 ? options.threads
                                    : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    x.chunk = options.chunk;
#if SLANIM_RUNTIME_TBB
    if (threads_ > static_cast<int>(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)))
        x.allow = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                        static_cast<std::size_t>(threads_));
    if (threads_ > 1) x.arena = std::make_unique<tbb::task_arena>(threads_);
#else
    threads_ = 1;  // built without oneTBB (the WebAssembly build): every phase on the calling thread
#endif
    x.scratch.resize(static_cast<std::size_t>(threads_));
    x.seconds.resize(static_cast<std::size_t>(threads_));

    // The built-in features register their systems as they are made: LOD first (lod_select
    // and motion_control open the control phase, lod_interpolate opens local_to_model).
    add_store(std::make_unique<LodFeature>(*this));
    using namespace component;
    // Custom motions (custom_motion.hpp) update here too, reading the pose the last step left.
    add_system({Phase::Sample, "keyframe_sampling", {kController, kLocalPose, kModelPose}, {kController, kJointStates}, {},
                [](World& w, std::size_t i, float, WorkerScratch& s) {
                    const LocalPose& lp = w.local_pose_at(i);
                    const ModelPose& mp = w.model_pose_at(i);
                    w.controller_at(i).sample(s.blend, {lp.rotations, lp.positions, mp.rotations, mp.positions});
                }});
    add_system({Phase::Blend, "pose_blend", {kController, kJointStates}, {kLocalPose}, {},
                [](World& w, std::size_t i, float, WorkerScratch& s) {
                    MotionController& c = w.controller_at(i);
                    if (c.offers_scale()) w.own_scales_at(i);
                    c.blend(w.local_pose_at(i), s.blend);
                }});
    add_store(std::make_unique<IkFeature>(*this));
    add_system({Phase::LocalToModel, "local_to_model", {kSkeleton, kLocalPose}, {kModelPose}, {},
                [](World& w, std::size_t i, float, WorkerScratch&) { w.update_model_pose_at(i); }});
    add_store(std::make_unique<AppearanceFeature>(*this));
    add_store(std::make_unique<AttachmentOverrideFeature>(*this));
    add_store(std::make_unique<ProceduralFeature>(*this));
}

World::~World() = default;

Entity World::create_avatar(std::shared_ptr<const Skeleton> skeleton) {
    Impl& x = *impl_;
    std::uint32_t index;
    if (!x.free.empty()) {
        index = x.free.back();
        x.free.pop_back();
    } else {
        index = static_cast<std::uint32_t>(x.sparse.size());
        x.sparse.push_back(kNoDense);
        x.generation.push_back(0);
    }
    const Entity e = index | (x.generation[index] << kIndexBits);
    const std::size_t d = controllers_.size();
    x.sparse[index] = static_cast<std::uint32_t>(d);
    dense_to_entity_.push_back(e);

    const auto n = static_cast<std::size_t>(skeleton->num_joints());
    LocalPose lp;
    ModelPose mp;
    std::byte* block;
    {
        const std::lock_guard<std::mutex> lock(x.pool_mutex);
        block = x.pool.acquire(PosePool::pose_bytes(n));
    }
    PosePool::views(block, n, lp, mp);
    std::copy(skeleton->rest_positions().begin(), skeleton->rest_positions().end(), lp.positions.begin());
    std::copy(skeleton->rest_rotations().begin(), skeleton->rest_rotations().end(), lp.rotations.begin());
    lp.scales = x.shared_rest_scales(*skeleton);
    update_model_pose(*skeleton, lp, mp);
    pose_block_.push_back(block);
    scale_block_.push_back(nullptr);
    evaluation_.push_back(Evaluation::Full);

    controllers_.push_back(std::make_unique<MotionController>(skeleton));
    controllers_.back()->set_random_seed(e);  // custom motions' random numbers, per avatar
    controllers_.back()->set_state_need_sink(&x.state_need);
    x.max_joints = std::max(x.max_joints, skeleton->num_joints());
    skeletons_.push_back(std::move(skeleton));
    local_.push_back(lp);
    model_.push_back(mp);
    for (const auto& s : x.stores) s->push(*this, d);
    return e;
}

std::size_t World::index_of(Entity e) const {
    const Impl& x = *impl_;
    const std::uint32_t index = e & kIndexMask;
    if (e == kNullEntity || index >= x.sparse.size()) return kNoIndex;
    if (x.generation[index] != (e >> kIndexBits)) return kNoIndex;
    return x.sparse[index] == kNoDense ? kNoIndex : x.sparse[index];
}

bool World::destroy(Entity e) {
    const std::size_t d = index_of(e);
    if (d == kNoIndex) return false;
    Impl& x = *impl_;
    const std::size_t last = controllers_.size() - 1;
    const std::size_t n = local_[d].positions.size();
    release_block(PosePool::pose_bytes(n), pose_block_[d]);
    if (scale_block_[d]) release_block(PosePool::scale_bytes(n), scale_block_[d]);
    for (const auto& s : x.stores) s->erase(*this, d, last);  // before the core arrays move
    if (d != last) {  // swap-remove keeps the arrays dense
        pose_block_[d] = pose_block_[last];
        scale_block_[d] = scale_block_[last];
        evaluation_[d] = evaluation_[last];
        skeletons_[d] = std::move(skeletons_[last]);
        controllers_[d] = std::move(controllers_[last]);
        local_[d] = local_[last];
        model_[d] = model_[last];
        dense_to_entity_[d] = dense_to_entity_[last];
        x.sparse[dense_to_entity_[d] & kIndexMask] = static_cast<std::uint32_t>(d);
    }
    pose_block_.pop_back();
    scale_block_.pop_back();
    evaluation_.pop_back();
    skeletons_.pop_back();
    controllers_.pop_back();
    local_.pop_back();
    model_.pop_back();
    dense_to_entity_.pop_back();
    const std::uint32_t index = e & kIndexMask;
    x.sparse[index] = kNoDense;
    x.generation[index] = (x.generation[index] + 1) & (0xFFFFFFFFu >> kIndexBits);
    x.free.push_back(index);
    return true;
}

void World::update_model_pose_at(std::size_t i) { update_model_pose(*skeletons_[i], local_[i], model_[i]); }

LocalPose& World::local_pose(Entity e) {
    const std::size_t d = index_of(e);
    own_scales_at(d);  // the caller may write scales
    return local_[d];
}

void World::own_scales_at(std::size_t i) {
    if (scale_block_[i]) return;
    const std::size_t n = local_[i].positions.size();
    auto* b = static_cast<Vec3*>(acquire_block(PosePool::scale_bytes(n)));
    std::span<Vec3> own{b, n};
    std::copy(local_[i].scales.begin(), local_[i].scales.end(), own.begin());
    local_[i].scales = own;
    scale_block_[i] = b;
}

void* World::acquire_block(std::size_t bytes) {
    const std::lock_guard<std::mutex> lock(impl_->pool_mutex);  // may run in a per-avatar system
    return impl_->pool.acquire(PosePool::round64(bytes));
}

void World::release_block(std::size_t bytes, void* block) {
    const std::lock_guard<std::mutex> lock(impl_->pool_mutex);
    impl_->pool.release(PosePool::round64(bytes), static_cast<std::byte*>(block));
}

ComponentStore* World::add_store(std::unique_ptr<ComponentStore> store) {
    if (this->store(store->name())) return nullptr;
    for (std::size_t i = 0; i < size(); ++i) store->push(*this, i);
    impl_->stores.push_back(std::move(store));
    return impl_->stores.back().get();
}

ComponentStore* World::store(std::string_view name) const {
    for (const auto& s : impl_->stores)
        if (name == s->name()) return s.get();
    return nullptr;
}

bool World::add_system(System s) {
    if (static_cast<bool>(s.run) == static_cast<bool>(s.each)) return false;
    if (s.run && (s.phase == Phase::Sample || s.phase == Phase::Blend)) return false;
    Impl& x = *impl_;
    x.systems[static_cast<int>(s.phase)].push_back(std::move(s));
    // Stages: runs of consecutive per-avatar systems (fused per avatar), and whole-world ones.
    x.stages.clear();
    std::size_t flat = 0;
    for (const auto& phase : x.systems)
        for (const auto& sys : phase) {
            const bool par = sys.per_avatar();
            if (x.stages.empty() || !par || !x.stages.back().parallel) x.stages.push_back({par, {}, {}});
            x.stages.back().systems.push_back(&sys);
            x.stages.back().index.push_back(flat++);
        }
    x.calls.assign(flat, 0);
    for (auto& v : x.seconds) v.assign(flat, 0.0);
    return true;
}

std::vector<const System*> World::schedule() const {
    std::vector<const System*> out;
    for (const auto& phase : impl_->systems)
        for (const auto& s : phase) out.push_back(&s);
    return out;
}

void World::prefetch_ahead(std::size_t i, std::size_t end) const {
    // The next avatar's local and model pose (~12 KiB for 214 joints) while this one runs: a
    // crowd's poses do not stay in the caches from one step to the next, and the stage reads
    // and writes all of them. (Features prefetch their own state in their systems.)
    if (i + 1 < end) {
        const auto* p = static_cast<const char*>(pose_block_[i + 1]);
        const std::size_t bytes = PosePool::pose_bytes(skeletons_[i + 1]->num_joints());
        for (std::size_t o = 0; o < bytes; o += 64) __builtin_prefetch(p + o, 1, 3);
    }
}

void World::step(float dt) {
    Impl& x = *impl_;
    // Every thread's scratch fits the largest avatar before the loops start: which thread runs
    // which avatar is the scheduler's choice, and a scratch must not grow inside step(). The
    // maxima are kept as motions activate and avatars are created (an upper bound: they never
    // shrink), so this is not a serial pass over every avatar.
    const std::size_t states = x.state_need.load(std::memory_order_relaxed);
    for (WorkerScratch& w : x.scratch) {
        if (w.blend.rotations.size() < states) {
            w.blend.rotations.resize(states);
            w.blend.positions.resize(states);
        }
        if (w.blend.blender.num_joints() < x.max_joints) w.blend.blender.resize(x.max_joints);
    }
    for (std::size_t k = 0; k < x.stages.size(); ++k) run_stage(k, dt);
}

void World::run_stage(std::size_t k, float dt) {
    Impl& x = *impl_;
    const Impl::Stage& stage = x.stages[k];
    const std::size_t n = size();
    if (!stage.parallel) {
        for (std::size_t s = 0; s < stage.systems.size(); ++s) {
            const auto t0 = profiling_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
            stage.systems[s]->run(*this, dt);
            if (profiling_) {
                x.seconds[0][stage.index[s]] += seconds_since(t0);
                ++x.calls[stage.index[s]];
            }
        }
        return;
    }
    // One avatar runs through every system of the stage before the next avatar starts, on one
    // thread with that thread's scratch.
    const auto run_range = [&](std::size_t begin, std::size_t end, std::size_t slot) {
        WorkerScratch& scratch = x.scratch[slot];
        if (!profiling_) {
            for (std::size_t i = begin; i < end; ++i) {
                prefetch_ahead(i, end);
                for (const System* sys : stage.systems)
                    if (evaluation_[i] == Evaluation::Full || !skips(*sys, evaluation_[i])) sys->each(*this, i, dt, scratch);
            }
            return;
        }
        std::vector<double>& secs = x.seconds[slot];
        for (std::size_t i = begin; i < end; ++i)
            for (std::size_t s = 0; s < stage.systems.size(); ++s) {
                if (evaluation_[i] != Evaluation::Full && skips(*stage.systems[s], evaluation_[i])) continue;
                const auto t0 = std::chrono::steady_clock::now();
                stage.systems[s]->each(*this, i, dt, scratch);
                secs[stage.index[s]] += seconds_since(t0);
            }
    };
    [[maybe_unused]] const auto chunk = static_cast<std::size_t>(x.chunk);
#if SLANIM_RUNTIME_TBB
    const bool serial = !x.arena || n <= chunk;
#else
    constexpr bool serial = true;  // built without oneTBB: threads_ is 1
#endif
    if (serial) {
        run_range(0, n, 0);
    } else {
#if defined(__SANITIZE_THREAD__)
        // ThreadSanitizer builds: oneTBB from Debian is not instrumented, so TSan cannot see the
        // ordering its scheduler gives and reports TBB's own task bookkeeping. There the same
        // chunks run on plain std::threads (one per slot, fork-join per stage), which TSan sees
        // through: the stage's code, the components it touches and the per-thread scratch are
        // checked exactly as in the TBB build.
        std::atomic<std::size_t> next{0};
        const auto worker = [&](std::size_t slot) {
            for (std::size_t b; (b = next.fetch_add(chunk)) < n;) run_range(b, std::min(n, b + chunk), slot);
        };
        std::vector<std::thread> pool;
        for (int t = 1; t < threads_; ++t) pool.emplace_back(worker, static_cast<std::size_t>(t));
        worker(0);
        for (auto& t : pool) t.join();
#elif SLANIM_RUNTIME_TBB
        x.arena->execute([&] {
            tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, chunk), [&](const tbb::blocked_range<std::size_t>& r) {
                const int slot = tbb::this_task_arena::current_thread_index();
                run_range(r.begin(), r.end(), static_cast<std::size_t>(slot));
            });
        });
#endif
    }
    if (profiling_)
        for (std::size_t idx : stage.index) x.calls[idx] += n;
}

std::vector<SystemProfile> World::profile() const {
    std::vector<SystemProfile> out;
    std::size_t flat = 0;
    for (const auto& phase : impl_->systems)
        for (const auto& sys : phase) {
            SystemProfile p{&sys, 0.0, impl_->calls[flat]};
            for (const auto& v : impl_->seconds) p.seconds += v[flat];
            out.push_back(p);
            ++flat;
        }
    return out;
}

void World::reset_profile() {
    std::fill(impl_->calls.begin(), impl_->calls.end(), 0);
    for (auto& v : impl_->seconds) std::fill(v.begin(), v.end(), 0.0);
}

std::size_t World::avatar_state_bytes() const {
    std::size_t bytes = impl_->pool.live_bytes;
    for (const auto& c : controllers_) bytes += sizeof(MotionController) + c->state_bytes();
    for (const auto& s : impl_->stores) bytes += s->bytes();
    // One slot of every dense core array and of the handle tables.
    const std::size_t per_slot = sizeof(std::shared_ptr<const Skeleton>) + sizeof(std::unique_ptr<MotionController>) +
                                 sizeof(LocalPose) + sizeof(ModelPose) + sizeof(Evaluation) + sizeof(Entity) +
                                 2 * sizeof(void*) + 3 * sizeof(std::uint32_t);
    return bytes + per_slot * size();
}

}  // namespace slanim
