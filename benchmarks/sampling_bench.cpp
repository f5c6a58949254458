// SPDX-License-Identifier: MIT
// Sampling and per-avatar frame benchmarks: slanim against a baseline that mirrors the viewer's
// data structures (spec §2.1, §3.4, §10). Not part of ctest; run
//
//     build/benchmarks/slanim_bench_sampling --benchmark_min_time=0.2
//
// Every case comes in pairs that line up in the table:
//   BM_<what>/viewer_map — std::map<float, Key> per curve, lower_bound per curve per frame,
//                          heap joint motions; for frames also std::map<std::string, state>
//                          poses, a std::map<joint, blender> pool and a std::list of active
//                          blenders, and a recursive joint-tree world-matrix update;
//   BM_<what>/slanim     — MotionClip + SamplingCursor + SamplingJob; World::step for frames.
// items/s counts joint tracks sampled per second; ns_per_pose is the time per sampled pose
// (per avatar frame for BM_Frame_*). The label names the data (real file or generated).
//
// Data: real files under SLANIM_SHARED_DIR/anims when present, else generated motions of the
// same shape (the label says which).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <list>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "slanim/core/blend.hpp"
#include "slanim/core/clip.hpp"
#include "slanim/core/local_to_model.hpp"
#include "slanim/core/math.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/sampling.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/runtime/motion_controller.hpp"
#include "slanim/runtime/world.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "viewer_baseline.hpp"

namespace {

using namespace slanim;
namespace viewer = slanim::bench::viewer;

constexpr float kFrameDt = 1.f / 30.f;



// =============================================================================================
// Data
// =============================================================================================

const Skeleton& skeleton() { return *Skeleton::default_skeleton(); }

std::string anim_path(const std::string& rel) {
    return std::string(SLANIM_SHARED_DIR) + "/anims/" + rel;
}

bool load_real(const std::string& rel, Motion& out) {
    const std::string path = anim_path(rel);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return false;
    auto r = load_motion(path, skeleton());
    if (!r) return false;
    out = std::move(r.value());
    return true;
}

// A smooth generated motion: `num_joints` bones from the first, `rot_keys` rotation keys per
// joint evenly over the duration (1 key = a constant pose), positions on every `pos_every`-th
// joint with the same key count (0 = pelvis only). Consecutive keys are close, as in real
// data, so interpolation takes the nlerp (not the slerp) path. Key times are the same for
// every joint unless `jitter` moves each joint's first key by a different amount (then no two
// curves share their key times and the sampler cannot group them).
Motion generated_motion(unsigned seed, int num_joints, int min_rot_keys, int max_rot_keys,
                        int pos_every, float duration, int priority, bool jitter = false) {
    Motion m;
    m.base_priority = priority;
    m.max_priority = priority;
    m.duration = duration;
    m.loop = true;
    m.loop_in = 0.f;
    m.loop_out = duration;
    m.ease_in = 0.5f;
    m.ease_out = 0.5f;
    m.hand_pose = 1;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> amp(5.f, 40.f), phase(0.f, 6.2831853f), off(-0.2f, 0.2f);
    const int n = std::min(num_joints, skeleton().num_bones());
    for (int j = 0; j < n; ++j) {
        MotionJoint mj;
        mj.name = skeleton().name(j);
        mj.joint = j;
        mj.priority = -1;
        const int nk = min_rot_keys + (j % (max_rot_keys - min_rot_keys + 1));
        const float ax = amp(rng), ay = amp(rng), az = amp(rng), ph = phase(rng);
        const float first = jitter ? 0.001f * static_cast<float>(j + 1) : 0.f;
        auto key_time = [&](int k) {
            if (nk == 1) return 0.f;
            return k == 0 ? first : duration * static_cast<float>(k) / static_cast<float>(nk - 1);
        };
        for (int k = 0; k < nk; ++k) {
            const float t = key_time(k);
            const float s = std::sin(6.2831853f * t / duration + ph);
            Quat q = maya_q(ax * s, ay * s, az * s, EulerOrder::XYZ);
            if (q.w < 0.f) q = {-q.x, -q.y, -q.z, -q.w};
            mj.rot_keys.push_back({t, q});
        }
        if (j == 0 || (pos_every > 0 && j % pos_every == 0)) {
            const Vec3 base{off(rng), off(rng), off(rng)};
            for (int k = 0; k < nk; ++k) {
                const float t = key_time(k);
                const float s = std::sin(6.2831853f * t / duration);
                mj.pos_keys.push_back({t, base * (1.f + 0.1f * s)});
            }
        }
        m.joints.push_back(std::move(mj));
    }
    return m;
}

struct Dataset {
    std::string label;
    Motion motion;
    std::shared_ptr<const MotionClip> clip;
    std::shared_ptr<const viewer::JointMotionList> list;
    std::size_t tracks = 0;
};

Dataset make_dataset(const std::string& rel, Motion fallback, const std::string& what) {
    Dataset d;
    std::string source;
    if (!rel.empty() && load_real(rel, d.motion)) {
        source = rel;
    } else {
        d.motion = std::move(fallback);
        source = "generated " + what;
    }
    d.clip = MotionClip::build(d.motion, skeleton(), source);
    d.list = viewer::build_list(d.motion, skeleton());
    d.tracks = d.clip->tracks().size();
    std::size_t keys = d.clip->rot_times().size() + d.clip->pos_times().size();
    d.label = source + ": " + std::to_string(d.tracks) + " tracks, " + std::to_string(keys) + " keys";
    return d;
}

// The file with the most joints among reference/ and opencollar/ (187: 132 bones + 55
// attachment points, 2–3 position keys each, 1.5 s).
const Dataset& bento_pose() {
    static const Dataset d =
        make_dataset("reference/bento_randomize_bones_and_attachments.anim",
                     generated_motion(133, 133, 1, 2, 4, 1.5f, 4), "133-joint pose");
    return d;
}
// A real Bento pose: 128 joints, one rotation key each (all constant).
const Dataset& bento_tpose() {
    static const Dataset d = make_dataset("linden/PS_T_Pose_bento.anim",
                                          generated_motion(128, 128, 1, 1, 0, 0.5f, 6),
                                          "128-joint constant pose");
    return d;
}
// Always generated: exactly 133 bones, 1–2 rotation keys each, every 4th joint positioned.
const Dataset& generated_133() {
    static const Dataset d =
        make_dataset("", generated_motion(133, 133, 1, 2, 4, 1.f, 4), "133 bones, 1-2 keys/joint");
    return d;
}
// The same with every joint's key times different: the sampler's per-curve path.
const Dataset& generated_133_unshared() {
    static const Dataset d = make_dataset(
        "", generated_motion(133, 133, 1, 2, 4, 1.f, 4, true), "133 bones, 1-2 keys/joint, unshared times");
    return d;
}
const Dataset& dance() {
    static const Dataset d = make_dataset("linden/DANCE1.anim",
                                          generated_motion(1, 20, 40, 40, 0, 3.f, 2),
                                          "20-joint dance, 40 keys/joint");
    return d;
}

// Pre-generated random seek times in [0, duration].
std::vector<float> seek_times(float duration) {
    std::vector<float> t(1024);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0.f, std::max(duration, 0.f));
    for (float& x : t) x = duration > 0.f ? u(rng) : 0.f;
    return t;
}

inline float advance(float t, float duration) {
    t += kFrameDt;
    if (t > duration) t = duration > 0.f ? std::fmod(t, duration) : 0.f;
    return t;
}

void set_counters(benchmark::State& state, std::size_t tracks, const std::string& label) {
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) *
                            static_cast<std::int64_t>(tracks));
    state.counters["ns_per_pose"] = benchmark::Counter(
        static_cast<double>(state.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.SetLabel(label);
}

enum class Mode { Forward, Seek };

void bm_viewer(benchmark::State& state, const Dataset& (*data)(), Mode mode) {
    const Dataset& d = data();
    const float duration = d.motion.duration;
    const std::vector<float> seeks = seek_times(duration);
    std::vector<Quat> rot(d.tracks);
    std::vector<Vec3> pos(d.tracks);
    float t = 0.f;
    std::size_t i = 0;
    for (auto _ : state) {
        if (mode == Mode::Forward) {
            t = advance(t, duration);
        } else {
            t = seeks[i++ & 1023];
        }
        viewer::sample_into(*d.list, t, rot, pos);
        benchmark::DoNotOptimize(rot.data());
        benchmark::DoNotOptimize(pos.data());
        benchmark::ClobberMemory();
    }
    set_counters(state, d.tracks, d.label);
}

void bm_slanim(benchmark::State& state, const Dataset& (*data)(), Mode mode) {
    const Dataset& d = data();
    const float duration = d.motion.duration;
    const std::vector<float> seeks = seek_times(duration);
    std::vector<Quat> rot(d.tracks);
    std::vector<Vec3> pos(d.tracks);
    SamplingCursor cursor;
    cursor.reset(*d.clip);
    float t = 0.f;
    std::size_t i = 0;
    for (auto _ : state) {
        if (mode == Mode::Forward) {
            t = advance(t, duration);
        } else {
            t = seeks[i++ & 1023];
        }
        SamplingJob job;
        job.clip = d.clip.get();
        job.time = t;
        job.cursor = &cursor;
        job.rotations = rot;
        job.positions = pos;
        benchmark::DoNotOptimize(job.run());
        benchmark::DoNotOptimize(rot.data());
        benchmark::DoNotOptimize(pos.data());
        benchmark::ClobberMemory();
    }
    set_counters(state, d.tracks, d.label);
}

// =============================================================================================
// Full per-avatar frame: four motions on one avatar.
// =============================================================================================

// The four motions, oldest first. Both sides get the same modified Motions:
//  * every motion loops over [0, duration], so all four stay active at a steady state;
//  * priorities are set so that the oldest motion has the highest (4 → 1), every joint priority
//    −1: the controller's signature test (§3.3), which walks newest first, then skips none of
//    them, so all four are sampled and blended every frame (with real priorities the Bento pose
//    and the dance would occlude the stand and the walk, and both implementations would skip
//    them).
struct FrameSet {
    std::vector<Dataset> motions;
    std::size_t tracks = 0;
    std::string label;
};

Dataset frame_dataset(const std::string& rel, Motion fallback, const std::string& what, int priority) {
    Motion m;
    std::string source;
    if (load_real(rel, m)) {
        source = rel.substr(rel.find('/') + 1);
    } else {
        m = std::move(fallback);
        source = "generated " + what;
    }
    m.loop = true;
    m.loop_in = 0.f;
    m.loop_out = m.duration;
    m.base_priority = priority;
    m.max_priority = priority;
    for (MotionJoint& j : m.joints) j.priority = -1;
    Dataset d;
    d.clip = MotionClip::build(m, skeleton(), source);
    d.list = viewer::build_list(m, skeleton());
    d.tracks = d.clip->tracks().size();
    d.label = source;
    d.motion = std::move(m);
    return d;
}

const FrameSet& frame_set() {
    static const FrameSet s = [] {
        FrameSet f;
        f.motions.push_back(frame_dataset("linden/DANCE1.anim", generated_motion(1, 20, 40, 40, 0, 3.f, 2),
                                          "dance", 4));
        f.motions.push_back(frame_dataset("linden/WALK.anim", generated_motion(2, 19, 13, 13, 0, 0.933f, 0),
                                          "walk", 3));
        f.motions.push_back(frame_dataset("linden/STAND_1.anim", generated_motion(3, 18, 3, 4, 0, 2.5f, 0),
                                          "stand", 2));
        f.motions.push_back(frame_dataset("reference/bento_randomize_bones_and_attachments.anim",
                                          generated_motion(133, 133, 1, 2, 4, 1.5f, 4), "133-joint pose",
                                          1));
        for (const Dataset& d : f.motions) {
            f.tracks += d.tracks;
            f.label += (f.label.empty() ? "" : " + ") + d.label;
        }
        f.label += ": " + std::to_string(f.tracks) + " tracks";
        return f;
    }();
    return s;
}

void bm_frame_viewer(benchmark::State& state) {
    const FrameSet& f = frame_set();
    viewer::Avatar avatar(skeleton());
    for (const Dataset& d : f.motions) avatar.start(d.clip, d.list);
    for (int i = 0; i < 60; ++i) avatar.step(kFrameDt);  // the blender pool is filled
    for (auto _ : state) {
        avatar.step(kFrameDt);
        benchmark::ClobberMemory();
    }
    set_counters(state, f.tracks, f.label);
}

void bm_frame_slanim(benchmark::State& state) {
    const FrameSet& f = frame_set();
    World world;
    const Entity e = world.create_avatar(Skeleton::default_skeleton());
    MotionController& c = world.controller(e);
    for (const Dataset& d : f.motions) c.start(d.clip);
    for (int i = 0; i < 60; ++i) world.step(kFrameDt);  // past every ease-in: full weights
    for (auto _ : state) {
        world.step(kFrameDt);
        benchmark::ClobberMemory();
    }
    int evaluated = 0;
    for (const auto& m : c.active()) evaluated += m->evaluate ? 1 : 0;
    state.counters["motions_sampled"] = evaluated;
    set_counters(state, f.tracks, f.label);
}

// =============================================================================================
// Registration: pairs line up in the table.
// =============================================================================================

struct SampleCase {
    const char* name;
    const Dataset& (*data)();
};

[[maybe_unused]] const bool registered = [] {
    const SampleCase cases[] = {{"BentoPose", &bento_pose},
                                {"BentoTPose", &bento_tpose},
                                {"Generated133", &generated_133},
                                {"Generated133Unshared", &generated_133_unshared},
                                {"Dance", &dance}};
    for (const SampleCase& c : cases) {
        for (const Mode mode : {Mode::Forward, Mode::Seek}) {
            const std::string base = std::string("BM_Sample_") + c.name +
                                     (mode == Mode::Forward ? "_Forward" : "_Seek");
            auto* data = c.data;
            benchmark::RegisterBenchmark((base + "/viewer_map").c_str(),
                                         [data, mode](benchmark::State& s) { bm_viewer(s, data, mode); });
            benchmark::RegisterBenchmark((base + "/slanim").c_str(),
                                         [data, mode](benchmark::State& s) { bm_slanim(s, data, mode); });
        }
    }
    benchmark::RegisterBenchmark("BM_Frame_Avatar4/viewer_map", bm_frame_viewer);
    benchmark::RegisterBenchmark("BM_Frame_Avatar4/slanim", bm_frame_slanim);
    return true;
}();

}  // namespace
