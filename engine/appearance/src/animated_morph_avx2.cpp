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

    static constexpr bool kStoresRuns = true;
    /// The 8 vectors (x[l], y[l], z[l]) as 24 consecutive floats at dst: output k lane L holds
    /// element (8k + L) / 3 of plane (8k + L) % 3.
    static void store_vec3(float* dst, V x, V y, V z) {
        const __m256i idx[3] = {_mm256_setr_epi32(0, 0, 0, 1, 1, 1, 2, 2), _mm256_setr_epi32(2, 3, 3, 3, 4, 4, 4, 5),
                                _mm256_setr_epi32(5, 5, 6, 6, 6, 7, 7, 7)};
        const V x0 = _mm256_permutevar8x32_ps(x, idx[0]), y0 = _mm256_permutevar8x32_ps(y, idx[0]);
        const V z0 = _mm256_permutevar8x32_ps(z, idx[0]);
        _mm256_storeu_ps(dst, _mm256_blend_ps(_mm256_blend_ps(x0, y0, 0x92), z0, 0x24));
        const V x1 = _mm256_permutevar8x32_ps(x, idx[1]), y1 = _mm256_permutevar8x32_ps(y, idx[1]);
        const V z1 = _mm256_permutevar8x32_ps(z, idx[1]);
        _mm256_storeu_ps(dst + 8, _mm256_blend_ps(_mm256_blend_ps(x1, y1, 0x24), z1, 0x49));
        const V x2 = _mm256_permutevar8x32_ps(x, idx[2]), y2 = _mm256_permutevar8x32_ps(y, idx[2]);
        const V z2 = _mm256_permutevar8x32_ps(z, idx[2]);
        _mm256_storeu_ps(dst + 16, _mm256_blend_ps(_mm256_blend_ps(x2, y2, 0x49), z2, 0x92));
    }
    /// The 8 pairs (u[l], v[l]) as 16 consecutive floats at dst.
    static void store_vec2(float* dst, V u, V v) {
        const V lo = _mm256_unpacklo_ps(u, v), hi = _mm256_unpackhi_ps(u, v);
        _mm256_storeu_ps(dst, _mm256_permute2f128_ps(lo, hi, 0x20));
        _mm256_storeu_ps(dst + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
    }
};
}  // namespace

void evaluate_avx2(const Args& a) { evaluate<Avx2Lanes>(a); }
void evaluate_soa_avx2(const Args& a) { evaluate_soa<Avx2Lanes>(a); }

}  // namespace slanim::animated_detail
#else
namespace slanim::animated_detail {
void evaluate_avx2(const Args& a) { evaluate_scalar(a); }
void evaluate_soa_avx2(const Args& a) { evaluate_soa_scalar(a); }
}  // namespace slanim::animated_detail
#endif
