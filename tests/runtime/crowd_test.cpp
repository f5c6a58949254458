// SPDX-License-Identifier: MIT
// The crowd-scale world: bit-identical results for every thread count, no allocation in
// step() once motions are loaded, the per-avatar memory budget, the system rules, and the churn
// crowd (Crowd: deterministic schedule, gestures that start and stop, emotes and hand poses in
// flight, no allocation once warmed).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>

#include "slanim/formats/anim_codec.hpp"
#include "slanim/runtime/appearance.hpp"
#include "slanim/runtime/appearance_feature.hpp"
#include "slanim/runtime/crowd.hpp"
#include "slanim/runtime/lod_feature.hpp"
#include "slanim/runtime/procedural_feature.hpp"
#include "slanim/runtime/world.hpp"
#include "synthetic_appearance.hpp"

using namespace slanim;

// A counting allocator for this test binary: every operator new/delete goes through it; it
// counts calls and live bytes while `g_count` is on (a header before each block keeps its size).
namespace {
std::atomic<bool> g_count{false};
std::atomic<long long> g_news{0};
std::atomic<long long> g_live{0};
constexpr std::size_t kHeader = 64;  // keeps every alignment up to 64 bytes

void* counted_alloc(std::size_t n, std::size_t align) {
    if (align < alignof(std::max_align_t)) align = alignof(std::max_align_t);
    const std::size_t header = align > kHeader ? align : kHeader;
    void* raw = std::aligned_alloc(align, ((n + header + align - 1) / align) * align);
    if (!raw) throw std::bad_alloc();
    auto* user = static_cast<unsigned char*>(raw) + header;
    std::memcpy(user - sizeof(std::size_t), &n, sizeof n);
    std::memcpy(user - 2 * sizeof(std::size_t), &header, sizeof header);
    if (g_count.load(std::memory_order_relaxed)) {
        g_news.fetch_add(1, std::memory_order_relaxed);
        g_live.fetch_add(static_cast<long long>(n), std::memory_order_relaxed);
    }
    return user;
}
void counted_free(void* p) noexcept {
    if (!p) return;
    auto* user = static_cast<unsigned char*>(p);
    std::size_t n = 0, header = 0;
    std::memcpy(&n, user - sizeof(std::size_t), sizeof n);
    std::memcpy(&header, user - 2 * sizeof(std::size_t), sizeof header);
    if (g_count.load(std::memory_order_relaxed)) g_live.fetch_sub(static_cast<long long>(n), std::memory_order_relaxed);
    std::free(user - header);
}
}  // namespace

void* operator new(std::size_t n) { return counted_alloc(n, 0); }
void* operator new[](std::size_t n) { return counted_alloc(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) { return counted_alloc(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted_alloc(n, static_cast<std::size_t>(a)); }
// The nothrow forms too: sanitizer runtimes replace them separately, and their blocks come back
// through the plain operator delete.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return counted_alloc(n, 0);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    try {
        return counted_alloc(n, static_cast<std::size_t>(a));
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t& t) noexcept {
    return operator new(n, a, t);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { counted_free(p); }

namespace {

const std::shared_ptr<const Skeleton>& skeleton() {
    static const std::shared_ptr<const Skeleton> s = Skeleton::default_skeleton();
    return s;
}

// The crowd mix: the four real motions of the crowd benchmark when ../shared is present (a
// walk, a dance, a Bento hand/face motion, a constrained motion; looped), else the generated
// demo mix. `real` says which.
std::vector<std::shared_ptr<const MotionClip>> crowd_clips(bool* real = nullptr) {
    std::vector<std::shared_ptr<const MotionClip>> clips;
    const std::filesystem::path dir = std::filesystem::path(SLANIM_SHARED_DIR) / "anims";
    for (const char* f : {"linden/WALK.anim", "linden/DANCE4.anim",
                          "reference/bento_randomize_bones_and_attachments.anim", "linden/BOW.anim"}) {
        if (!std::filesystem::exists(dir / f)) break;
        auto m = load_motion((dir / f).string(), *skeleton());
        if (!m) break;
        make_looping(*m);
        clips.push_back(MotionClip::build(*m, *skeleton(), f));
    }
    if (real) *real = clips.size() == 4;
    if (clips.size() == 4) return clips;
    clips.clear();
    for (auto& d : make_crowd_demo_motions(*skeleton()))
        clips.push_back(MotionClip::build(d.motion, *skeleton(), d.name));
    return clips;
}

// Plays a scripted crowd (starts, stops, a destroyed avatar) and returns every model pose of
// every 10th frame, as raw bytes.
std::vector<unsigned char> play_crowd(int threads, bool lod) {
    WorldOptions o;
    o.threads = threads;
    o.chunk = 4;
    auto w_owner = World::create(o).value();
    World& w = *w_owner;
    const auto clips = crowd_clips();
    const auto ents = populate_crowd(w, skeleton(), clips, 41);
    if (lod) {  // every update period and hidden avatars in the mix
        LodSettings s;
        s.enabled = true;
        LodFeature::of(w).set_settings(s);
        const float areas[] = {1e6f, 5000.f, 100.f};
        for (std::size_t k = 0; k < ents.size(); ++k) w.controller(ents[k]).set_pixel_area(areas[k % 3]);
        for (std::size_t k = 0; k < ents.size(); k += 5) LodFeature::of(w).set_visible(ents[k], false);
    }
    std::vector<unsigned char> out;
    for (int f = 0; f < 150; ++f) {
        if (f == 30)
            for (std::size_t k = 0; k < ents.size(); k += 3) w.controller(ents[k]).stop(clips[1].get());
        if (f == 50) w.destroy(ents[7]);
        if (f == 70)
            for (std::size_t k = 0; k < ents.size(); k += 3)
                if (w.valid(ents[k])) w.controller(ents[k]).start(clips[1]);
        w.step(1.f / 60.f);
        if (f % 10 != 9) continue;
        for (std::size_t i = 0; i < w.size(); ++i) {
            const ModelPose& p = w.model_pose_at(i);
            const auto* a = reinterpret_cast<const unsigned char*>(p.positions.data());
            out.insert(out.end(), a, a + p.positions.size_bytes());
            const auto* b = reinterpret_cast<const unsigned char*>(p.rotations.data());
            out.insert(out.end(), b, b + p.rotations.size_bytes());
        }
    }
    return out;
}

// A crowd with the procedural motions on (every avatar its own look-at target, moved during
// the run; some avatars with only some of the motions, one switched off and on again), with the
// crowd motions or, with `keyframes` off, alone. Returns every 10th frame's model poses.
std::vector<unsigned char> play_procedural_crowd(int threads, bool lod) {
    WorldOptions o;
    o.threads = threads;
    o.chunk = 4;
    auto w_owner = World::create(o).value();
    World& w = *w_owner;
    const auto clips = crowd_clips();
    const auto ents = populate_crowd(w, skeleton(), clips, 41);
    for (std::size_t k = 0; k < ents.size(); ++k) {
        ProceduralSet set = ProceduralSet::all();
        if (k % 4 == 1) set.eye = false;
        if (k % 4 == 2) set.body_noise = set.breathe = false;
        EXPECT_TRUE(ProceduralFeature::of(w).set_motions(ents[k], set));
        const float a = static_cast<float>(k) * 0.7f;
        ProceduralFeature::of(w).set_look_at(ents[k], Vec3{2.f * std::cos(a), 2.f * std::sin(a), 1.5f});
    }
    if (lod) {
        LodSettings s;
        s.enabled = true;
        LodFeature::of(w).set_settings(s);
        const float areas[] = {1e6f, 5000.f, 100.f};
        for (std::size_t k = 0; k < ents.size(); ++k) w.controller(ents[k]).set_pixel_area(areas[k % 3]);
        for (std::size_t k = 0; k < ents.size(); k += 5) LodFeature::of(w).set_visible(ents[k], false);
    }
    std::vector<unsigned char> out;
    for (int f = 0; f < 150; ++f) {
        if (f == 40)
            for (std::size_t k = 0; k < ents.size(); k += 2) ProceduralFeature::of(w).set_look_at(ents[k], Vec3{0.4f, -1.f, 1.f}, LookAtFrame::HeadOffset);
        if (f == 60) ProceduralFeature::of(w).set_motions(ents[3], {});
        if (f == 80) ProceduralFeature::of(w).set_motions(ents[3], ProceduralSet::all());
        if (f == 90) ProceduralFeature::of(w).clear_look_at(ents[5]);
        w.step(1.f / 60.f);
        if (f % 10 != 9) continue;
        for (std::size_t i = 0; i < w.size(); ++i) {
            const ModelPose& p = w.model_pose_at(i);
            const auto* a = reinterpret_cast<const unsigned char*>(p.positions.data());
            out.insert(out.end(), a, a + p.positions.size_bytes());
            const auto* b = reinterpret_cast<const unsigned char*>(p.rotations.data());
            out.insert(out.end(), b, b + p.rotations.size_bytes());
        }
    }
    return out;
}

}  // namespace

/// Heap allocations made by `frames` steps of 1/60 s, `before_step(f)` running before step f
/// (counted by this file's operator new).
template <class BeforeStep>
long long step_allocations(World& w, int frames, BeforeStep&& before_step) {
    g_news = 0;
    g_count = true;
    for (int f = 0; f < frames; ++f) {
        before_step(f);
        w.step(1.f / 60.f);
    }
    g_count = false;
    return g_news.load();
}

/// `play(threads, lod)` gives the same bytes on 2 and 4 threads as on 1, with and without LOD.
template <class Play>
void expect_identical_for_every_thread_count(Play&& play) {
    for (bool lod : {false, true}) {
        const auto one = play(1, lod);
        ASSERT_FALSE(one.empty());
        for (int threads : {2, 4}) {
            const auto other = play(threads, lod);
            ASSERT_EQ(other.size(), one.size());
            EXPECT_EQ(std::memcmp(other.data(), one.data(), one.size()), 0) << threads << " threads, lod " << lod;
        }
    }
}

TEST(Crowd, EveryThreadCountGivesBitIdenticalPoses) {
    expect_identical_for_every_thread_count([](int threads, bool lod) { return play_crowd(threads, lod); });
}

TEST(Crowd, StepDoesNotAllocateOnceMotionsAreLoaded) {
#if defined(__SANITIZE_THREAD__)
    GTEST_SKIP() << "ThreadSanitizer build: World::step forks std::threads there (see world.cpp)";
#endif
    for (int threads : {1, 2}) {
        WorldOptions o;
        o.threads = threads;
        auto w_owner = World::create(o).value();
    World& w = *w_owner;
        const auto clips = crowd_clips();
        populate_crowd(w, skeleton(), clips, 64);
        for (int f = 0; f < 5; ++f) w.step(1.f / 60.f);  // the scratch grows to its need
        EXPECT_EQ(step_allocations(w, 240, [](int) {}), 0) << threads << " threads";
    }
}

TEST(Crowd, SharedBindPosesStopAllocatingOnceTheirShapesRepeat) {
#if defined(__SANITIZE_THREAD__)
    GTEST_SKIP() << "ThreadSanitizer build: World::step forks std::threads there (see world.cpp)";
#endif
    // Sixteen skinned avatars sharing bind poses; every 6 frames a quarter of them toggles a
    // morph (half-closed eye / open), so shared entries are left for fresh ones and settle back
    // onto shared ones all the time. Once the free entries cover the largest number of avatars
    // between shapes at once, nothing is allocated any more.
    test::Synthetic f;
    for (int threads : {1, 2}) {
        WorldOptions o;
        o.threads = threads;
        o.chunk = 2;
        auto w_owner = World::create(o).value();
    World& w = *w_owner;
        AppearanceOptions ao;
        ao.bind_poses = std::make_shared<BindPoseCache>();
        std::vector<Appearance*> apps;
        for (int k = 0; k < 16; ++k) {
            const Entity e = w.create_avatar(skeleton());
            auto a = Appearance::create(f.model, ao);
            ASSERT_TRUE(a) << a.error().describe();
            apps.push_back(a->get());
            AppearanceFeature::of(w).set(e, std::shared_ptr<Appearance>(std::move(*a)));
        }
        const ParamIndex blink = f.model->find("Blink_Left");
        const auto toggle = [&](int frame) {
            if (frame % 6 != 0) return;
            for (std::size_t k = static_cast<std::size_t>(frame / 6 % 4); k < apps.size(); k += 4)
                apps[k]->state().set_weight(blink, apps[k]->state().weight(blink) == 0.f ? 0.5f : 0.f);
        };
        for (int frame = 0; frame < 48; ++frame) {  // two full cycles
            toggle(frame);
            w.step(1.f / 60.f);
        }
        const auto hits = ao.bind_poses->stats().hits;
        EXPECT_EQ(step_allocations(w, 96, toggle), 0) << threads << " threads";
        EXPECT_GE(ao.bind_poses->stats().hits, hits + 60) << "the avatars kept settling onto shared bind poses";
        // Each quarter toggled six times in 144 frames: all eyes open again, one shape for all.
        EXPECT_EQ(ao.bind_poses->stats().in_use, 1u);
    }
}

TEST(Crowd, FourActiveMotionsFitIn16KiBPerAvatar) {
    bool real = false;
    const auto clips = crowd_clips(&real);
    constexpr int kAvatars = 256;
    WorldOptions o;
    o.threads = 1;
    auto w_owner = World::create(o).value();
    World& w = *w_owner;
    g_live = 0;
    g_count = true;
    const auto ents = populate_crowd(w, skeleton(), clips, kAvatars);
    for (int f = 0; f < 10; ++f) w.step(1.f / 60.f);
    g_count = false;
    for (Entity e : ents) ASSERT_EQ(w.controller(e).active().size(), 4u);
    // Heap held per avatar, as the counting allocator sees it (the per-thread scratch included,
    // shared over the crowd), and as the world reports it.
    const double heap = static_cast<double>(g_live.load()) / kAvatars;
    const double reported = static_cast<double>(w.avatar_state_bytes()) / kAvatars;
    std::printf("per avatar (%s motions): heap %.0f B, avatar_state_bytes %.0f B\n", real ? "real" : "demo", heap,
                reported);
    EXPECT_LE(heap, 16384.0);
    EXPECT_LE(reported, 16384.0);
    EXPECT_NEAR(reported, heap, heap * 0.1);
}

TEST(Crowd, WorldRejectsBadOptionsAndSystems) {
    for (const WorldOptions& bad : {WorldOptions{-1, 8}, WorldOptions{257, 8}, WorldOptions{1, 0}}) {
        const auto created = World::create(bad);
        ASSERT_FALSE(created.ok());
        EXPECT_FALSE(bad.validate().ok());
        EXPECT_EQ(created.error().message, bad.validate().error().message);
    }
    EXPECT_NE(World::create(WorldOptions{-1, 8}).error().message.find("threads"), std::string::npos);
    EXPECT_NE(World::create(WorldOptions{1, 0}).error().message.find("chunk"), std::string::npos);
    EXPECT_TRUE((WorldOptions{256, 1}.validate().ok()));
    auto w_owner = World::create(WorldOptions{3, 8}).value();
    World& w = *w_owner;
    EXPECT_EQ(w.threads(), 3);
    EXPECT_GE(World().threads(), 1);
    // Neither or both kinds of function; a whole-world system where joint states are in scratch.
    EXPECT_FALSE(w.add_system({Phase::Morph, "none", {}, {}, {}, {}}));
    EXPECT_FALSE(w.add_system({Phase::Morph, "both", {}, {}, [](World&, float) {},
                               [](World&, std::size_t, float, WorkerScratch&) {}}));
    EXPECT_FALSE(w.add_system({Phase::Sample, "serial", {}, {}, [](World&, float) {}, {}}));
    EXPECT_FALSE(w.add_system({Phase::Blend, "serial", {}, {}, [](World&, float) {}, {}}));
    EXPECT_TRUE(w.add_system({Phase::Blend, "per avatar", {}, {}, {},
                              [](World&, std::size_t, float, WorkerScratch&) {}}));
    EXPECT_TRUE(w.add_system({Phase::Morph, "serial", {}, {}, [](World&, float) {}, {}}));
}

// A per-avatar system sees every avatar exactly once per step whatever the thread count, and
// whole-world systems run alone between the per-avatar stages.
TEST(Crowd, PerAvatarSystemsSeeEveryAvatarOnce) {
    for (int threads : {1, 2, 4}) {
        auto w_owner = World::create(WorldOptions{threads, 3}).value();
    World& w = *w_owner;
        for (int k = 0; k < 50; ++k) w.create_avatar(skeleton());
        std::vector<std::atomic<int>> seen(50);
        std::atomic<int> in_flight{0};
        bool overlapped = false;
        w.add_system({Phase::Ik, "count", {}, {}, {}, [&](World&, std::size_t i, float, WorkerScratch&) {
                          in_flight.fetch_add(1);
                          seen[i].fetch_add(1);
                          in_flight.fetch_sub(1);
                      }});
        w.add_system({Phase::Morph, "serial", {}, {}, [&](World&, float) { overlapped |= in_flight.load() != 0; }, {}});
        for (int f = 0; f < 3; ++f) w.step(1.f / 60.f);
        for (auto& s : seen) EXPECT_EQ(s.load(), 3) << threads;
        EXPECT_FALSE(overlapped);
    }
}

// Avatars share their skeleton's rest scales until one needs its own: writing through
// World::local_pose gives that avatar a private copy, and the others keep the rest scales.
TEST(Crowd, ScalesAreSharedUntilAnAvatarWritesItsOwn) {
    auto w_owner = World::create(WorldOptions{1, 8}).value();
    World& w = *w_owner;
    const Entity a = w.create_avatar(skeleton()), b = w.create_avatar(skeleton());
    EXPECT_EQ(w.local_pose_at(0).scales.data(), w.local_pose_at(1).scales.data());
    const int chest = skeleton()->find("mChest");
    ASSERT_GE(chest, 0);
    const auto head = static_cast<std::size_t>(skeleton()->find("mNeck"));
    w.local_pose(a).scales[static_cast<std::size_t>(chest)] = Vec3{2.f, 2.f, 2.f};
    EXPECT_NE(w.local_pose_at(0).scales.data(), w.local_pose_at(1).scales.data());
    w.step(1.f / 60.f);
    EXPECT_EQ(w.local_pose(b).scales[static_cast<std::size_t>(chest)], skeleton()->rest_scales()[static_cast<std::size_t>(chest)]);
    // The chest's scale stretches its children's offsets in a only.
    const Vec3 da = w.model_pose(a).positions[head] - w.model_pose(a).positions[static_cast<std::size_t>(chest)];
    const Vec3 db = w.model_pose(b).positions[head] - w.model_pose(b).positions[static_cast<std::size_t>(chest)];
    EXPECT_NEAR(length(da), 2.f * length(db), 1e-5f);
}

// The procedural motions (random saccades and blinks included) give the same poses on 1, 2
// and 4 threads, with and without LOD.
TEST(Crowd, ProceduralMotionsAreBitIdenticalForEveryThreadCount) {
    expect_identical_for_every_thread_count([](int threads, bool lod) { return play_procedural_crowd(threads, lod); });
}

// Custom and procedural motions allocate nothing in step() once started, and an avatar playing
// the crowd's four motions and the four procedural ones stays within 16 KiB.
TEST(Crowd, ProceduralMotionsDoNotAllocateInStepAndFitIn16KiB) {
#if defined(__SANITIZE_THREAD__)
    GTEST_SKIP() << "ThreadSanitizer build: World::step forks std::threads there (see world.cpp)";
#endif
    for (int threads : {1, 2}) {
        WorldOptions o;
        o.threads = threads;
        auto w_owner = World::create(o).value();
    World& w = *w_owner;
        const auto clips = crowd_clips();
        const auto ents = populate_crowd(w, skeleton(), clips, 64);
        for (Entity e : ents) {
            ASSERT_TRUE(ProceduralFeature::of(w).set_motions(e, ProceduralSet::all()));
            ProceduralFeature::of(w).set_look_at(e, Vec3{3.f, 1.f, 1.6f});
        }
        for (int f = 0; f < 5; ++f) w.step(1.f / 60.f);
        const auto move_targets = [&](int f) {  // moving targets cost nothing either
            if (f == 100)
                for (Entity e : ents) ProceduralFeature::of(w).set_look_at(e, Vec3{-1.f, 2.f, 1.f}, LookAtFrame::HeadOffset);
        };
        EXPECT_EQ(step_allocations(w, 240, move_targets), 0) << threads << " threads";
    }
    bool real = false;
    const auto clips = crowd_clips(&real);
    constexpr int kAvatars = 256;
    auto w_owner = World::create(WorldOptions{1, 8}).value();
    World& w = *w_owner;
    g_live = 0;
    g_count = true;
    const auto ents = populate_crowd(w, skeleton(), clips, kAvatars);
    for (int f = 0; f < 10; ++f) w.step(1.f / 60.f);
    const long long heap_before = g_live.load();
    const std::size_t before = w.avatar_state_bytes();
    for (Entity e : ents) ProceduralFeature::of(w).set_motions(e, ProceduralSet::all());
    for (int f = 0; f < 10; ++f) w.step(1.f / 60.f);
    g_count = false;
    for (Entity e : ents) ASSERT_EQ(w.controller(e).active().size(), 8u);
    const double added_heap = static_cast<double>(g_live.load() - heap_before) / kAvatars;
    const double heap = static_cast<double>(g_live.load()) / kAvatars;
    const double added = static_cast<double>(w.avatar_state_bytes() - before) / kAvatars;
    const double total = static_cast<double>(w.avatar_state_bytes()) / kAvatars;
    std::printf("with the procedural motions, per avatar (%s motions): heap %.0f B (+%.0f), avatar_state_bytes "
                "%.0f B (+%.0f)\n", real ? "real" : "demo", heap, added_heap, total, added);
    EXPECT_NEAR(added, added_heap, added_heap * 0.1);
    // Four motions and the four procedural ones still fit the 16 KiB budget.
    EXPECT_LE(heap, 16384.0);
    EXPECT_LE(total, 16384.0);
}

namespace {

// The churn crowd of these tests: base motions of the crowd mix (one per avatar) and the
// generated gesture, its emote turned into one the synthetic appearance has (express_smile).
CrowdMix churn_mix() {
    CrowdMix mix;
    mix.clips = crowd_clips();
    DemoMotion g = make_demo_gesture(*skeleton());
    g.motion.emote_name = "express_smile";
    mix.gestures.push_back(MotionClip::build(g.motion, *skeleton(), g.name));
    return mix;
}

std::unique_ptr<Crowd> make_churn(World& w, int avatars, std::uint64_t seed = 1) {
    CrowdSettings s;
    s.mode = CrowdMode::Churn;
    s.seed = seed;
    auto c = Crowd::create(w, skeleton(), churn_mix(), s, avatars);
    EXPECT_TRUE(c) << c.error().describe();
    return std::move(c.value());
}

// Every 10th frame's model poses of a churn crowd over 8 s (each avatar starts two gestures or
// more), as raw bytes.
std::vector<unsigned char> play_churn(int threads, std::uint64_t seed) {
    auto w_owner = World::create(WorldOptions{threads, 4}).value();
    World& w = *w_owner;
    const auto crowd = make_churn(w, 41, seed);
    std::vector<unsigned char> out;
    for (int f = 0; f < 480; ++f) {
        crowd->step();
        if (f % 10 != 9) continue;
        for (std::size_t i = 0; i < w.size(); ++i) {
            const ModelPose& p = w.model_pose_at(i);
            const auto* a = reinterpret_cast<const unsigned char*>(p.positions.data());
            out.insert(out.end(), a, a + p.positions.size_bytes());
            const auto* b = reinterpret_cast<const unsigned char*>(p.rotations.data());
            out.insert(out.end(), b, b + p.rotations.size_bytes());
        }
    }
    return out;
}

}  // namespace

// The churn schedule runs on the crowd's clock: the same poses bit for bit on 1, 2 and 4
// threads and in a second run; another seed gives another crowd.
TEST(Crowd, ChurnIsDeterministicAndBitIdenticalForEveryThreadCount) {
    const auto one = play_churn(1, 1);
    ASSERT_FALSE(one.empty());
    EXPECT_EQ(play_churn(1, 1), one) << "a second run";
    for (int threads : {2, 4}) {
        const auto other = play_churn(threads, 1);
        ASSERT_EQ(other.size(), one.size());
        EXPECT_EQ(std::memcmp(other.data(), one.data(), one.size()), 0) << threads << " threads";
    }
    EXPECT_NE(play_churn(2, 7), one) << "the seed picks base motions and gesture times";
}

// Gestures really start, play and stop: each avatar's gesture instance becomes active at its
// scheduled time, runs out after its duration and ease-out (the controller drops it from the
// active list) and starts again at the next slot; every 3-5 s on average.
TEST(Crowd, ChurnGesturesStartAndStop) {
    auto w_owner = World::create(WorldOptions{2, 4}).value();
    World& w = *w_owner;
    const auto crowd = make_churn(w, 16);
    std::vector<int> starts(16, 0), stops(16, 0);
    std::vector<bool> was(16, false);
    const auto active_gesture = [&](std::size_t k) {
        for (const auto& m : w.controller(crowd->avatars()[k]).active())
            if (m->clip->name() == "demo_gesture" && !m->deprecated) return true;
        return false;
    };
    for (int f = 0; f < 1200; ++f) {  // 20 s
        crowd->step();
        for (std::size_t k = 0; k < 16; ++k) {
            const bool now = active_gesture(k);
            starts[k] += now && !was[k];
            stops[k] += !now && was[k];
            was[k] = now;
        }
    }
    for (std::size_t k = 0; k < 16; ++k) {
        EXPECT_GE(starts[k], 3) << "avatar " << k;  // 20 s / ≤ 5 s, the first within 4 s
        EXPECT_LE(starts[k], 7) << "avatar " << k;  // 20 s / ≥ 3 s
        EXPECT_GE(stops[k], starts[k] - 1) << "avatar " << k;
        // Between gestures only the base motion plays (with the pelvis fix, if any).
        EXPECT_LE(w.controller(crowd->avatars()[k]).active().size(), 3u);
    }
    EXPECT_EQ(crowd->gestures_started(), [&] {
        std::uint64_t n = 0;
        for (int s : starts) n += static_cast<std::uint64_t>(s);
        return n;
    }());
}

// With an Appearance, the gestures' emote and hand pose are in flight: at any time some avatars
// morph their face (express_smile) or hand (salute_r) while others have none.
TEST(Crowd, ChurnWarmUpReachesTheSteadyState) {
    // A churn crowd's first gestures are staggered over one period: the warm-up covers 1.5
    // periods, so every avatar has started one before the measured steps.
    auto w_owner = World::create(WorldOptions{1, 4}).value();
    const auto crowd = make_churn(*w_owner, 40);
    EXPECT_EQ(crowd->warm_up_steps(), Crowd::kWarmUpSteps + 360);  // the default 4 s period
    crowd->warm_up();
    EXPECT_GE(crowd->gestures_started(), 40u);
}

TEST(Crowd, ChurnKeepsEmotesAndHandPosesInFlight) {
    test::Synthetic f;
    auto w_owner = World::create(WorldOptions{2, 4}).value();
    World& w = *w_owner;
    const auto crowd = make_churn(w, 24);
    const auto err = crowd->set_appearances([&](int) -> Result<std::shared_ptr<Appearance>> {
        auto a = Appearance::create(f.model);
        if (!a) return a.error();
        return std::shared_ptr<Appearance>(std::move(*a));
    });
    ASSERT_FALSE(err) << err->describe();
    const ParamIndex smile = f.model->find("express_smile");
    const ParamIndex salute = f.model->find(hand_pose_param_name(10));
    ASSERT_NE(smile, kNoParam);
    ASSERT_NE(salute, kNoParam);
    crowd->warm_up();
    int checks = 0;
    for (int f2 = 0; f2 < 600; ++f2) {
        crowd->step();
        if (f2 % 60 != 0) continue;
        int smiling = 0, saluting = 0, fading = 0;
        for (Entity e : crowd->avatars()) {
            const AppearanceState& s = AppearanceFeature::of(w).get(e)->state();
            smiling += s.weight(smile) > 0.f;
            saluting += s.weight(salute) > 0.f;
            fading += s.weight(smile) > 0.f && s.weight(smile) < 1.f;
        }
        EXPECT_GT(smiling, 0) << "step " << f2;
        EXPECT_LT(smiling, 24) << "step " << f2;
        EXPECT_GT(saluting, 0) << "step " << f2;
        EXPECT_LT(saluting, 24) << "step " << f2;
        checks += fading > 0;
    }
    EXPECT_GT(checks, 0) << "emotes fading in or out were seen";
}

// Once every avatar has played its gesture, a churn step allocates nothing: restarted
// gestures reuse their finished instances; with appearances the emotes and hand poses too.
TEST(Crowd, ChurnDoesNotAllocateOnceEveryGesturePlayed) {
#if defined(__SANITIZE_THREAD__)
    GTEST_SKIP() << "ThreadSanitizer build: World::step forks std::threads there (see world.cpp)";
#endif
    test::Synthetic f;
    for (int threads : {1, 2}) {
        for (bool appearance : {false, true}) {
            auto w_owner = World::create(WorldOptions{threads, 8}).value();
            World& w = *w_owner;
            const auto crowd = make_churn(w, 64);
            if (appearance) {
                const auto err = crowd->set_appearances([&](int) -> Result<std::shared_ptr<Appearance>> {
                    auto a = Appearance::create(f.model);
                    if (!a) return a.error();
                    return std::shared_ptr<Appearance>(std::move(*a));
                });
                ASSERT_FALSE(err) << err->describe();
            }
            for (int s = 0; s < 600; ++s) crowd->step();  // 10 s: every first gesture (< 4 s) and its restart
            const auto before = crowd->gestures_started();
            g_news = 0;
            g_count = true;
            for (int s = 0; s < 600; ++s) crowd->step();
            g_count = false;
            EXPECT_EQ(g_news.load(), 0) << threads << " threads, appearance " << appearance;
            EXPECT_GT(crowd->gestures_started(), before + 64) << "gestures were restarted while counting";
        }
    }
}

// Crowd::create rejects what cannot churn or settle.
TEST(Crowd, CrowdRejectsAnEmptyMixOrNoGestures) {
    auto w_owner = World::create(WorldOptions{1, 8}).value();
    World& w = *w_owner;
    CrowdSettings churn;
    CrowdMix no_gestures;
    no_gestures.clips = crowd_clips();
    EXPECT_FALSE(Crowd::create(w, skeleton(), no_gestures, churn, 4));
    EXPECT_FALSE(Crowd::create(w, skeleton(), CrowdMix{}, CrowdSettings{CrowdMode::Settled, 4.f, 1}, 4));
    CrowdSettings bad_period;
    bad_period.gesture_period = 0.f;
    EXPECT_FALSE(Crowd::create(w, skeleton(), churn_mix(), bad_period, 4));
    EXPECT_EQ(w.size(), 0u) << "nothing created";
    auto settled = Crowd::create(w, skeleton(), no_gestures, CrowdSettings{CrowdMode::Settled, 4.f, 1}, 3);
    ASSERT_TRUE(settled);
    (*settled)->warm_up();
    EXPECT_EQ((*settled)->gestures_started(), 0u);
    for (Entity e : (*settled)->avatars()) EXPECT_EQ(w.controller(e).active().size(), no_gestures.clips.size());
}
