// SPDX-License-Identifier: MIT
// The PoseBlender's folds (blend_lanes.hpp) compiled for SSE2 (4 lanes, __m128; the x86-64
// baseline, no extra flags; in WebAssembly with -msimd128 -msse2, wasm SIMD through Emscripten's
// SSE2 headers): chosen by blend.cpp when active_isa() is Isa::Sse2.
#if (defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))) || (defined(__wasm_simd128__) && defined(__SSE2__))
#define SLANIM_BLEND_LANES_NS sse2
#include "blend_lanes.hpp"

namespace slanim::blend_detail::sse2 {

void fold_slots(const FoldArgs& a) { fold_slots_impl(a); }
void fold_layers(const LayerFoldArgs& a) { fold_layers_impl(a); }

}  // namespace slanim::blend_detail::sse2
#endif
