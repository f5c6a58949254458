// SPDX-License-Identifier: MIT
// The PoseBlender's folds (blend_lanes.hpp) compiled for AVX2 (8 lanes, __m256; built with
// -mavx2): chosen by blend.cpp when active_isa() is Isa::Avx2.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SLANIM_BLEND_LANES_NS avx2
#include "blend_lanes.hpp"

namespace slanim::blend_detail::avx2 {

void fold_slots(const FoldArgs& a) { fold_slots_impl(a); }
void fold_layers(const LayerFoldArgs& a) { fold_layers_impl(a); }

}  // namespace slanim::blend_detail::avx2
#endif
