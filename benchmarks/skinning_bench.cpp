// SPDX-License-Identifier: MIT
// CPU skinning benchmarks (docs/skinning.md). Not part of ctest; run
//
//     build/benchmarks/slanim_bench_skinning --benchmark_filter=Skin --benchmark_min_time=0.1
//         --benchmark_repetitions=5 --benchmark_report_aggregates_only=true   (one line)
//
// Every case runs each kernel: /isa:1 scalar (the baseline), /isa:2 SSE2, /isa:3 AVX2, /isa:4
// AVX-512 (skipped with a message when the CPU lacks it), so the ratios line up in one table.
// /layout: 0 = SkinningJob on SkinIndices4 + SkinWeights4, 1 = PackedSkinningJob on
// PackedSkinInfluences (float weights), 2 = the same with streaming (non-temporal) stores
// (AVX-512 and SSE2 only), 3 = packed with Unorm16 weights, 4 = Unorm16 with streaming stores
// (AVX-512 and SSE2 only).
//   BM_SkinAvatar          — the 7 base meshes of ../shared/sl-character (5,322 vertices) through
//                            SlSkinMatricesJob + SlSkinningJob: the per-avatar frame cost;
//   BM_SkinAvatarCrowd     — its meshes skinned into the outputs of 256 avatars (32 MiB, beyond
//                            L2), /stream:0 or 1 (non-temporal stores): the crowd's skin phase
//                            alone (run with --benchmark_enable_random_interleaving=true);
//   BM_Skin50k             — a generated 50,000-vertex mesh, positions + normals, /infl:2 or 4
//                            influences over a 110-matrix palette, /threads:1 or 2 (the vertex
//                            range split in halves at a multiple of 16; the second half runs on
//                            a persistent, spinning helper thread);
//   BM_SkinL2              — the first 4,096 vertices of that mesh (L2-resident): compute speed;
//   BM_SkinStreamBound     — the same bytes only streamed (read inputs, write outputs, no math):
//                            the memory floor for BM_Skin50k on this machine, per layout.
// Besides mean/median/stddev, repetitions report "min": on a shared, loaded machine the fastest
// repetition is the one least disturbed. items/s counts vertices.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "slanim/appearance/llm.hpp"
#include "slanim/core/local_to_model.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/core/skinning.hpp"
#include "slanim/formats/skeleton_xml.hpp"

namespace {

using namespace slanim;

constexpr std::size_t kVertices = 50000;
constexpr std::size_t kPalette = 110;  // LL_MAX_JOINTS_PER_MESH_OBJECT

SkinningIsa isa_arg(const benchmark::State& state, int index) {
    return static_cast<SkinningIsa>(state.range(index));
}

bool skip_unsupported(benchmark::State& state, SkinningIsa isa) {
    if (skinning_isa_supported(isa)) return false;
    state.SkipWithError((std::string(to_string(isa)) + " is not supported by this CPU").c_str());
    return true;
}

/// One persistent helper thread that runs `work` each time `go()` is called, spinning (then
/// yielding) between calls so the hand-off costs well under a microsecond on an idle machine.
class Helper {
public:
    explicit Helper(std::function<void()> work) : work_(std::move(work)), thread_([this] { loop(); }) {}
    ~Helper() {
        stop_.store(true, std::memory_order_release);
        thread_.join();
    }
    void go() { gen_.fetch_add(1, std::memory_order_acq_rel); }
    void wait() const {
        const auto g = gen_.load(std::memory_order_acquire);
        for (int spins = 0; done_.load(std::memory_order_acquire) != g; ++spins) relax(spins);
    }

private:
    /// Spin briefly, then yield: on a loaded machine a pure spin would hold the core the other
    /// half of the work needs.
    static void relax(int spins) {
        if (spins < 4096) {
#if defined(__x86_64__)
            __builtin_ia32_pause();
#endif
        } else {
            std::this_thread::yield();
        }
    }
    void loop() {
        std::uint64_t seen = 0;
        for (;;) {
            std::uint64_t g;
            for (int spins = 0; (g = gen_.load(std::memory_order_acquire)) == seen; ++spins) {
                if (stop_.load(std::memory_order_acquire)) return;
                relax(spins);
            }
            work_();
            seen = g;
            done_.store(g, std::memory_order_release);
        }
    }
    std::function<void()> work_;
    std::atomic<std::uint64_t> gen_{0}, done_{0};
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

// ---------------------------------------------------------------------------------------------
// Generated 50k mesh
// ---------------------------------------------------------------------------------------------

struct GeneratedMesh {
    SoaVec3Buffer in_p, in_n;
    std::vector<SkinIndices4> indices;
    std::vector<SkinWeights4> weights;
    std::vector<SkinMatrix> matrices;
    PackedSkinInfluences packed[5], packed16[5];  // by influences (1..4): float, Unorm16 weights
};

const GeneratedMesh& generated_mesh() {
    static const GeneratedMesh mesh = [] {
        GeneratedMesh m;
        std::mt19937 rng(1234);
        std::uniform_real_distribution<float> u(-1.f, 1.f);
        std::normal_distribution<float> g(0.f, 1.f);
        std::vector<Vec3> p(kVertices), n(kVertices);
        m.indices.resize(kVertices);
        m.weights.resize(kVertices);
        // Vertices come in patches that share a neighbourhood of the palette, like a real mesh.
        std::uniform_int_distribution<int> near(0, 5);
        for (std::size_t v = 0; v < kVertices; ++v) {
            p[v] = {u(rng) * 0.3f, u(rng) * 0.3f, u(rng) + 1.f};
            const Vec3 d{g(rng), g(rng), g(rng)};
            n[v] = d * (1.f / length(d));
            const int base = static_cast<int>((v / 64) % (kPalette - 8));
            float sum = 0.f;
            for (std::size_t k = 0; k < 4; ++k) {
                m.indices[v][k] = static_cast<std::uint16_t>(base + near(rng));
                m.weights[v][k] = 0.1f + (u(rng) + 1.f);
                sum += m.weights[v][k];
            }
            for (auto& w : m.weights[v]) w /= sum;
        }
        m.in_p = SoaVec3Buffer(p);
        m.in_n = SoaVec3Buffer(n);
        for (std::size_t j = 0; j < kPalette; ++j) {
            const float a = 0.01f * static_cast<float>(j);
            m.matrices.push_back(make_skin_matrix({u(rng), u(rng), u(rng)},
                                                  quat_from_axis_angle(a, {u(rng), u(rng), 1.f}),
                                                  {1.f, 1.f, 1.f}, {u(rng), u(rng), u(rng)}));
        }
        for (int k = 1; k <= 4; ++k) {
            // Never fail: blocks span ≤ 6 matrices, weights are in [0, 1].
            auto packed = PackedSkinInfluences::build(m.indices, m.weights, k, kPalette);
            if (packed.ok()) m.packed[k] = std::move(*packed);
            packed = PackedSkinInfluences::build(m.indices, m.weights, k, kPalette,
                                                 PackedSkinInfluences::Weights::Unorm16);
            if (packed.ok()) m.packed16[k] = std::move(*packed);
        }
        return m;
    }();
    return mesh;
}

double min_of(const std::vector<double>& v) {
    double m = v.empty() ? 0.0 : v.front();
    for (double x : v) m = std::min(m, x);
    return m;
}

/// Runs `first` here and `second` on the helper (threads = 2), or `whole` (threads = 1).
template <class Job>
void run_split(benchmark::State& state, const Job& whole, const Job& first, const Job& second, int threads) {
    if (threads == 1) {
        for (auto _ : state) {
            whole.run();
            benchmark::ClobberMemory();
        }
        return;
    }
    Helper helper([&second] { second.run(); });
    for (auto _ : state) {
        helper.go();
        first.run();
        helper.wait();
        benchmark::ClobberMemory();
    }
}

void run_generated(benchmark::State& state, std::size_t vertices) {
    const SkinningIsa isa = isa_arg(state, 0);
    if (skip_unsupported(state, isa)) return;
    const int influences = static_cast<int>(state.range(1));
    const int threads = static_cast<int>(state.range(2));
    const int layout = static_cast<int>(state.range(3));
    const auto& src = generated_mesh();
    SoaVec3Buffer out_p(kVertices), out_n(kVertices);
    const std::size_t half = vertices / 2 / 16 * 16;
    if (layout == 0) {
        SkinningJob job;
        job.matrices = src.matrices;
        job.indices = src.indices;
        job.weights = src.weights;
        job.influences = influences;
        job.in_positions = src.in_p.in();
        job.in_normals = src.in_n.in();
        job.out_positions = out_p.out();
        job.out_normals = out_n.out();
        job.isa = isa;
        job = job.slice(0, vertices);
        run_split(state, job, job.slice(0, half), job.slice(half, vertices), threads);
    } else {
        PackedSkinningJob job;
        job.matrices = src.matrices;
        job.influences = layout >= 3 ? &src.packed16[influences] : &src.packed[influences];
        job.in_positions = src.in_p.in();
        job.in_normals = src.in_n.in();
        job.out_positions = out_p.out();
        job.out_normals = out_n.out();
        job.isa = isa;
        job.streaming_stores = layout == 2 || layout == 4;
        job = job.slice(0, vertices);
        run_split(state, job, job.slice(0, half), job.slice(half, vertices), threads);
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(vertices));
    static const char* const kLayouts[] = {"indices+weights", "packed", "packed, streaming stores",
                                           "packed unorm16", "packed unorm16, streaming stores"};
    state.SetLabel(std::string(to_string(isa)) + ", " + kLayouts[layout] + ", " + std::to_string(vertices) +
                   " vertices, " + std::to_string(influences) + " influences, " + std::to_string(threads) +
                   " thread(s), positions+normals");
}

/// isa × influences × threads × layout, streaming stores only where they exist (AVX-512, SSE2).
void generated_args(benchmark::internal::Benchmark* b, bool two_threads) {
    b->ArgNames({"isa", "infl", "threads", "layout"});
    for (int layout : {0, 1, 2, 3, 4}) {
        for (int threads : {1, 2}) {
            if (threads == 2 && !two_threads) continue;
            for (int infl : {2, 4}) {
                for (auto isa : {SkinningIsa::Scalar, SkinningIsa::Sse2, SkinningIsa::Avx2, SkinningIsa::Avx512}) {
                    if ((layout == 2 || layout == 4) && isa != SkinningIsa::Avx512 && isa != SkinningIsa::Sse2) continue;
                    b->Args({static_cast<int>(isa), infl, threads, layout});
                }
            }
        }
    }
}

void BM_Skin50k(benchmark::State& state) { run_generated(state, kVertices); }
BENCHMARK(BM_Skin50k)
    ->Apply([](benchmark::internal::Benchmark* b) { generated_args(b, true); })
    ->ComputeStatistics("min", min_of)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// The first 4,096 vertices of the same mesh: the working set (~300 KB) stays in L2, so this is
// the kernels' compute throughput without the memory traffic of the 50k case.
void BM_SkinL2(benchmark::State& state) { run_generated(state, 4096); }
BENCHMARK(BM_SkinL2)
    ->Apply([](benchmark::internal::Benchmark* b) { generated_args(b, false); })
    ->ComputeStatistics("min", min_of)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

void BM_SkinStreamBound(benchmark::State& state) {
    // Reads what the 4-influence job reads — positions, normals and the influences: 24 B/vertex
    // for /layout:0 (SkinIndices4 + SkinWeights4), 20 B/vertex for /layout:1 (packed), 12 B for
    // /layout:3 (packed, Unorm16) — and writes what it writes (24 B/vertex), with no arithmetic
    // worth counting.
    const int layout = static_cast<int>(state.range(0));
    const auto& src = generated_mesh();
    SoaVec3Buffer out_p(kVertices), out_n(kVertices);
    const PackedSkinInfluences& packed = layout == 3 ? src.packed16[4] : src.packed[4];
    const auto* words = layout == 0 ? reinterpret_cast<const std::uint32_t*>(src.weights.data())
                                    : reinterpret_cast<const std::uint32_t*>(packed.data());
    const std::size_t num_words = layout == 0 ? kVertices * 4 : packed.num_blocks() * packed.block_floats();
    const auto* idx = reinterpret_cast<const std::uint64_t*>(src.indices.data());
    std::uint32_t sink = 0;
    for (auto _ : state) {
        std::memcpy(out_p.out().x.data(), src.in_p.in().x.data(), kVertices * sizeof(float));
        std::memcpy(out_p.out().y.data(), src.in_p.in().y.data(), kVertices * sizeof(float));
        std::memcpy(out_p.out().z.data(), src.in_p.in().z.data(), kVertices * sizeof(float));
        std::memcpy(out_n.out().x.data(), src.in_n.in().x.data(), kVertices * sizeof(float));
        std::memcpy(out_n.out().y.data(), src.in_n.in().y.data(), kVertices * sizeof(float));
        std::memcpy(out_n.out().z.data(), src.in_n.in().z.data(), kVertices * sizeof(float));
        std::uint64_t acc = 0;
        if (layout == 0) {
            for (std::size_t i = 0; i < kVertices; ++i) acc += idx[i];
        }
        for (std::size_t i = 0; i + 4 <= num_words; i += 4) acc ^= words[i] + words[i + 1] + words[i + 2] + words[i + 3];
        sink += static_cast<std::uint32_t>(acc);
        benchmark::DoNotOptimize(sink);
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kVertices));
    state.SetLabel(layout == 0 ? "memcpy of the output streams + a pass over indices and weights"
                               : "memcpy of the output streams + a pass over the packed influences");
}
BENCHMARK(BM_SkinStreamBound)
    ->ArgNames({"layout"})
    ->Arg(0)
    ->Arg(1)
    ->Arg(3)
    ->ComputeStatistics("min", min_of)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// ---------------------------------------------------------------------------------------------
// The base avatar
// ---------------------------------------------------------------------------------------------

struct AvatarMesh {
    std::string name;
    SkinJointList list;
    std::vector<float> weights;
    SoaVec3Buffer in_p, in_n;
};

struct Avatar {
    std::string error;
    std::shared_ptr<const Skeleton> skeleton;
    std::vector<Vec3> model_positions;
    std::vector<Quat> model_rotations;
    std::vector<AvatarMesh> meshes;
    std::size_t vertices = 0;
};

const Avatar& avatar() {
    static const Avatar av = [] {
        Avatar a;
        const std::filesystem::path dir = std::filesystem::path(SLANIM_SHARED_DIR) / "sl-character";
        auto sk = load_skeleton(dir);
        if (!sk.ok()) {
            a.error = "../shared/sl-character: " + sk.error().describe();
            return a;
        }
        a.skeleton = *sk;
        const Skeleton& s = *a.skeleton;
        const auto nj = static_cast<std::size_t>(s.num_joints());
        a.model_positions.resize(nj);
        a.model_rotations.resize(nj);
        // A non-trivial pose: every bone turned a little.
        std::vector<Quat> local(s.rest_rotations().begin(), s.rest_rotations().end());
        for (std::size_t j = 0; j < static_cast<std::size_t>(s.num_bones()); ++j) {
            local[j] = quat_from_axis_angle(0.05f * static_cast<float>(j % 7), {0.3f, 1.f, 0.2f});
        }
        LocalToModelJob l2m;
        l2m.skeleton = &s;
        l2m.local_positions = s.rest_positions();
        l2m.local_rotations = local;
        l2m.local_scales = s.rest_scales();
        l2m.model_positions = a.model_positions;
        l2m.model_rotations = a.model_rotations;
        l2m.run();
        for (const char* name : {"head", "upper_body", "lower_body", "hair", "eyelashes", "skirt", "eye"}) {
            auto mesh = load_llm(dir / (std::string("avatar_") + name + ".llm"), LlmFileKind::Base);
            if (!mesh.ok()) {
                a.error = mesh.error().describe();
                return a;
            }
            AvatarMesh m;
            m.name = name;
            std::vector<std::string> joints = mesh->skin_joints;
            if (!mesh->has_weights) {
                // The eye is rigid (no weights): bound to its joint alone, entry 1 after the
                // ancestor entry.
                joints = {"mEyeLeft"};
                m.weights.assign(mesh->coords.size(), 1.f);
            } else {
                m.weights = mesh->weights;
            }
            auto list = build_skin_joint_list(s, joints);
            if (!list.ok()) {
                a.error = std::string(name) + ": " + list.error().describe();
                return a;
            }
            m.list = std::move(*list);
            m.in_p = SoaVec3Buffer(mesh->coords);
            m.in_n = SoaVec3Buffer(mesh->normals);
            a.vertices += mesh->coords.size();
            a.meshes.push_back(std::move(m));
        }
        return a;
    }();
    return av;
}

void BM_SkinAvatar(benchmark::State& state) {
    const SkinningIsa isa = isa_arg(state, 0);
    if (skip_unsupported(state, isa)) return;
    const Avatar& a = avatar();
    if (!a.error.empty()) {
        state.SkipWithError(a.error.c_str());
        return;
    }
    // The outputs belong to the benchmark (the shared Avatar is const): per-mesh buffers.
    std::vector<SoaVec3Buffer> out_p, out_n;
    std::vector<std::vector<SkinMatrix>> mats;
    for (const auto& m : a.meshes) {
        out_p.emplace_back(m.in_p.size());
        out_n.emplace_back(m.in_p.size());
        mats.emplace_back(m.list.entries.size());
    }
    for (auto _ : state) {
        for (std::size_t i = 0; i < a.meshes.size(); ++i) {
            const auto& m = a.meshes[i];
            SlSkinMatricesJob mj;
            mj.joints = &m.list;
            mj.model_positions = a.model_positions;
            mj.model_rotations = a.model_rotations;
            mj.matrices = mats[i];
            mj.run();
            SlSkinningJob job;
            job.matrices = mats[i];
            job.weights = m.weights;
            job.in_positions = m.in_p.in();
            job.in_normals = m.in_n.in();
            job.out_positions = out_p[i].out();
            job.out_normals = out_n[i].out();
            job.isa = isa;
            job.run();
        }
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(a.vertices));
    state.SetLabel(std::string(to_string(isa)) + ", " + std::to_string(a.meshes.size()) + " meshes, " +
                   std::to_string(a.vertices) + " vertices, matrices + positions + normals");
}
BENCHMARK(BM_SkinAvatar)
    ->ArgNames({"isa"})
    ->Arg(static_cast<int>(SkinningIsa::Scalar))
    ->Arg(static_cast<int>(SkinningIsa::Sse2))
    ->Arg(static_cast<int>(SkinningIsa::Avx2))
    ->Arg(static_cast<int>(SkinningIsa::Avx512))
    ->ComputeStatistics("min", min_of)
    ->Unit(benchmark::kMicrosecond);

/// The skin phase of a crowd without the rest of the step: the base avatar skinned into the
/// outputs of kCrowdAvatars avatars in turn (~128 KiB each, 32 MiB in all: more than the L2 and
/// more than the L3 of most desktop CPUs, though not of every server), one pose for all (the
/// inputs stay in cache, as the crowd's shared bind poses do), /stream:1 with non-temporal stores
/// (AppearanceOptions::streaming_stores, the crowd's default), /stream:0 without.
constexpr std::size_t kCrowdAvatars = 256;

void BM_SkinAvatarCrowd(benchmark::State& state) {
    const SkinningIsa isa = isa_arg(state, 0);
    if (skip_unsupported(state, isa)) return;
    const bool stream = state.range(1) != 0;
    const Avatar& a = avatar();
    if (!a.error.empty()) {
        state.SkipWithError(a.error.c_str());
        return;
    }
    std::vector<std::vector<SkinMatrix>> mats;
    for (const auto& m : a.meshes) {
        mats.emplace_back(m.list.entries.size());
        SlSkinMatricesJob mj;
        mj.joints = &m.list;
        mj.model_positions = a.model_positions;
        mj.model_rotations = a.model_rotations;
        mj.matrices = mats.back();
        mj.run();
    }
    std::vector<SoaVec3Buffer> out_p, out_n;  // avatar-major: kCrowdAvatars × meshes
    for (std::size_t k = 0; k < kCrowdAvatars; ++k) {
        for (const auto& m : a.meshes) {
            out_p.emplace_back(m.in_p.size());
            out_n.emplace_back(m.in_p.size());
        }
    }
    for (auto _ : state) {
        for (std::size_t k = 0; k < out_p.size(); ++k) {
            const std::size_t i = k % a.meshes.size();
            const auto& m = a.meshes[i];
            SlSkinningJob job;
            job.matrices = mats[i];
            job.weights = m.weights;
            job.in_positions = m.in_p.in();
            job.in_normals = m.in_n.in();
            job.out_positions = out_p[k].out();
            job.out_normals = out_n[k].out();
            job.isa = isa;
            job.streaming_stores = stream;
            job.run();
        }
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(a.vertices * kCrowdAvatars));
    state.SetLabel(std::string(to_string(isa)) + (stream ? ", streaming stores, " : ", ") +
                   std::to_string(kCrowdAvatars) + " avatars, positions + normals");
}
BENCHMARK(BM_SkinAvatarCrowd)
    ->ArgNames({"isa", "stream"})
    ->ArgsProduct({{static_cast<int>(SkinningIsa::Scalar), static_cast<int>(SkinningIsa::Sse2),
                    static_cast<int>(SkinningIsa::Avx2), static_cast<int>(SkinningIsa::Avx512)},
                   {0, 1}})
    ->ComputeStatistics("min", min_of)
    ->Unit(benchmark::kMillisecond);

}  // namespace
