// SPDX-License-Identifier: MIT
// AVX2 + FMA skinning kernels, 8 vertices per iteration. Compiled with per-file ISA flags and
// called only after the CPU check in skinning.cpp. Keep this file free of standard-library
// inline functions (see skinning_kernels.hpp).
//
// Per block of 8 vertices: each vertex's blended matrix is a ymm (rows 0 and 1) and an xmm
// (row 2); an in-lane 4×4 transpose plus 128-bit lane permutes turn the 8 matrices into 12 ymm
// holding element (row, col) of the 8 vertices; positions and normals are then transformed in
// SoA form (normals renormalised with rsqrt and one Newton step).
#include "skinning_kernels.hpp"

#if defined(__AVX2__) && defined(__FMA__)

#include <immintrin.h>

namespace slanim::skin_detail {
namespace {

#define SLANIM_INLINE inline __attribute__((always_inline))

/// In-lane 4×4 transpose of 4 ymm: out[c] lane L = element c of lane L of in[0..3].
SLANIM_INLINE void transpose4_in_lanes(__m256 a, __m256 b, __m256 c, __m256 d, __m256 (&out)[4]) {
    const __m256 t0 = _mm256_unpacklo_ps(a, b);
    const __m256 t1 = _mm256_unpackhi_ps(a, b);
    const __m256 t2 = _mm256_unpacklo_ps(c, d);
    const __m256 t3 = _mm256_unpackhi_ps(c, d);
    out[0] = _mm256_shuffle_ps(t0, t2, 0x44);
    out[1] = _mm256_shuffle_ps(t0, t2, 0xEE);
    out[2] = _mm256_shuffle_ps(t1, t3, 0x44);
    out[3] = _mm256_shuffle_ps(t1, t3, 0xEE);
}

/// Stores 8 floats at p: non-temporal (p 32-byte aligned) when Stream.
template <bool Stream>
SLANIM_INLINE void store8(float* p, __m256 x) {
    if constexpr (Stream) _mm256_stream_ps(p, x);
    else _mm256_storeu_ps(p, x);
}

/// The outputs of vertices [v, v + 8) by the SoA matrices E (E[r][c]: element (r, c) of the 8
/// vertices' matrices): O[0..2] positions x, y, z; O[3..5] normals x, y, z (renormalised; unset
/// without normals).
SLANIM_INLINE void transform_e8_out(const __m256 (&E)[3][4], const KernelArgs& a, std::size_t v, __m256 (&O)[6]) {
    const __m256 px = _mm256_loadu_ps(a.px + v);
    const __m256 py = _mm256_loadu_ps(a.py + v);
    const __m256 pz = _mm256_loadu_ps(a.pz + v);
#pragma GCC unroll 3
    for (int r = 0; r < 3; ++r) {
        O[r] = _mm256_fmadd_ps(E[r][0], px, _mm256_fmadd_ps(E[r][1], py, _mm256_fmadd_ps(E[r][2], pz, E[r][3])));
    }
    if (!a.nx) return;
    const __m256 nx = _mm256_loadu_ps(a.nx + v);
    const __m256 ny = _mm256_loadu_ps(a.ny + v);
    const __m256 nz = _mm256_loadu_ps(a.nz + v);
    __m256 n[3];
#pragma GCC unroll 3
    for (int r = 0; r < 3; ++r) {
        n[r] = _mm256_fmadd_ps(E[r][0], nx, _mm256_fmadd_ps(E[r][1], ny, _mm256_mul_ps(E[r][2], nz)));
    }
    const __m256 len2 = _mm256_fmadd_ps(n[0], n[0], _mm256_fmadd_ps(n[1], n[1], _mm256_mul_ps(n[2], n[2])));
    const __m256 y = _mm256_rsqrt_ps(len2);
    const __m256 h = _mm256_mul_ps(_mm256_mul_ps(len2, _mm256_set1_ps(0.5f)), y);
    const __m256 ys = _mm256_mul_ps(y, _mm256_fnmadd_ps(h, y, _mm256_set1_ps(1.5f)));
    const __m256 ok = _mm256_cmp_ps(len2, _mm256_set1_ps(kMinNormalLength2), _CMP_GT_OQ);
    const __m256 scale = _mm256_blendv_ps(_mm256_set1_ps(1.f), ys, ok);
#pragma GCC unroll 3
    for (int r = 0; r < 3; ++r) O[3 + r] = _mm256_mul_ps(n[r], scale);
}

/// Stores the outputs O of vertices [v, v + 8). Stream: non-temporal stores (outputs 32-byte
/// aligned at v).
template <bool Stream>
SLANIM_INLINE void store_out8(const KernelArgs& a, std::size_t v, const __m256 (&O)[6]) {
    if (a.nx) {
        store8<Stream>(a.onx + v, O[3]);
        store8<Stream>(a.ony + v, O[4]);
        store8<Stream>(a.onz + v, O[5]);
    }
    store8<Stream>(a.opx + v, O[0]);
    store8<Stream>(a.opy + v, O[1]);
    store8<Stream>(a.opz + v, O[2]);
}

/// Non-temporal stores of two blocks' outputs, vertices [v, v + 16), a whole 64-byte line per
/// stream at a time (outputs 64-byte aligned at v): a write-combining buffer then leaves full
/// at once. Eight-float stores alternating over six streams complete their lines only every
/// other block and cut this machine's streaming bandwidth by a third.
SLANIM_INLINE void stream_out16(const KernelArgs& a, std::size_t v, const __m256 (&O0)[6], const __m256 (&O1)[6]) {
    float* const out[6] = {a.opx, a.opy, a.opz, a.onx, a.ony, a.onz};
    const int streams = a.nx ? 6 : 3;
    for (int s = 0; s < streams; ++s) {
        _mm256_stream_ps(out[s] + v, O0[s]);
        _mm256_stream_ps(out[s] + v + 8, O1[s]);
    }
}

/// Positions (and normals) of vertices [v, v + 8) by the SoA matrices E, stored.
template <bool Stream = false>
SLANIM_INLINE void transform_e8(const __m256 (&E)[3][4], const KernelArgs& a, std::size_t v) {
    __m256 O[6];
    transform_e8_out(E, a, v, O);
    store_out8<Stream>(a, v, O);
}

/// 8 matrices (rows 0 and 1 of matrix k in Y[k], row 2 in X[k]) as 12 ymm: E[r][c] lane k =
/// element (r, c) of matrix k.
SLANIM_INLINE void transpose_matrices8(const __m256 (&Y)[8], const __m128 (&X)[8], __m256 (&E)[3][4]) {
    // Rows 0 and 1: vertices 0..3 and 4..7 transposed in lanes, then lanes recombined.
    __m256 T0[4], T1[4];
    transpose4_in_lanes(Y[0], Y[1], Y[2], Y[3], T0);
    transpose4_in_lanes(Y[4], Y[5], Y[6], Y[7], T1);
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
        E[0][c] = _mm256_permute2f128_ps(T0[c], T1[c], 0x20);
        E[1][c] = _mm256_permute2f128_ps(T0[c], T1[c], 0x31);
    }
    // Row 2: pair vertex k with k + 4 in one ymm, then one in-lane transpose.
    __m256 Z[4];
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) Z[k] = _mm256_insertf128_ps(_mm256_castps128_ps256(X[k]), X[k + 4], 1);
    transpose4_in_lanes(Z[0], Z[1], Z[2], Z[3], E[2]);
}

/// The outputs of vertices [v, v + 8) by the 8 blended matrices (transform_e8_out).
SLANIM_INLINE void transform8_out(const __m256 (&Y)[8], const __m128 (&X)[8], const KernelArgs& a, std::size_t v,
                                  __m256 (&O)[6]) {
    __m256 E[3][4];
    transpose_matrices8(Y, X, E);
    transform_e8_out(E, a, v, O);
}

/// Positions (and normals) of vertices [v, v + 8) by the 8 blended matrices, stored.
template <bool Stream = false>
SLANIM_INLINE void transform8(const __m256 (&Y)[8], const __m128 (&X)[8], const KernelArgs& a, std::size_t v) {
    __m256 O[6];
    transform8_out(Y, X, a, v, O);
    store_out8<Stream>(a, v, O);
}

}  // namespace

namespace {

template <int K>
std::size_t skin_k_avx2(const KernelArgs& a) {
    const float* M = a.matrices;
    const __m256i last = _mm256_set1_epi16(static_cast<short>(a.num_matrices - 1));
    // Float offsets (index · 16) of the block's 32 influence matrices, clamped to the palette.
    alignas(32) std::uint32_t off[32];
    std::size_t v = a.begin;
    for (; v + 8 <= a.end; v += 8) {
        const std::uint16_t* idx = a.indices + 4 * v;
        const float* w = a.weights4 + 4 * v;
        const __m256i c0 = _mm256_min_epu16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(idx)), last);
        const __m256i c1 = _mm256_min_epu16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(idx + 16)), last);
        auto* o = reinterpret_cast<__m256i*>(off);
        _mm256_store_si256(o, _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(c0)), 4));
        _mm256_store_si256(o + 1, _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm256_extracti128_si256(c0, 1)), 4));
        _mm256_store_si256(o + 2, _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(c1)), 4));
        _mm256_store_si256(o + 3, _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm256_extracti128_si256(c1, 1)), 4));
        __m256 Y[8];
        __m128 X[8];
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) {
            const std::uint32_t* ok = off + 4 * k;
            const float* wk = w + 4 * k;
            __m256 wb = _mm256_broadcast_ss(wk);
            const float* m0 = M + ok[0];
            __m256 y = _mm256_mul_ps(wb, _mm256_load_ps(m0));
            __m128 x = _mm_mul_ps(_mm256_castps256_ps128(wb), _mm_load_ps(m0 + 8));
#pragma GCC unroll 3
            for (int j = 1; j < K; ++j) {
                wb = _mm256_broadcast_ss(wk + j);
                const float* mj = M + ok[j];
                y = _mm256_fmadd_ps(wb, _mm256_load_ps(mj), y);
                x = _mm_fmadd_ps(_mm256_castps256_ps128(wb), _mm_load_ps(mj + 8), x);
            }
            Y[k] = y;
            X[k] = x;
        }
        transform8(Y, X, a, v);
    }
    return v;
}


/// The permute path's palette: T[e · stride + i] = element e (row-major 3×4) of matrix i, for
/// palettes of ≤ kPermutePalette matrices; zero past the palette, so that a window of 8 starting
/// at any used index stays inside the table. stride = permute_stride(n).
constexpr std::uint32_t kPermutePalette = 128;
constexpr std::size_t kPermuteStride = kPermutePalette + 8;  // the largest stride

SLANIM_INLINE std::size_t permute_stride(std::uint32_t n) { return (std::size_t{n} + 15) & ~std::size_t{7}; }

void transpose_palette8(const float* M, std::uint32_t n, float* T, std::size_t stride) {
    for (std::size_t e = 0; e < 12; ++e) {
        float* row = T + e * stride;
        for (std::size_t i = 0; i < stride; ++i) row[i] = i < n ? M[16 * i + e] : 0.f;
    }
}

/// The half block's smallest used index relative to its block's base, when all its K rows of 8
/// relative indices (row stride 16 bytes) lie in a window of 8; else -1.
template <int K>
SLANIM_INLINE int window8(const std::uint8_t* rd) {
    __m128i lo = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(rd)), hi = lo;
#pragma GCC unroll 3
    for (int k = 1; k < K; ++k) {
        const __m128i r = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(rd + 16 * k));
        lo = _mm_min_epu8(lo, r);
        hi = _mm_max_epu8(hi, r);
    }
    const int mn = _mm_extract_epi16(_mm_minpos_epu16(_mm_cvtepu8_epi16(lo)), 0);
    const int mx = 255 - _mm_extract_epi16(_mm_minpos_epu16(_mm_sub_epi16(_mm_set1_epi16(255), _mm_cvtepu8_epi16(hi))), 0);
    return mx - mn < 8 ? mn : -1;
}

/// Element e of the 8 vertices' blended matrices by register permutes: a half block whose
/// indices lie in [first, first + 8) reads row e of the palette there once and permutes it by
/// each influence's index vector, then w0·M0 and an FMA per further influence, the gather
/// path's operations per element, so both give the same bits.
template <int K>
SLANIM_INLINE void skin_half_permute(const float* T, std::size_t stride, std::size_t first, const std::uint8_t* rd,
                                     int shift, const float* wd, const KernelArgs& a, std::size_t v) {
    __m256i idx[K];
    __m256 w[K];
#pragma GCC unroll 4
    for (int k = 0; k < K; ++k) {
        const __m128i r = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(rd + 16 * k));
        idx[k] = _mm256_sub_epi32(_mm256_cvtepu8_epi32(r), _mm256_set1_epi32(shift));
        w[k] = _mm256_load_ps(wd + 16 * k);
    }
    __m256 E[3][4];
#pragma GCC unroll 12
    for (int e = 0; e < 12; ++e) {
        const __m256 row = _mm256_loadu_ps(T + static_cast<std::size_t>(e) * stride + first);
        __m256 acc = _mm256_mul_ps(w[0], _mm256_permutevar8x32_ps(row, idx[0]));
#pragma GCC unroll 3
        for (int k = 1; k < K; ++k) acc = _mm256_fmadd_ps(w[k], _mm256_permutevar8x32_ps(row, idx[k]), acc);
        E[e / 4][e % 4] = acc;
    }
    transform_e8(E, a, v);
}

template <int K, bool U16>
std::size_t skin_packed_k_avx2(const KernelArgs& a) {
    const float* M = a.matrices;
    // Palettes of ≤ 128 matrices: half blocks whose indices fit a window of 8 take the permute
    // path (12·K permutes, no per-vertex matrix loads, no transpose); the others gather.
    alignas(32) float T[12 * kPermuteStride];
    const bool permute = a.num_matrices <= kPermutePalette && a.end - a.begin >= 64;
    const std::size_t stride = permute_stride(a.num_matrices);
    if (permute) transpose_palette8(M, a.num_matrices, T, stride);
    std::size_t v = a.begin;
    // Half blocks of 8 vertices (begin is a multiple of 16).
    for (; v + 8 <= a.end; v += 8) {
        const std::size_t b = v / 16, half = v / 8 % 2;
        const std::uint32_t base = a.headers[b] & 0xFFFFu;
        const float* block = a.packed + b * a.block_floats;
        const auto* rd = reinterpret_cast<const std::uint8_t*>(block + (U16 ? 8 : 16) * K) + 8 * half;
        // The half block's weights as floats (row stride 16): as stored, or decoded.
        alignas(32) float wf[U16 ? 16 * K : 1];
        const float* wd = block + 8 * half;
        if constexpr (U16) {
#pragma GCC unroll 4
            for (int k = 0; k < K; ++k) {
                const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 8 * k) + half);
                _mm256_store_ps(wf + 16 * k, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(q)),
                                                           _mm256_set1_ps(kUnorm16Scale)));
            }
            wd = wf;
        }
        if (permute) {
            const int first = window8<K>(rd);
            if (first >= 0) {
                skin_half_permute<K>(T, stride, base + static_cast<std::uint32_t>(first), rd, first, wd, a, v);
                continue;
            }
        }
        // Float offsets of the half block's 8·K matrices.
        alignas(32) std::uint32_t off[8 * K];
        const __m256i b8 = _mm256_set1_epi32(static_cast<int>(base));
#pragma GCC unroll 4
        for (int k = 0; k < K; ++k) {
            const __m128i r = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(rd + 16 * k));
            _mm256_store_si256(reinterpret_cast<__m256i*>(off + 8 * k),
                               _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtepu8_epi32(r), b8), 4));
        }
        __m256 Y[8];
        __m128 X[8];
#pragma GCC unroll 8
        for (int l = 0; l < 8; ++l) {
            __m256 wb = _mm256_broadcast_ss(wd + l);
            const float* m0 = M + off[l];
            __m256 y = _mm256_mul_ps(wb, _mm256_load_ps(m0));
            __m128 x = _mm_mul_ps(_mm256_castps256_ps128(wb), _mm_load_ps(m0 + 8));
#pragma GCC unroll 3
            for (int j = 1; j < K; ++j) {
                wb = _mm256_broadcast_ss(wd + 16 * j + l);
                const float* mj = M + off[8 * j + l];
                y = _mm256_fmadd_ps(wb, _mm256_load_ps(mj), y);
                x = _mm_fmadd_ps(_mm256_castps256_ps128(wb), _mm_load_ps(mj + 8), x);
            }
            Y[l] = y;
            X[l] = x;
        }
        transform8(Y, X, a, v);
    }
    return v;
}

template <bool U16>
std::size_t skin_packed_u_avx2(const KernelArgs& a) {
    switch (a.influences) {
        case 1: return skin_packed_k_avx2<1, U16>(a);
        case 2: return skin_packed_k_avx2<2, U16>(a);
        case 3: return skin_packed_k_avx2<3, U16>(a);
        default: return skin_packed_k_avx2<4, U16>(a);
    }
}

}  // namespace

std::size_t skin4_avx2(const KernelArgs& a) {
    switch (a.influences) {
        case 1: return skin_k_avx2<1>(a);
        case 2: return skin_k_avx2<2>(a);
        case 3: return skin_k_avx2<3>(a);
        default: return skin_k_avx2<4>(a);
    }
}

// No non-temporal stores here (KernelArgs::streaming_stores is ignored): tried, they made the
// compute-bound AVX2 packed kernel slower (50k vertices × 4 influences: 137 → 149 µs).
std::size_t skin_packed_avx2(const KernelArgs& a) {
    return a.unorm16 ? skin_packed_u_avx2<true>(a) : skin_packed_u_avx2<false>(a);
}

namespace {

/// The SL permute path's tables: rows 0..11 the palette M transposed (element e of matrix i at
/// T[e · stride + i]) with −0 made +0 (x + 0, as the gather path does: then f·D + M = M exactly
/// when f = 0, so rigid blocks may read M alone), rows 12..23 D[i] = M[min(i + 1, last)] − M[i],
/// the subtraction the gather path does per vertex. Past the palette, rows 0..11 repeat the last
/// matrix (so D[last] is its M − M, like the gather path's) and D is never read by a used index.
/// Eight matrices at a time: the kernel's transpose (transpose_matrices8), then one vector subtraction per
/// 8 entries of D.
void sl_palette_tables(const float* M, std::uint32_t n, float* T, std::size_t stride) {
    const __m256 zero = _mm256_setzero_ps();
    for (std::size_t i = 0; i < stride; i += 8) {
        __m256 Y[8], E[3][4];
        __m128 X[8];
#pragma GCC unroll 8
        for (std::size_t k = 0; k < 8; ++k) {
            const float* m = M + 16 * (i + k < n ? i + k : n - 1);
            Y[k] = _mm256_load_ps(m);
            X[k] = _mm_load_ps(m + 8);
        }
        transpose_matrices8(Y, X, E);
#pragma GCC unroll 12
        for (std::size_t e = 0; e < 12; ++e) _mm256_store_ps(T + e * stride + i, _mm256_add_ps(E[e / 4][e % 4], zero));
    }
    // D over [0, stride − 8] from rows 0..11 (entries up to stride − 1: inside each row).
    for (std::size_t e = 0; e < 12; ++e) {
        const float* m = T + e * stride;
        float* d = T + (12 + e) * stride;
        std::size_t i = 0;
        for (; i + 8 < stride; i += 8) _mm256_store_ps(d + i, _mm256_sub_ps(_mm256_loadu_ps(m + i + 1), _mm256_load_ps(m + i)));
        for (; i < stride; ++i) d[i] = i + 1 < stride ? m[i + 1] - m[i] : 0.f;
    }
}

/// Smallest and largest of 8 int32 lanes.
SLANIM_INLINE void lane_range(__m256i x, int& mn, int& mx) {
    __m128i lo = _mm_min_epi32(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
    __m128i hi = _mm_max_epi32(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
    lo = _mm_min_epi32(lo, _mm_shuffle_epi32(lo, 0x4E));
    hi = _mm_max_epi32(hi, _mm_shuffle_epi32(hi, 0x4E));
    lo = _mm_min_epi32(lo, _mm_shuffle_epi32(lo, 0xB1));
    hi = _mm_max_epi32(hi, _mm_shuffle_epi32(hi, 0xB1));
    mn = _mm_cvtsi128_si32(lo);
    mx = _mm_cvtsi128_si32(hi);
}

}  // namespace

namespace {

/// One SL job's constants for sl_block8.
struct SlRun {
    const float* T = nullptr;  // sl_palette_tables, or null: every block gathers
    std::size_t stride = 0;
    __m256 last_f;
    __m256i last_i;
};

/// The outputs of vertices [v, v + 8) (transform_e8_out) of the SL blend: the matrices of a
/// block on one entry by broadcasts (rigid: M alone), of a block within 8 entries by permutes
/// of the tables, else gathered and transposed; every path gives the same bits.
SLANIM_INLINE void sl_block8(const KernelArgs& a, const SlRun& r, std::size_t v, __m256 (&O)[6]) {
    const __m256 w = _mm256_loadu_ps(a.sl_weights + v);
    const __m256 fl = _mm256_floor_ps(w);
    const __m256 flc = _mm256_min_ps(_mm256_max_ps(fl, _mm256_setzero_ps()), r.last_f);
    const __m256i i = _mm256_cvttps_epi32(flc);
    if (r.T) {
        // Most blocks of the SL meshes (~80 %) have one entry for all 8 vertices: the
        // elements are broadcasts, the same values the permutes below would pick.
        const int i0 = _mm_cvtsi128_si32(_mm256_castsi256_si128(i));
        const __m256i same = _mm256_cmpeq_epi32(i, _mm256_set1_epi32(i0));
        if (_mm256_movemask_ps(_mm256_castsi256_ps(same)) == 0xFF) {
            const float* t = r.T + i0;
            __m256 E[3][4];
            if (_mm256_movemask_ps(_mm256_cmp_ps(w, fl, _CMP_EQ_OQ)) == 0xFF) {
                // Rigid (f = 0 in every lane, ~3/4 of the SL blocks): f·D + M is M.
#pragma GCC unroll 12
                for (int e = 0; e < 12; ++e) E[e / 4][e % 4] = _mm256_broadcast_ss(t + e * r.stride);
            } else {
                const __m256 f = _mm256_sub_ps(w, fl);
#pragma GCC unroll 12
                for (int e = 0; e < 12; ++e) {
                    const __m256 m = _mm256_broadcast_ss(t + e * r.stride);
                    const __m256 d = _mm256_broadcast_ss(t + (12 + e) * r.stride);
                    E[e / 4][e % 4] = _mm256_fmadd_ps(f, d, m);
                }
            }
            transform_e8_out(E, a, v, O);
            return;
        }
        int mn = 0, mx = 0;
        lane_range(i, mn, mx);
        if (mx - mn < 8) {
            const __m256i idx = _mm256_sub_epi32(i, _mm256_set1_epi32(mn));
            const __m256 f = _mm256_sub_ps(w, fl);
            const float* t = r.T + mn;
            __m256 E[3][4];
#pragma GCC unroll 12
            for (int e = 0; e < 12; ++e) {
                const __m256 m = _mm256_permutevar8x32_ps(_mm256_loadu_ps(t + e * r.stride), idx);
                const __m256 d = _mm256_permutevar8x32_ps(_mm256_loadu_ps(t + (12 + e) * r.stride), idx);
                E[e / 4][e % 4] = _mm256_fmadd_ps(f, d, m);
            }
            transform_e8_out(E, a, v, O);
            return;
        }
    }
    alignas(32) std::uint32_t oi[8], oj[8];
    alignas(32) float fr[8];
    const __m256i j = _mm256_min_epi32(_mm256_add_epi32(i, _mm256_set1_epi32(1)), r.last_i);
    _mm256_store_si256(reinterpret_cast<__m256i*>(oi), _mm256_slli_epi32(i, 4));
    _mm256_store_si256(reinterpret_cast<__m256i*>(oj), _mm256_slli_epi32(j, 4));
    _mm256_store_ps(fr, _mm256_sub_ps(w, fl));
    const float* M = a.matrices;
    __m256 Y[8];
    __m128 X[8];
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
        const __m256 f = _mm256_broadcast_ss(fr + k);
        const float* mi = M + oi[k];
        const float* mj = M + oj[k];
        // + 0: −0 read as +0, as in sl_palette_tables, so every path gives the same bits.
        const __m256 yi = _mm256_add_ps(_mm256_load_ps(mi), _mm256_setzero_ps());
        const __m128 xi = _mm_add_ps(_mm_load_ps(mi + 8), _mm_setzero_ps());
        const __m256 yj = _mm256_add_ps(_mm256_load_ps(mj), _mm256_setzero_ps());
        const __m128 xj = _mm_add_ps(_mm_load_ps(mj + 8), _mm_setzero_ps());
        Y[k] = _mm256_fmadd_ps(f, _mm256_sub_ps(yj, yi), yi);
        X[k] = _mm_fmadd_ps(_mm256_castps256_ps128(f), _mm_sub_ps(xj, xi), xi);
    }
    transform8_out(Y, X, a, v, O);
}

template <bool Stream>
std::size_t skin_sl_avx2_impl(const KernelArgs& args) {
    // A local copy: the output stores cannot alias it, so the stream pointers stay in registers
    // instead of being reloaded after every store.
    const KernelArgs a = args;
    // Lists of ≤ 128 entries (the SL meshes have ≤ 15): a half block whose entries lie within 8
    // builds element e of its matrices as f·permute(D) + permute(M), from two row loads and two
    // permutes; the others gather.
    alignas(32) float T[24 * kPermuteStride];
    SlRun r;
    r.last_f = _mm256_set1_ps(static_cast<float>(a.num_matrices - 1));
    r.last_i = _mm256_set1_epi32(static_cast<int>(a.num_matrices - 1));
    if (a.num_matrices <= kPermutePalette && a.end - a.begin >= 64) {
        r.stride = permute_stride(a.num_matrices);
        sl_palette_tables(a.matrices, a.num_matrices, T, r.stride);
        r.T = T;
    }
    std::size_t v = a.begin;
    __m256 O[6], O1[6];
    if constexpr (Stream) {
        // Whole 64-byte lines per stream (stream_out16) from the first line boundary on.
        if (v + 8 <= a.end && !outputs_aligned(a, v, 64)) {
            sl_block8(a, r, v, O);
            store_out8<true>(a, v, O);
            v += 8;
        }
        if (outputs_aligned(a, v, 64)) {
            for (; v + 16 <= a.end; v += 16) {
                sl_block8(a, r, v, O);
                sl_block8(a, r, v + 8, O1);
                stream_out16(a, v, O, O1);
            }
        }
    }
    for (; v + 8 <= a.end; v += 8) {
        sl_block8(a, r, v, O);
        store_out8<Stream>(a, v, O);
    }
    if constexpr (Stream) _mm_sfence();
    return v;
}

/// The last 1..7 vertices [v, end) as one block of 8 padded with zeros, through local copies (the
/// gather path: no tables for one block; it gives the permute paths' bits), so that every vertex
/// of a SIMD run gets the SIMD arithmetic. Returns a.end.
std::size_t skin_sl_tail_avx2(const KernelArgs& a, std::size_t v) {
    PaddedBlock<8> block(a, v);
    skin_sl_avx2_impl<false>(block.args(a));
    block.copy_out(a);
    return a.end;
}

}  // namespace

// Non-temporal stores when asked and every output stream is 32-byte aligned at `begin`: the
// crowd's skin phase writes more than the caches hold, and these skip the read for ownership.
std::size_t skin_sl_avx2(const KernelArgs& a) {
    const bool stream = a.streaming_stores && outputs_aligned(a, a.begin, 32);
    std::size_t v = stream ? skin_sl_avx2_impl<true>(a) : skin_sl_avx2_impl<false>(a);
    if (v < a.end) v = skin_sl_tail_avx2(a, v);
    return v;
}

}  // namespace slanim::skin_detail

#endif
