// SPDX-License-Identifier: MIT
// BM_AvatarKernel/<kernel>: one avatar's kernels of the world's step (avatar_kernels.hpp) on
// DANCE1 made to loop, the native side of scripts/web-bench.sh (the browser runs the same
// loops compiled to WebAssembly: tools/web/bench.html). One call per iteration; SLANIM_ISA picks
// the instruction set as everywhere (the label names it).
#include <benchmark/benchmark.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "avatar_kernels.hpp"
#include "slanim/core/isa.hpp"

namespace {

using slanim::bench::AvatarKernel;
using slanim::bench::AvatarKernels;

AvatarKernels* dance1() {
    static const std::unique_ptr<AvatarKernels> k = [] {
        std::ifstream in(std::string(SLANIM_SHARED_DIR) + "/anims/linden/DANCE1.anim", std::ios::binary);
        const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        return AvatarKernels::create(bytes);
    }();
    return k.get();
}

void bm_avatar_kernel(benchmark::State& state, AvatarKernel kernel) {
    AvatarKernels* k = dance1();
    if (!k) return state.SkipWithError("../shared/anims/linden/DANCE1.anim is absent");
    for (auto _ : state) {
        k->run(kernel, 1);
        benchmark::ClobberMemory();
    }
    benchmark::DoNotOptimize(k->checksum());
    state.SetLabel(std::string("isa ") + slanim::isa_name(slanim::active_isa()));
}

}  // namespace

BENCHMARK_CAPTURE(bm_avatar_kernel, sampling, AvatarKernel::Sampling)->Name("BM_AvatarKernel/sampling");
BENCHMARK_CAPTURE(bm_avatar_kernel, blend, AvatarKernel::Blend)->Name("BM_AvatarKernel/blend");
BENCHMARK_CAPTURE(bm_avatar_kernel, blend4x214, AvatarKernel::Blend4x214)->Name("BM_AvatarKernel/blend4x214");
BENCHMARK_CAPTURE(bm_avatar_kernel, local_to_model, AvatarKernel::LocalToModel)->Name("BM_AvatarKernel/local_to_model");
BENCHMARK_CAPTURE(bm_avatar_kernel, clock_read, AvatarKernel::ClockRead)->Name("BM_AvatarKernel/clock_read");
