// SPDX-License-Identifier: MIT
// The C API's cost over the C++ World it wraps, in the same run: 100 avatars playing DANCE1
// (../shared), one step at 30 Hz through slanim_world_step vs World::step (1 worker thread both),
// and reading every avatar's outputs: the joint transforms and the column-major joint matrices a
// renderer takes (slanim_avatar_joint_transforms / _joint_matrices) vs copying World::model_pose.
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "slanim/slanim.h"

#include "slanim/core/clip.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/anim.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/runtime/world.hpp"

namespace {

constexpr int kAvatars = 100;
constexpr std::uint8_t kId[16] = {0xb6, 0x8a, 0x3d, 0x7c, 0xde, 0x9e, 0xfc, 0x87,
                                  0xee, 0xc8, 0x54, 0x3d, 0x78, 0x7e, 0x5b, 0x0d};

std::vector<std::uint8_t> dance() {
    auto b = slanim::read_file_bytes(std::string(SLANIM_SHARED_DIR) + "/anims/linden/DANCE1.anim");
    return b ? std::move(*b) : std::vector<std::uint8_t>{};
}

/// DANCE1 made to loop as `slanim edit --loop` does, so that the avatars keep playing however
/// many steps a benchmark takes (DANCE1 ends after 3.07 s, 92 steps at 30 Hz).
std::vector<std::uint8_t> looping(const std::vector<std::uint8_t>& bytes) {
    std::size_t needed = 0;
    std::vector<std::uint8_t> out(bytes.size() + 4096);
    if (bytes.empty() || slanim_anim_edit(bytes.data(), bytes.size(), "--loop", nullptr, out.data(), out.size(),
                                          &needed) != SLANIM_OK)
        return {};
    out.resize(needed);
    return out;
}

struct CWorld {
    slanim_world* world = nullptr;
    std::vector<slanim_avatar> avatars;
    bool ok = false;
    explicit CWorld(bool loop = false) {
        const auto bytes = loop ? looping(dance()) : dance();
        slanim_skeleton* s = nullptr;
        if (bytes.empty() || slanim_world_create(1, &world) != SLANIM_OK || slanim_skeleton_default(&s) != SLANIM_OK ||
            slanim_world_load_motion(world, kId, bytes.data(), bytes.size()) != SLANIM_OK)
            return;
        for (int i = 0; i < kAvatars; ++i) {
            slanim_avatar a = 0;
            if (slanim_avatar_create(world, s, &a) != SLANIM_OK ||
                slanim_avatar_start_motion(world, a, kId, 0.01f * static_cast<float>(i)) != SLANIM_OK)
                return;
            avatars.push_back(a);
        }
        slanim_skeleton_release(s);
        ok = slanim_world_step(world, 1.f / 30.f) == SLANIM_OK;
    }
    ~CWorld() { slanim_world_destroy(world); }
};

struct CppWorld {
    std::unique_ptr<slanim::World> world_owner = slanim::World::create(slanim::WorldOptions{1, 8}).value();
    slanim::World& world = *world_owner;
    std::vector<slanim::Entity> avatars;
    bool ok = false;
    CppWorld() {
        const auto bytes = dance();
        if (bytes.empty()) return;
        const auto skel = slanim::Skeleton::default_skeleton();
        slanim::ParseResult pr = slanim::parse_anim(bytes);
        if (!pr.ok()) return;
        const auto clip = slanim::MotionClip::build(slanim::decode_motion(pr.motion, *skel), *skel, "DANCE1");
        for (int i = 0; i < kAvatars; ++i) {
            const slanim::Entity e = world.create_avatar(skel);
            slanim::StartOptions so;
            so.start_offset = 0.01f * static_cast<float>(i);
            world.controller(e).start(clip, so);
            avatars.push_back(e);
        }
        world.step(1.f / 30.f);
        ok = true;
    }
};

void BM_CApi_Step_Dance100(benchmark::State& state) {
    CWorld w;
    if (!w.ok) return state.SkipWithError("../shared/anims/linden/DANCE1.anim is absent");
    for (auto _ : state) benchmark::DoNotOptimize(slanim_world_step(w.world, 1.f / 30.f));
    state.SetItemsProcessed(state.iterations() * kAvatars);
}
BENCHMARK(BM_CApi_Step_Dance100)->Unit(benchmark::kMicrosecond);

// The native figures scripts/web-bench.sh sets against the browser's (tools/web/bench.html
// runs these sequences of C calls in slanim.wasm): DANCE1 looping (so every step samples and
// blends), the whole step, then with the world's per-system timing on (slanim_world_profile):
// µs per avatar and step of each system.
void BM_CApi_StepLoop_Dance100(benchmark::State& state) {
    CWorld w(true);
    if (!w.ok) return state.SkipWithError("../shared/anims/linden/DANCE1.anim is absent");
    for (auto _ : state) benchmark::DoNotOptimize(slanim_world_step(w.world, 1.f / 30.f));
    state.SetItemsProcessed(state.iterations() * kAvatars);
}
BENCHMARK(BM_CApi_StepLoop_Dance100)->Unit(benchmark::kMicrosecond);

void BM_CApi_Phases_Dance100(benchmark::State& state) {
    CWorld w(true);
    if (!w.ok) return state.SkipWithError("../shared/anims/linden/DANCE1.anim is absent");
    slanim_world_set_profiling(w.world, 1);
    std::size_t needed = 0;
    std::string text(1 << 14, '\0');
    slanim_world_profile(w.world, 1, text.data(), text.size(), &needed);
    for (auto _ : state) benchmark::DoNotOptimize(slanim_world_step(w.world, 1.f / 30.f));
    if (slanim_world_profile(w.world, 0, text.data(), text.size(), &needed) != SLANIM_OK)
        return state.SkipWithError(slanim_last_error());
    text.resize(needed - 1);
    // "NAME SECONDS CALLS" lines
    for (std::size_t b = 0; b < text.size();) {
        const std::size_t e = text.find('\n', b);
        const std::string line = text.substr(b, e - b);
        b = e + 1;
        const std::size_t s1 = line.find(' ');
        const double seconds = std::stod(line.substr(s1 + 1));
        state.counters[line.substr(0, s1)] = seconds * 1e6 / static_cast<double>(state.iterations() * kAvatars);
    }
    state.SetItemsProcessed(state.iterations() * kAvatars);
}
BENCHMARK(BM_CApi_Phases_Dance100)->Unit(benchmark::kMicrosecond);

void BM_World_Step_Dance100(benchmark::State& state) {
    CppWorld w;
    if (!w.ok) return state.SkipWithError("../shared/anims/linden/DANCE1.anim is absent");
    for (auto _ : state) w.world.step(1.f / 30.f);
    state.SetItemsProcessed(state.iterations() * kAvatars);
}
BENCHMARK(BM_World_Step_Dance100)->Unit(benchmark::kMicrosecond);

void BM_CApi_JointTransforms_Dance100(benchmark::State& state) {
    CWorld w;
    if (!w.ok) return state.SkipWithError("../shared/anims/linden/DANCE1.anim is absent");
    std::vector<float> out(7 * 214);
    std::size_t needed = 0;
    for (auto _ : state)
        for (slanim_avatar a : w.avatars) benchmark::DoNotOptimize(slanim_avatar_joint_transforms(w.world, a, out.data(), out.size(), &needed));
    state.SetItemsProcessed(state.iterations() * kAvatars);
}
BENCHMARK(BM_CApi_JointTransforms_Dance100)->Unit(benchmark::kMicrosecond);

void BM_CApi_JointMatrices_Dance100(benchmark::State& state) {
    CWorld w;
    if (!w.ok) return state.SkipWithError("../shared/anims/linden/DANCE1.anim is absent");
    std::vector<float> out(16 * 214);
    std::size_t needed = 0;
    for (auto _ : state)
        for (slanim_avatar a : w.avatars) benchmark::DoNotOptimize(slanim_avatar_joint_matrices(w.world, a, out.data(), out.size(), &needed));
    state.SetItemsProcessed(state.iterations() * kAvatars);
}
BENCHMARK(BM_CApi_JointMatrices_Dance100)->Unit(benchmark::kMicrosecond);

// Baseline of the two above: the same values copied straight from World::model_pose.
void BM_World_CopyModelPose_Dance100(benchmark::State& state) {
    CppWorld w;
    if (!w.ok) return state.SkipWithError("../shared/anims/linden/DANCE1.anim is absent");
    std::vector<float> out(7 * 214);
    for (auto _ : state) {
        for (slanim::Entity e : w.avatars) {
            const slanim::ModelPose& mp = w.world.model_pose(e);
            for (std::size_t j = 0; j < mp.positions.size(); ++j) {
                std::memcpy(&out[7 * j], &mp.positions[j], 12);
                std::memcpy(&out[7 * j + 3], &mp.rotations[j], 16);
            }
            benchmark::DoNotOptimize(out.data());
        }
    }
    state.SetItemsProcessed(state.iterations() * kAvatars);
}
BENCHMARK(BM_World_CopyModelPose_Dance100)->Unit(benchmark::kMicrosecond);

}  // namespace
