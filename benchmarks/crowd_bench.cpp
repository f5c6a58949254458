// SPDX-License-Identifier: MIT
// Crowd benchmarks (issue: crowd-scale runtime). Not part of ctest; run through
//
//     scripts/bench_crowd.sh            (medians of repetitions, ratios, the load average)
//
// or directly: build/benchmarks/slanim_bench_crowd --benchmark_filter=BM_Crowd/
//
//   BM_Crowd/avatars:N/threads:T/skin:S/churn:C — N avatars of a Crowd (slanim/runtime/crowd.hpp:
//        the set-up, warm-up and timed step `slanim crowd` uses, so the two agree). C = 0 the
//        settled crowd: every avatar plays four real motions of ../shared/anims (WALK, DANCE4,
//        the Bento bones-and-attachments motion, BOW with its two constraints; looped, staggered
//        starts). C = 1 the churn crowd: every avatar keeps one base motion of the Linden mix
//        (ANIM_AGENT_FEMALE_WALK_NEW, DANCE1, ANIM_AGENT_BENTO_IDLE; looped) and starts BLOWKISS
//        (an emote and a hand pose) every 3–5 s at a staggered time. With S > 0 the base mesh of
//        ../shared/sl-character skinned per avatar: S = 1 a crowd of one shape (the bind poses
//        shared through a BindPoseCache), S = 2 every avatar its own shape (add_appearances).
//        Time column: mean wall ms of Crowd::timed_step (manual time). Counters: p50_ms and
//        p99_ms of the steps (what `slanim crowd` prints), us_per_avatar, KiB_per_avatar
//        (World::avatar_state_bytes).
//   BM_CrowdViewer/avatars:N — the same motions on N avatars of the viewer-style baseline
//        (viewer_baseline.hpp: per-avatar heap objects, std::map lookups), one thread, at full
//        weight (no skinning).
//   BM_CrowdPhases/avatars:1000/threads:T/skin:S/churn:C — one profiled Crowd::step per
//        iteration; a counter per system (us per step, summed over threads).
//   BM_CrowdProcedural/avatars:N/procedural:P — BM_Crowd on one thread without skinning, P = 1
//        with the viewer's four procedural motions on every avatar (breathe, body noise, head
//        and eye look-at toward a per-avatar target; docs/procedural-motions.md): the
//        difference of the two rows is their cost.
//   BM_Blend4x214/slanim_layers — PoseBlender: 4 layers of rotation + position states on every
//        joint of the 214-joint skeleton offered with add_layer (as MotionController offers a
//        motion), and blend_and_apply: the figure to set against ozz's BlendingJob.
//   BM_Blend4x214/slanim_states — the same states offered one by one (856 add() calls).
//        Both rows run on the instruction set active_isa() names (their label says which): the
//        best the CPU has, or lower with SLANIM_ISA=avx512|avx2|sse2|scalar in the environment.
//   BM_LocalToModel214/slanim — LocalToModelJob over 214 joints.
//   BM_Memcpy256MB/threads:T — the machine's memory traffic (a 256 MB memcpy per thread, T
//        threads at once; bytes_per_second sums both directions), to read the skinned rows.
// Without ../shared the generated demo motions and gesture (slanim/runtime/demo_motions.hpp)
// replace the real ones and the label says so; skinned cases are skipped.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slanim/appearance/visual_params.hpp"
#include "slanim/core/blend.hpp"
#include "slanim/core/isa.hpp"
#include "slanim/core/local_to_model.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/formats/skeleton_xml.hpp"
#include "slanim/runtime/appearance.hpp"
#include "slanim/runtime/appearance_feature.hpp"
#include "slanim/runtime/crowd.hpp"
#include "slanim/runtime/procedural_feature.hpp"
#include "slanim/runtime/world.hpp"
#include "viewer_baseline.hpp"

namespace {

using namespace slanim;
namespace viewer = slanim::bench::viewer;
constexpr float kStep = 1.f / 60.f;
const std::filesystem::path kShared = SLANIM_SHARED_DIR;

struct Mix {
    std::shared_ptr<const Skeleton> skeleton;
    CrowdMix settled;  // the four motions, on every avatar
    CrowdMix churn;    // base motions (one per avatar) and gestures
    std::vector<std::shared_ptr<const viewer::JointMotionList>> lists;  // of settled.clips
    std::shared_ptr<const AppearanceModel> appearance;  // null without ../shared/sl-character
    std::string settled_label, churn_label;
};

// `files` under ../shared/anims (looped when `loop`), or nothing when one is missing.
std::vector<std::pair<std::string, Motion>> load_files(std::span<const std::string_view> files, const Skeleton& skel,
                                                       bool loop) {
    std::vector<std::pair<std::string, Motion>> out;
    for (std::string_view f : files) {
        auto mo = load_motion((kShared / "anims" / f).string(), skel);
        if (!mo.ok()) return {};
        if (loop) make_looping(*mo);
        out.emplace_back(std::string(f), std::move(*mo));
    }
    return out;
}

std::vector<std::shared_ptr<const MotionClip>> build(std::vector<std::pair<std::string, Motion>>& motions,
                                                     const Skeleton& skel) {
    std::vector<std::shared_ptr<const MotionClip>> clips;
    for (auto& [name, mo] : motions) clips.push_back(MotionClip::build(mo, skel, name));
    return clips;
}

// The motions on the character folder's skeleton when present (so the base mesh fits), else on
// the embedded default; the generated demo motions and gesture without ../shared.
const Mix& mix() {
    static const Mix m = [] {
        Mix x;
        const auto character = kShared / "sl-character";
        if (auto sk = load_skeleton(character); sk.ok()) {
            x.skeleton = *sk;
            if (auto model = load_appearance_model(character, x.skeleton); model.ok()) x.appearance = *model;
        } else {
            x.skeleton = Skeleton::default_skeleton();
        }
        const Skeleton& skel = *x.skeleton;
        auto settled = load_files(kSettledCrowdFiles, skel, true);
        auto bases = load_files(kChurnBaseFiles, skel, true);
        auto gestures = load_files(kChurnGestureFiles, skel, false);
        std::vector<std::pair<std::string, Motion>> demo;
        for (auto& d : make_crowd_demo_motions(skel)) demo.emplace_back(d.name, std::move(d.motion));
        x.settled_label = settled.empty() ? "generated demo motions (../shared absent)"
                                          : "real: walk, dance, Bento, constrained";
        if (settled.empty()) settled = demo;
        x.churn_label = bases.empty() || gestures.empty()
                            ? "generated: demo motions, demo_gesture (../shared absent)"
                            : "real: female walk, dance1, Bento idle; gesture blowkiss";
        if (bases.empty() || gestures.empty()) {
            bases = demo;
            auto g = make_demo_gesture(skel);
            gestures.clear();
            gestures.emplace_back(g.name, std::move(g.motion));
        }
        for (auto& [name, mo] : settled) x.lists.push_back(viewer::build_list(mo, skel));
        x.settled.clips = build(settled, skel);
        x.churn.clips = build(bases, skel);
        x.churn.gestures = build(gestures, skel);
        return x;
    }();
    return m;
}

const std::string& label(bool churn) { return churn ? mix().churn_label : mix().settled_label; }

/// A crowd of the benchmarks: settled or churn (Crowd, the set-up `slanim crowd` uses).
std::unique_ptr<Crowd> make_crowd(World& w, int n, bool churn) {
    const Mix& m = mix();
    CrowdSettings settings;
    settings.mode = churn ? CrowdMode::Churn : CrowdMode::Settled;
    return std::move(Crowd::create(w, m.skeleton, churn ? m.churn : m.settled, settings, n).value());
}

/// The timed loop of the crowd benchmarks: one Crowd::timed_step per iteration (the span
/// `slanim crowd` times; manual time), reported per avatar (µs) with the per-avatar state (KiB)
/// and the median and 99th percentile of the steps (ms), to set beside `slanim crowd`'s line.
void measure_steps(benchmark::State& state, Crowd& crowd, int n, const std::string& label) {
    std::vector<double> ms;
    ms.reserve(static_cast<std::size_t>(state.max_iterations));
    for (auto _ : state) {
        const double s = crowd.timed_step();
        state.SetIterationTime(s);
        ms.push_back(1e3 * s);
    }
    std::sort(ms.begin(), ms.end());
    const auto pct = [&](double p) {
        if (ms.empty()) return 0.0;
        const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(ms.size())));
        return ms[std::clamp<std::size_t>(rank, 1, ms.size()) - 1];
    };
    state.counters["p50_ms"] = pct(0.5);
    state.counters["p99_ms"] = pct(0.99);
    state.counters["us_per_avatar"] =
        benchmark::Counter(static_cast<double>(state.iterations()) * n * 1e-6,
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.counters["KiB_per_avatar"] = static_cast<double>(crowd.world().avatar_state_bytes()) / n / 1024.0;
    state.SetLabel(label);
}

/// Gives every avatar an Appearance of the base mesh. skin = 1: one shape for the crowd, the
/// bind poses shared through one BindPoseCache (what a crowd made from one shape gets);
/// skin = 2: every avatar its own shape ("Body Fat" at a different weight: head, upper and
/// lower body morph to different bits, 79 % of the vertices), same cache, so nothing of those
/// meshes is shared. Returns false (and skips) on error.
bool add_appearances(benchmark::State& state, Crowd& crowd, int skin) {
    const Mix& m = mix();
    if (!m.appearance) {
        state.SkipWithError("skinning needs ../shared/sl-character");
        return false;
    }
    AppearanceOptions options;
    options.bind_poses = std::make_shared<BindPoseCache>();
    const auto n = static_cast<float>(crowd.avatars().size());
    const auto err = crowd.set_appearances([&](int k) -> Result<std::shared_ptr<Appearance>> {
        auto a = Appearance::create(m.appearance, options);
        if (!a.ok()) return a.error();
        if (skin == 2 && !(*a)->state().set_weight_by_name("Body Fat", static_cast<float>(k + 1) / (n + 1.f)))
            return Error{"no 'Body Fat' visual param in the character"};
        return std::shared_ptr<Appearance>(std::move(*a));
    });
    if (err) state.SkipWithError(err->message.c_str());
    return !err;
}

void bm_crowd(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    const int threads = static_cast<int>(state.range(1));
    const int skin = static_cast<int>(state.range(2));
    const bool churn = state.range(3) != 0;
    auto w_owner = World::create(WorldOptions{threads, 8}).value();
    World& w = *w_owner;
    const auto crowd = make_crowd(w, n, churn);
    if (skin && !add_appearances(state, *crowd, skin)) return;
    crowd->warm_up();
    measure_steps(state, *crowd, n, label(churn));
}

void bm_crowd_procedural(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    const bool procedural = state.range(1) != 0;
    const Mix& m = mix();
    auto w_owner = World::create(WorldOptions{1, 8}).value();
    World& w = *w_owner;
    const auto ents = populate_crowd(w, m.skeleton, m.settled.clips, n);
    if (procedural)
        for (std::size_t k = 0; k < ents.size(); ++k) {
            ProceduralFeature::of(w).set_motions(ents[k], ProceduralSet::all());
            const float a = static_cast<float>(k) * 0.37f;
            ProceduralFeature::of(w).set_look_at(ents[k], Vec3{2.f * std::cos(a), 2.f * std::sin(a), 1.4f});
        }
    for (int f = 0; f < 90; ++f) w.step(kStep);  // past every ease-in
    for (auto _ : state) {
        w.step(kStep);
        benchmark::ClobberMemory();
    }
    state.counters["us_per_avatar"] =
        benchmark::Counter(static_cast<double>(state.iterations()) * n * 1e-6,
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.SetLabel(m.settled_label);
}

void bm_crowd_viewer(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    const Mix& m = mix();
    std::vector<std::unique_ptr<viewer::Avatar>> avatars;
    for (int k = 0; k < n; ++k) {
        auto a = std::make_unique<viewer::Avatar>(*m.skeleton);
        for (std::size_t c = 0; c < m.settled.clips.size(); ++c) a->start(m.settled.clips[c], m.lists[c]);
        avatars.push_back(std::move(a));
    }
    for (int f = 0; f < 60; ++f)
        for (auto& a : avatars) a->step(kStep);
    for (auto _ : state) {
        for (auto& a : avatars) a->step(kStep);
        benchmark::ClobberMemory();
    }
    state.counters["us_per_avatar"] =
        benchmark::Counter(static_cast<double>(state.iterations()) * n * 1e-6,
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.SetLabel(m.settled_label);
}

void bm_crowd_phases(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    const int skin = static_cast<int>(state.range(2));
    const bool churn = state.range(3) != 0;
    auto w_owner = World::create(WorldOptions{static_cast<int>(state.range(1)), 8}).value();
    World& w = *w_owner;
    const auto crowd = make_crowd(w, n, churn);
    if (skin && !add_appearances(state, *crowd, skin)) return;
    crowd->warm_up();
    crowd->set_profiling(true);
    crowd->reset_profile();
    for (auto _ : state) crowd->step();
    for (const SystemProfile& p : w.profile())
        state.counters[p.system->name] = p.seconds * 1e6 / static_cast<double>(state.iterations());
    if (churn) state.counters["gesture_schedule"] = crowd->schedule_seconds() * 1e6 / static_cast<double>(state.iterations());
    state.SetLabel(label(churn));
}

// The blend benchmarks' input: 4 layers of random rotations and positions (one state per
// joint each) and the rest pose to blend into.
struct BlendInput {
    int n = 0;
    std::vector<Quat> rot;
    std::vector<Vec3> pos, lp, ls;
    std::vector<Quat> lr;
    explicit BlendInput(const Skeleton& sk) : n(sk.num_joints()) {
        std::mt19937 rng(5);
        std::uniform_real_distribution<float> a(-0.5f, 0.5f);
        rot.resize(static_cast<std::size_t>(4 * n));
        pos.resize(static_cast<std::size_t>(4 * n));
        for (auto& q : rot) q = quat_from_axis_angle(a(rng), {a(rng), a(rng), 1.f});
        for (auto& p : pos) p = {a(rng), a(rng), a(rng)};
        lp.assign(sk.rest_positions().begin(), sk.rest_positions().end());
        lr.assign(sk.rest_rotations().begin(), sk.rest_rotations().end());
        ls.assign(sk.rest_scales().begin(), sk.rest_scales().end());
    }
};

// 4 layers (one state per joint each: rotation + position, priorities 1..4) over 214 joints.
void bm_blend(benchmark::State& state) {
    BlendInput in(*mix().skeleton);
    const int n = in.n;
    auto &pos = in.pos, &lp = in.lp, &ls = in.ls;
    auto &rot = in.rot, &lr = in.lr;
    PoseBlender b;
    b.resize(n);
    for (auto _ : state) {
        for (int layer = 0; layer < 4; ++layer)
            for (int j = 0; j < n; ++j) {
                JointStateRef s;
                const auto k = static_cast<std::size_t>(layer * n + j);
                s.rotation = &rot[k];
                s.position = &pos[k];
                s.weight = 0.6f;
                s.priority = static_cast<std::int8_t>(4 - layer);
                s.usage = kUsageRot | kUsagePos;
                b.add(j, s);
            }
        b.blend_and_apply({lp, lr, ls});
        benchmark::ClobberMemory();
    }
    state.SetLabel(std::string("isa ") + isa_name(active_isa()));
}

// The same four layers offered as layers (PoseBlender::add_layer, as MotionController does
// with a motion's sampled tracks): the figure to set against ozz's BlendingJob.
void bm_blend_layers(benchmark::State& state) {
    BlendInput in(*mix().skeleton);
    const int n = in.n;
    auto &pos = in.pos, &lp = in.lp, &ls = in.ls;
    auto &rot = in.rot, &lr = in.lr;
    std::vector<std::int16_t> joints(static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j) joints[static_cast<std::size_t>(j)] = static_cast<std::int16_t>(j);
    const std::vector<std::uint8_t> usages(static_cast<std::size_t>(n), kUsageRot | kUsagePos);
    LayerShape shapes[4];
    for (int layer = 0; layer < 4; ++layer)
        shapes[layer].build(joints, std::vector<std::int8_t>(static_cast<std::size_t>(n), static_cast<std::int8_t>(4 - layer)), usages);
    PoseBlender b;
    b.resize(n);
    for (auto _ : state) {
        for (int layer = 0; layer < 4; ++layer) {
            BlendLayer l;
            l.shape = &shapes[layer];
            l.rotations = rot.data() + layer * n;
            l.positions = pos.data() + layer * n;
            l.weight = 0.6f;
            b.add_layer(l);
        }
        b.blend_and_apply({lp, lr, ls});
        benchmark::ClobberMemory();
    }
    state.SetLabel(std::string("isa ") + isa_name(active_isa()));
}

void bm_l2m(benchmark::State& state) {
    const Mix& m = mix();
    const auto n = static_cast<std::size_t>(m.skeleton->num_joints());
    std::vector<Vec3> mp(n);
    std::vector<Quat> mr(n);
    for (auto _ : state) {
        LocalToModelJob job;
        job.skeleton = m.skeleton.get();
        job.local_positions = m.skeleton->rest_positions();
        job.local_rotations = m.skeleton->rest_rotations();
        job.local_scales = m.skeleton->rest_scales();
        job.model_positions = mp;
        job.model_rotations = mr;
        job.run();
        benchmark::ClobberMemory();
    }
}

// The machine's memory traffic, for reading the skinned rows: one memcpy of 256 MB (512 MB
// moved), the streams a 1,000-avatar skin phase reads and writes (~255 MB).
void bm_memcpy(benchmark::State& state) {
    const std::size_t n = std::size_t{256} << 20;
    std::vector<char> a(n, 1), b(n, 2);
    for (auto _ : state) {
        std::memcpy(b.data(), a.data(), n);
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(2 * n));
}

}  // namespace

BENCHMARK(bm_memcpy)->Name("BM_Memcpy256MB")->Unit(benchmark::kMillisecond)->UseRealTime()->Threads(1)->Threads(2);
BENCHMARK(bm_crowd)
    ->Name("BM_Crowd")
    ->ArgNames({"avatars", "threads", "skin", "churn"})
    ->ArgsProduct({{100, 1000, 5000}, {1, 2}, {0}, {0, 1}})
    ->ArgsProduct({{100, 1000}, {1, 2}, {1, 2}, {0, 1}})  // ~0.7 MB of heap per skinned avatar (morphed meshes, output): no 5000 skinned
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();
BENCHMARK(bm_crowd_procedural)
    ->Name("BM_CrowdProcedural")
    ->ArgNames({"avatars", "procedural"})
    ->ArgsProduct({{1000}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(bm_crowd_viewer)->Name("BM_CrowdViewer")->ArgNames({"avatars"})->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(bm_crowd_phases)
    ->Name("BM_CrowdPhases")
    ->ArgNames({"avatars", "threads", "skin", "churn"})
    ->ArgsProduct({{1000}, {1, 2}, {0, 1, 2}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(bm_blend)->Name("BM_Blend4x214/slanim_states");
BENCHMARK(bm_blend_layers)->Name("BM_Blend4x214/slanim_layers");
BENCHMARK(bm_l2m)->Name("BM_LocalToModel214/slanim");
