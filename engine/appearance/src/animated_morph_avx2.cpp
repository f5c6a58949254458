// SPDX-License-Identifier: MIT
// The animated-layer evaluation on 8 AVX2 lanes (animated_morph_kernel.hpp); built with -mavx2
// and called only when active_isa() ≥ Isa::Avx2.
#include "animated_morph_kernel.hpp"

#if defined(SLANIM_APPEARANCE_X86)
#include <immintrin.h>

namespace slanim::animated_detail {
namespace {
struct Avx2Lanes {
    using V = __m256;
    static constexpr std::size_t W = 8;
    static V load(const float* p) { return _mm256_loadu_ps(p); }
    static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
    static V set1(float f) { return _mm256_set1_ps(f); }
    static V add(V a, V b) { return _mm256_add_ps(a, b); }
    static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
    static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
    static V div(V a, V b) { return _mm256_div_ps(a, b); }
    static V sqrt(V a) { return _mm256_sqrt_ps(a); }
    static V usable(V len2) {
        return _mm256_and_ps(_mm256_cmp_ps(len2, _mm256_setzero_ps(), _CMP_GT_OQ),
                             _mm256_cmp_ps(len2, _mm256_set1_ps(std::numeric_limits<float>::infinity()), _CMP_LT_OQ));
    }
    static V select(V ok, V a, V b) { return _mm256_blendv_ps(b, a, ok); }
    static bool all(V ok) { return _mm256_movemask_ps(ok) == 0xFF; }
};
}  // namespace

void evaluate_avx2(const Args& a) { evaluate<Avx2Lanes>(a); }

}  // namespace slanim::animated_detail
#else
namespace slanim::animated_detail {
void evaluate_avx2(const Args& a) { evaluate_scalar(a); }
}  // namespace slanim::animated_detail
#endif
