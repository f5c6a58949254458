// SPDX-License-Identifier: MIT
// slanim-bench.wasm (tools/web/bench.html, scripts/web-bench.sh): the loops of
// benchmarks/avatar_kernels.hpp for the browser, behind four C functions. Not part of the page
// (its own module, built by scripts/build-web.sh into build-web/web-bench/).
#include <emscripten/emscripten.h>

#include <cstddef>
#include <cstdint>

#include "avatar_kernels.hpp"
#include "slanim/core/isa.hpp"

using slanim::bench::AvatarKernel;
using slanim::bench::AvatarKernels;

extern "C" {

/// The kernels over the .anim at bytes[0, size) (made to loop); null when it is not a motion.
/// Free with slanim_kernels_destroy.
EMSCRIPTEN_KEEPALIVE AvatarKernels* slanim_kernels_create(const std::uint8_t* bytes, std::size_t size) {
    return AvatarKernels::create({bytes, size}).release();
}
EMSCRIPTEN_KEEPALIVE void slanim_kernels_destroy(AvatarKernels* k) { delete k; }
/// Runs kernel `kernel` (AvatarKernel: 0 sampling, 1 blend, 2 blend4x214, 3 local_to_model,
/// 4 clock_read)
/// `iterations` times; returns the checksum of the outputs (it keeps them observable).
EMSCRIPTEN_KEEPALIVE double slanim_kernels_run(AvatarKernels* k, int kernel, int iterations) {
    if (!k || kernel < 0 || kernel >= slanim::bench::kAvatarKernelCount) return 0.0;
    k->run(static_cast<AvatarKernel>(kernel), iterations);
    return k->checksum();
}
/// The local pose the blends write: 4 floats (x, y, z, w) per joint of the default skeleton.
EMSCRIPTEN_KEEPALIVE const float* slanim_kernels_pose(AvatarKernels* k) { return k ? k->pose_rotations() : nullptr; }
/// The instruction set the kernels run (isa_name(active_isa())).
EMSCRIPTEN_KEEPALIVE const char* slanim_kernels_isa() { return slanim::isa_name(slanim::active_isa()); }

}  // extern "C"
