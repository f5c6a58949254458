// SPDX-License-Identifier: MIT
#include "slanim/runtime/world.hpp"

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>
#include <thread>

#include "slanim/core/local_to_model.hpp"
#include "slanim/runtime/appearance.hpp"
#include "attachment_state.hpp"

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
    job.run();
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

// Pose blocks: one per avatar, holding its local pose (rotations, positions) and model pose
// (rotations, positions) back to back, 64-byte aligned; local scales get a block of their own
// only when the avatar owns scales (see LocalPose). Blocks of one size are cut from slabs of
// kBlocksPerSlab and recycled through a free list, so a crowd's poses sit in a few large
// contiguous allocations and creating or destroying avatars does not fragment them.
struct World::PosePool {
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
    static std::size_t to_bytes(std::size_t n) { return round64(n * (sizeof(Quat) + sizeof(Vec3))); }
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

// The task arena and the per-thread scratch: slot k belongs to the arena's thread k
// (tbb::this_task_arena::current_thread_index()); with one thread, slot 0 and no arena.
struct World::Exec {
    // More threads than cores (tests, oversubscription experiments) need oneTBB's worker limit
    // raised for as long as this world lives.
    std::unique_ptr<tbb::global_control> allow;
    std::unique_ptr<tbb::task_arena> arena;
    std::vector<WorkerScratch> scratch;
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
    std::size_t num_systems = 0;
};

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

World::World(const WorldOptions& options) : exec_(std::make_unique<Exec>()), pool_(std::make_unique<PosePool>()) {
    if (options.threads < 0 || options.threads > 256)
        throw std::invalid_argument("World: threads must be in [0, 256] (0 = one per core)");
    if (options.chunk < 1) throw std::invalid_argument("World: chunk must be at least 1");
    threads_ = options.threads != 0 ? options.threads
                                    : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    chunk_ = options.chunk;
    if (threads_ > static_cast<int>(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)))
        exec_->allow = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                             static_cast<std::size_t>(threads_));
    if (threads_ > 1) exec_->arena = std::make_unique<tbb::task_arena>(threads_);
    exec_->scratch.resize(static_cast<std::size_t>(threads_));
    exec_->seconds.resize(static_cast<std::size_t>(threads_));

    using namespace component;
    // lod_select stays the first system of the control phase (lod_skips relies on it).
    add_system({Phase::Control, "lod_select", {kController, kLod}, {kLod, kLocalPose}, {},
                [](World& w, std::size_t i, float dt, WorkerScratch&) { w.lod_select_at(i, dt); }});
    add_system({Phase::Control, "motion_control", {kSkeleton, kLod}, {kController}, {},
                [](World& w, std::size_t i, float dt, WorkerScratch&) {
                    const LodState& l = w.lod_[i];
                    if (l.mode == LodMode::Hidden)
                        w.controller_at(i).control_minimal();
                    else
                        w.controller_at(i).control(l.mode == LodMode::Full && l.behind == 0.f ? dt : l.control_dt);
                }});
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
                    c.blend(w.local_pose_at(i).view(), s.blend);
                }});
    add_system({Phase::Ik, "constraints", {kSkeleton, kController, kIk}, {kLocalPose, kController}, {},
                [](World& w, std::size_t i, float, WorkerScratch&) { w.apply_constraints_at(i); }});
    add_system({Phase::LocalToModel, "lod_interpolate", {kLod}, {kLocalPose, kLod}, {},
                [](World& w, std::size_t i, float, WorkerScratch&) { w.lod_interpolate_at(i); }});
    add_system({Phase::LocalToModel, "local_to_model", {kSkeleton, kLocalPose}, {kModelPose}, {},
                [](World& w, std::size_t i, float, WorkerScratch&) {
                    w.update_model_pose_at(i);
                }});
}

World::~World() = default;

Entity World::create_avatar(std::shared_ptr<const Skeleton> skeleton) {
    std::uint32_t index;
    if (!free_.empty()) {
        index = free_.back();
        free_.pop_back();
    } else {
        index = static_cast<std::uint32_t>(sparse_.size());
        sparse_.push_back(kNoDense);
        generation_.push_back(0);
    }
    const Entity e = index | (generation_[index] << kIndexBits);
    sparse_[index] = static_cast<std::uint32_t>(controllers_.size());
    dense_to_entity_.push_back(e);

    const auto n = static_cast<std::size_t>(skeleton->num_joints());
    LocalPose lp;
    ModelPose mp;
    std::byte* block = pool_->acquire(PosePool::pose_bytes(n));
    PosePool::views(block, n, lp, mp);
    std::copy(skeleton->rest_positions().begin(), skeleton->rest_positions().end(), lp.positions.begin());
    std::copy(skeleton->rest_rotations().begin(), skeleton->rest_rotations().end(), lp.rotations.begin());
    lp.scales = shared_rest_scales(*skeleton);
    update_model_pose(*skeleton, lp, mp);
    pose_block_.push_back(block);
    scale_block_.push_back(nullptr);
    lod_.emplace_back();

    controllers_.push_back(std::make_unique<MotionController>(skeleton));
    controllers_.back()->set_random_seed(e);  // custom motions' random numbers, per avatar
    controllers_.back()->set_state_need_sink(&exec_->state_need);
    exec_->max_joints = std::max(exec_->max_joints, skeleton->num_joints());
    skeletons_.push_back(std::move(skeleton));
    local_.push_back(std::move(lp));
    model_.push_back(std::move(mp));
    ik_.push_back({false, {}, ik::default_ground(*skeletons_.back())});
    appearance_.emplace_back();
    overrides_.emplace_back();
    return e;
}

void World::apply_constraints_at(std::size_t i) {
    const ik::IkSettings& settings = ik_settings_at(i);
    if (!settings.enabled) return;
    MotionController& mc = *controllers_[i];
    const auto active = mc.active();
    // Oldest first, so the newest motion's constraints act last on a shared chain.
    for (std::size_t k = active.size(); k-- > 0;) {
        MotionInstance& m = *active[k];
        if (!m.evaluate || !m.ik) continue;
        ik::ApplyConstraintsJob job;
        job.skeleton = skeletons_[i].get();
        job.constraints = m.ik->constraints.constraints;
        job.states = m.ik->states;
        job.base_priority = m.clip->base_priority();
        job.time = m.curve_time;
        job.last_update_time = m.last_update_time;
        job.joint_mask = m.ik->joint_mask;
        job.pose_weight = m.pose_weight;
        job.clip = m.clip.get();
        job.frame_dt = mc.frame_dt();
        job.pixel_area = mc.pixel_area();
        job.ground = ik_[i].ground;
        job.settings = settings;
        job.pose = local_[i].view();
        job.reports = m.ik->reports;
        job.time_solves = ik_timing_;
        job.run();
    }
}

void World::set_ik_settings(Entity e, const ik::IkSettings& s) {
    IkComponent& c = ik_[dense_index(e)];
    c.own = true;
    c.settings = s;
}
void World::clear_ik_settings(Entity e) { ik_[dense_index(e)].own = false; }
const ik::IkSettings& World::ik_settings(Entity e) const { return ik_settings_at(dense_index(e)); }
void World::set_ground(Entity e, const ik::GroundPlane& g) { ik_[dense_index(e)].ground = g; }
const ik::GroundPlane& World::ground(Entity e) const { return ik_[dense_index(e)].ground; }

bool World::set_appearance(Entity e, std::shared_ptr<Appearance> appearance) {
    const std::uint32_t d = dense_index(e);
    if (d == kNoDense) return false;
    if (appearance && appearance->model().skeleton().num_joints() != skeletons_[d]->num_joints())
        return false;
    if (appearance && !appearance_systems_) {
        detail::add_appearance_systems(*this);
        appearance_systems_ = true;
    }
    if (appearance) own_scales_at(d);  // skeletal visual params scale joints
    appearance_[d] = std::move(appearance);
    return true;
}

Appearance* World::appearance(Entity e) const {
    const std::uint32_t d = dense_index(e);
    return d == kNoDense ? nullptr : appearance_[d].get();
}

std::uint32_t World::dense_index(Entity e) const {
    const std::uint32_t index = e & kIndexMask;
    if (e == kNullEntity || index >= sparse_.size()) return kNoDense;
    if (generation_[index] != (e >> kIndexBits)) return kNoDense;
    return sparse_[index];
}

bool World::valid(Entity e) const { return dense_index(e) != kNoDense; }

bool World::destroy(Entity e) {
    const std::uint32_t d = dense_index(e);
    if (d == kNoDense) return false;
    const std::uint32_t last = static_cast<std::uint32_t>(controllers_.size() - 1);
    const std::size_t n = local_[d].positions.size();
    pool_->release(PosePool::pose_bytes(n), static_cast<std::byte*>(pose_block_[d]));
    if (scale_block_[d]) pool_->release(PosePool::scale_bytes(n), static_cast<std::byte*>(scale_block_[d]));
    if (lod_[d].to_block) pool_->release(PosePool::to_bytes(n), static_cast<std::byte*>(lod_[d].to_block));
    if (d != last) {  // swap-remove keeps the arrays dense
        lod_[d] = lod_[last];
        pose_block_[d] = pose_block_[last];
        scale_block_[d] = scale_block_[last];
        skeletons_[d] = std::move(skeletons_[last]);
        controllers_[d] = std::move(controllers_[last]);
        local_[d] = std::move(local_[last]);
        model_[d] = std::move(model_[last]);
        ik_[d] = ik_[last];
        appearance_[d] = std::move(appearance_[last]);
        overrides_[d] = std::move(overrides_[last]);
        dense_to_entity_[d] = dense_to_entity_[last];
        sparse_[dense_to_entity_[d] & kIndexMask] = d;
    }
    pose_block_.pop_back();
    scale_block_.pop_back();
    lod_.pop_back();
    skeletons_.pop_back();
    controllers_.pop_back();
    local_.pop_back();
    model_.pop_back();
    ik_.pop_back();
    appearance_.pop_back();
    overrides_.pop_back();
    dense_to_entity_.pop_back();
    const std::uint32_t index = e & kIndexMask;
    sparse_[index] = kNoDense;
    generation_[index] = (generation_[index] + 1) & (0xFFFFFFFFu >> kIndexBits);
    free_.push_back(index);
    return true;
}

MotionController& World::controller(Entity e) { return *controllers_[dense_index(e)]; }
const Skeleton& World::skeleton(Entity e) const { return *skeletons_[dense_index(e)]; }
void World::update_model_pose_at(std::size_t i) { update_model_pose(*skeletons_[i], local_[i], model_[i]); }

LocalPose& World::local_pose(Entity e) {
    const std::uint32_t d = dense_index(e);
    own_scales_at(d);  // the caller may write scales
    return local_[d];
}

std::span<Vec3> World::shared_rest_scales(const Skeleton& skeleton) {
    for (auto& [s, v] : rest_scales_)
        if (s == &skeleton) return v;
    rest_scales_.emplace_back(&skeleton, std::vector<Vec3>(skeleton.rest_scales().begin(), skeleton.rest_scales().end()));
    return rest_scales_.back().second;
}

void World::own_scales_at(std::size_t i) {
    if (scale_block_[i]) return;
    const std::lock_guard<std::mutex> lock(pool_mutex_);  // may run in a per-avatar system
    const std::size_t n = local_[i].positions.size();
    auto* b = pool_->acquire(PosePool::scale_bytes(n));
    std::span<Vec3> own{reinterpret_cast<Vec3*>(b), n};
    std::copy(local_[i].scales.begin(), local_[i].scales.end(), own.begin());
    local_[i].scales = own;
    scale_block_[i] = b;
}
const ModelPose& World::model_pose(Entity e) const { return model_[dense_index(e)]; }

bool World::set_procedural_motions(Entity e, const ProceduralSet& set) {
    const std::uint32_t d = dense_index(e);
    if (d == kNoDense) return false;
    const std::shared_ptr<const Skeleton>& key = skeletons_[d];
    const ProceduralMotionTypes* types = nullptr;
    for (const auto& [s, t] : procedural_types_)
        if (s == key) types = &t;
    if (!types) {
        procedural_types_.emplace_back(key, ProceduralMotionTypes::create(*key));
        types = &procedural_types_.back().second;
    }
    return apply_procedural_set(*controllers_[d], *types, set);
}

bool World::set_look_at(Entity e, Vec3 target, LookAtFrame frame) {
    const std::uint32_t d = dense_index(e);
    if (d == kNoDense || !is_finite(target)) return false;
    controllers_[d]->set_look_at(target, frame);
    return true;
}

bool World::clear_look_at(Entity e) {
    const std::uint32_t d = dense_index(e);
    if (d == kNoDense) return false;
    controllers_[d]->clear_look_at();
    return true;
}

bool World::add_system(System s) {
    if (static_cast<bool>(s.run) == static_cast<bool>(s.each)) return false;
    if (s.run && (s.phase == Phase::Sample || s.phase == Phase::Blend)) return false;
    systems_[static_cast<int>(s.phase)].push_back(std::move(s));
    // Stages: runs of consecutive per-avatar systems (fused per avatar), and whole-world ones.
    Exec& x = *exec_;
    x.stages.clear();
    std::size_t flat = 0;
    for (const auto& phase : systems_)
        for (const auto& sys : phase) {
            const bool par = sys.per_avatar();
            if (x.stages.empty() || !par || !x.stages.back().parallel) x.stages.push_back({par, {}, {}});
            x.stages.back().systems.push_back(&sys);
            x.stages.back().index.push_back(flat++);
        }
    x.num_systems = flat;
    x.calls.assign(flat, 0);
    for (auto& v : x.seconds) v.assign(flat, 0.0);
    return true;
}

std::vector<const System*> World::schedule() const {
    std::vector<const System*> out;
    for (const auto& phase : systems_)
        for (const auto& s : phase) out.push_back(&s);
    return out;
}

void World::prefetch_ahead(std::size_t i, std::size_t end) const {
    // The next avatar's local and model pose (~12 KiB for 214 joints) while this one runs: a
    // crowd's poses do not stay in the caches from one step to the next, and the stage reads
    // and writes all of them.
    if (i + 1 < end) {
        const auto* p = static_cast<const char*>(pose_block_[i + 1]);
        const std::size_t bytes = PosePool::pose_bytes(skeletons_[i + 1]->num_joints());
        for (std::size_t o = 0; o < bytes; o += 64) __builtin_prefetch(p + o, 1, 3);
    }
    // Appearances are reached through pointers: each level is fetched one avatar before the
    // next level is read (the object three ahead, its mesh array two ahead, what that array
    // points to one ahead), so following them does not stall.
    if (i + 3 < end)
        if (const Appearance* a = appearance_[i + 3].get()) {
            __builtin_prefetch(a, 0, 3);
            __builtin_prefetch(reinterpret_cast<const char*>(a) + 64, 0, 3);
            __builtin_prefetch(reinterpret_cast<const char*>(a) + 128, 0, 3);
        }
    if (i + 2 < end)
        if (const Appearance* a = appearance_[i + 2].get()) a->prefetch(0);
    if (i + 1 < end)
        if (const Appearance* a = appearance_[i + 1].get()) a->prefetch(1);
}

void World::step(float dt) {
    Exec& x = *exec_;
    const std::size_t n = size();
    // Every thread's scratch fits the largest avatar before the loops start: which thread runs
    // which avatar is the scheduler's choice, and a scratch must not grow inside step(). The
    // maxima are kept as motions activate and avatars are created (an upper bound: they never
    // shrink), so this is not a serial pass over every avatar.
    const std::size_t states = x.state_need.load(std::memory_order_relaxed);
    const int joints = x.max_joints;
    for (WorkerScratch& w : x.scratch) {
        if (w.blend.rotations.size() < states) {
            w.blend.rotations.resize(states);
            w.blend.positions.resize(states);
        }
        if (w.blend.blender.num_joints() < joints) w.blend.blender.resize(joints);
    }
    for (const Exec::Stage& stage : x.stages) {
        if (!stage.parallel) {
            for (std::size_t k = 0; k < stage.systems.size(); ++k) {
                const auto t0 = profiling_ ? std::chrono::steady_clock::now()
                                           : std::chrono::steady_clock::time_point{};
                stage.systems[k]->run(*this, dt);
                if (profiling_) {
                    x.seconds[0][stage.index[k]] += seconds_since(t0);
                    ++x.calls[stage.index[k]];
                }
            }
            continue;
        }
        // One avatar runs through every system of the stage before the next avatar starts, on
        // one thread with that thread's scratch.
        const auto run_range = [&](std::size_t begin, std::size_t end, std::size_t slot) {
            WorkerScratch& scratch = x.scratch[slot];
            if (!profiling_) {
                for (std::size_t i = begin; i < end; ++i) {
                    prefetch_ahead(i, end);
                    for (const System* sys : stage.systems)
                        if (lod_[i].mode == LodMode::Full || !lod_skips(*sys, i)) sys->each(*this, i, dt, scratch);
                }
                return;
            }
            std::vector<double>& secs = x.seconds[slot];
            for (std::size_t i = begin; i < end; ++i)
                for (std::size_t k = 0; k < stage.systems.size(); ++k) {
                    if (lod_[i].mode != LodMode::Full && lod_skips(*stage.systems[k], i)) continue;
                    const auto t0 = std::chrono::steady_clock::now();
                    stage.systems[k]->each(*this, i, dt, scratch);
                    secs[stage.index[k]] += seconds_since(t0);
                }
        };
        if (!x.arena || n <= static_cast<std::size_t>(chunk_)) {
            run_range(0, n, 0);
        } else {
#if defined(__SANITIZE_THREAD__)
            // ThreadSanitizer builds: oneTBB from Debian is not instrumented, so TSan cannot see
            // the ordering its scheduler gives and reports TBB's own task bookkeeping. There the
            // same chunks run on plain std::threads (one per slot, fork-join per stage), which
            // TSan sees through: the stage's code, the components it touches and the per-thread
            // scratch are checked exactly as in the TBB build.
            std::atomic<std::size_t> next{0};
            const auto worker = [&](std::size_t slot) {
                for (std::size_t b; (b = next.fetch_add(static_cast<std::size_t>(chunk_))) < n;)
                    run_range(b, std::min(n, b + static_cast<std::size_t>(chunk_)), slot);
            };
            std::vector<std::thread> pool;
            for (int t = 1; t < threads_; ++t) pool.emplace_back(worker, static_cast<std::size_t>(t));
            worker(0);
            for (auto& t : pool) t.join();
#else
            x.arena->execute([&] {
                tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, static_cast<std::size_t>(chunk_)),
                                  [&](const tbb::blocked_range<std::size_t>& r) {
                                      const int slot = tbb::this_task_arena::current_thread_index();
                                      run_range(r.begin(), r.end(), static_cast<std::size_t>(slot));
                                  });
            });
#endif
        }
        if (profiling_)
            for (std::size_t idx : stage.index) x.calls[idx] += n;
    }
}

std::vector<SystemProfile> World::profile() const {
    std::vector<SystemProfile> out;
    std::size_t flat = 0;
    for (const auto& phase : systems_)
        for (const auto& sys : phase) {
            SystemProfile p{&sys, 0.0, exec_->calls[flat]};
            for (const auto& v : exec_->seconds) p.seconds += v[flat];
            out.push_back(p);
            ++flat;
        }
    return out;
}

void World::reset_profile() {
    std::fill(exec_->calls.begin(), exec_->calls.end(), 0);
    for (auto& v : exec_->seconds) std::fill(v.begin(), v.end(), 0.0);
}

std::size_t World::avatar_state_bytes() const {
    std::size_t bytes = pool_->live_bytes;
    for (const auto& c : controllers_) bytes += sizeof(MotionController) + c->state_bytes();
    for (const auto& o : overrides_)
        if (o) bytes += o->bytes();
    // One slot of every dense component array and of the handle tables.
    const std::size_t per_slot = sizeof(std::shared_ptr<const Skeleton>) + sizeof(std::unique_ptr<MotionController>) +
                                 sizeof(LocalPose) + sizeof(ModelPose) + sizeof(IkComponent) +
                                 sizeof(std::shared_ptr<Appearance>) +
                                 sizeof(std::unique_ptr<detail::AttachmentState>) + sizeof(Entity) + 2 * sizeof(void*) + sizeof(LodState) +
                                 3 * sizeof(std::uint32_t);
    return bytes + per_slot * size();
}

bool World::set_visible(Entity e, bool visible) {
    const std::uint32_t d = dense_index(e);
    if (d == kNoDense) return false;
    lod_[d].visible = visible;
    return true;
}

bool World::visible(Entity e) const {
    const std::uint32_t d = dense_index(e);
    return d != kNoDense && lod_[d].visible;
}

int World::update_period_at(std::size_t i) const { return lod_[i].visible ? lod_[i].period : 0; }

bool World::lod_skips(const System& s, std::size_t i) const {
    switch (lod_[i].mode) {
        case LodMode::Full:
        case LodMode::Update: return false;
        case LodMode::Hidden:  // updateMotionsMinimal only: motion_control, nothing after it
            return s.phase > Phase::Control;
        case LodMode::Interpolate:  // between updates: only the interpolation and what follows
            return s.phase <= Phase::Ik && &s != &systems_[static_cast<int>(Phase::Control)][0];
    }
    return false;
}

// Decides this step's LOD mode of avatar i (the first control system). An avatar changes its
// update period only when its display has reached the last evaluated pose, so the controller's
// clock and the display's never drift apart.
void World::lod_select_at(std::size_t i, float dt) {
    LodState& l = lod_[i];
    if (!l.visible) {
        l.mode = LodMode::Hidden;
        return;
    }
    if (l.mode == LodMode::Hidden) l.elapsed = l.span = 0.f;  // shown again: start afresh
    if (l.elapsed < l.span) {
        l.elapsed += dt;
        l.mode = LodMode::Interpolate;
        return;
    }
    int period = 1;
    if (lod_settings_.enabled) {
        const float area = controllers_[i]->pixel_area();
        period = area >= lod_settings_.full_rate_area ? 1 : area >= lod_settings_.half_rate_area ? 2 : 4;
    }
    l.period = static_cast<std::uint8_t>(period);
    const float behind = l.elapsed - l.span;  // the display ran past the last target (≥ 0)
    l.elapsed = l.span = 0.f;
    if (period == 1) {
        if (l.to_block) {
            const std::lock_guard<std::mutex> lock(pool_mutex_);
            pool_->release(PosePool::to_bytes(local_[i].positions.size()), static_cast<std::byte*>(l.to_block));
            l.to_block = nullptr;
        }
        l.mode = LodMode::Full;
        l.behind = behind;
        l.control_dt = dt + behind;
        return;
    }
    // Update: evaluate `period` steps ahead into the "to" pose; the display then moves toward
    // it over those steps (this one included).
    const std::size_t n = local_[i].positions.size();
    LocalPose& lp = local_[i];
    auto* q = static_cast<Quat*>(l.to_block);
    if (!l.to_block) {
        {
            const std::lock_guard<std::mutex> lock(pool_mutex_);
            l.to_block = pool_->acquire(PosePool::to_bytes(n));
        }
        q = static_cast<Quat*>(l.to_block);
        std::copy(lp.rotations.begin(), lp.rotations.end(), q);
        std::copy(lp.positions.begin(), lp.positions.end(), reinterpret_cast<Vec3*>(q + n));
    }
    l.display_rotations = lp.rotations;
    l.display_positions = lp.positions;
    lp.rotations = {q, n};
    lp.positions = {reinterpret_cast<Vec3*>(q + n), n};
    l.span = static_cast<float>(period) * dt;
    l.elapsed = dt;
    l.last_f = 0.f;
    l.behind = 0.f;
    l.control_dt = behind + l.span;
    l.mode = LodMode::Update;
}

// Moves the displayed local pose toward the evaluated one (the first local_to_model system):
// positions by lerp, rotations by the viewer's nlerp, each step the fraction of the way left
// that keeps the display on the straight line between the poses of the two updates.
void World::lod_interpolate_at(std::size_t i) {
    LodState& l = lod_[i];
    if (l.mode != LodMode::Update && l.mode != LodMode::Interpolate) return;
    LocalPose& lp = local_[i];
    if (l.mode == LodMode::Update) {
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
