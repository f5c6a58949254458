// SPDX-License-Identifier: MIT
// AVX-512 (F, DQ, VL, BW) + FMA skinning kernels, 16 vertices per iteration. Compiled with
// per-file ISA flags and called only after the CPU check in skinning.cpp. Keep this file free
// of standard-library inline functions (see skinning_kernels.hpp).
//
// Two ways to build the 16 blended matrices of a block as 12 registers E[r][c] (element (r, c)
// of the 16 vertices' matrices), both followed by the same SoA transform:
//  * permute (the fast path): the palette is transposed once per run into SoA rows, T[e][i] =
//    element e of matrix i. A 32-entry window of a row is two registers, so element e of
//    influence k for all 16 vertices is one `vpermt2ps` by the block's index vector; the blend
//    is then 12·K permutes and 12·K multiply-adds, with no gather and no transpose. Used when
//    the palette has ≤ kPermutePaletteMax matrices and the block's indices span < 32 entries
//    (the window starts at the block's smallest index);
//  * gather + transpose (any palette, any block): each vertex's matrix (one SkinMatrix = one
//    zmm) is blended from its influences with the weight broadcast from memory, then the 16
//    matrices are transposed in registers (60 shuffles).
// Transform: positions and normals in SoA form, 3 FMAs per output coordinate, normals
// renormalised with rsqrt14 and one Newton step.
//
// Both blends do the same float operations in the same order (w0·M0, then fma for k = 1..K−1;
// SL: Mi + f·(Mj − Mi)), so the paths give bit-identical results.
#include "skinning_kernels.hpp"

#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512VL__) && \
    defined(__AVX512BW__) && defined(__FMA__)

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_ps(), a self-initialised variable
// that -Wmaybe-uninitialized reports (a known false positive in the system header).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

namespace slanim::skin_detail {
namespace {

#define SLANIM_INLINE inline __attribute__((always_inline))

/// Largest palette the permute path transposes (on the stack: 12 rows × (128 + 32) floats,
/// 7.5 KB). LL_MAX_JOINTS_PER_MESH_OBJECT is 110.
constexpr std::uint32_t kPermutePaletteMax = 128;
/// A row of the transposed palette: the palette rounded up to 16, plus a 32-float window
/// margin so a window starting at any valid index stays inside the row.
constexpr std::size_t kPaletteStrideMax = kPermutePaletteMax + 32;

/// 16 matrices (row-major 3×4, one per zmm, rows in the 128-bit lanes) → E[r][c], element (r, c)
/// of the 16 matrices: an in-lane 4×4 transpose per group of 4, then 128-bit lane shuffles.
SLANIM_INLINE void transpose16(const __m512 (&A)[16], __m512 (&E)[3][4]) {
    __m512 T[4][4];
#pragma GCC unroll 4
    for (int g = 0; g < 4; ++g) {
        const __m512 t0 = _mm512_unpacklo_ps(A[4 * g], A[4 * g + 1]);
        const __m512 t1 = _mm512_unpackhi_ps(A[4 * g], A[4 * g + 1]);
        const __m512 t2 = _mm512_unpacklo_ps(A[4 * g + 2], A[4 * g + 3]);
        const __m512 t3 = _mm512_unpackhi_ps(A[4 * g + 2], A[4 * g + 3]);
        T[g][0] = _mm512_shuffle_ps(t0, t2, 0x44);
        T[g][1] = _mm512_shuffle_ps(t0, t2, 0xEE);
        T[g][2] = _mm512_shuffle_ps(t1, t3, 0x44);
        T[g][3] = _mm512_shuffle_ps(t1, t3, 0xEE);
    }
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
        const __m512 p = _mm512_shuffle_f32x4(T[0][c], T[1][c], 0x44);
        const __m512 q = _mm512_shuffle_f32x4(T[2][c], T[3][c], 0x44);
        E[0][c] = _mm512_shuffle_f32x4(p, q, 0x88);
        E[1][c] = _mm512_shuffle_f32x4(p, q, 0xDD);
        const __m512 r = _mm512_shuffle_f32x4(T[0][c], T[1][c], 0xAA);
        const __m512 s = _mm512_shuffle_f32x4(T[2][c], T[3][c], 0xAA);
        E[2][c] = _mm512_shuffle_f32x4(r, s, 0x88);
    }
}

template <bool Stream = false>
SLANIM_INLINE void store16(float* p, __m512 x) {
    if constexpr (Stream) {
        _mm512_stream_ps(p, x);
    } else {
        _mm512_storeu_ps(p, x);
    }
}

/// Positions (and normals) of vertices [v, v + 16) by the SoA matrices E; Stream: non-temporal
/// stores (the output pointers + v must be 64-byte aligned).
template <bool Stream = false>
SLANIM_INLINE void transform16(const __m512 (&E)[3][4], const KernelArgs& a, std::size_t v) {
    const __m512 px = _mm512_loadu_ps(a.px + v);
    const __m512 py = _mm512_loadu_ps(a.py + v);
    const __m512 pz = _mm512_loadu_ps(a.pz + v);
    __m512 o[3];
#pragma GCC unroll 3
    for (int r = 0; r < 3; ++r) {
        o[r] = _mm512_fmadd_ps(E[r][0], px, _mm512_fmadd_ps(E[r][1], py, _mm512_fmadd_ps(E[r][2], pz, E[r][3])));
    }
    if (a.nx) {
        // Load the normals before storing positions: in-place runs may alias the streams.
        const __m512 nx = _mm512_loadu_ps(a.nx + v);
        const __m512 ny = _mm512_loadu_ps(a.ny + v);
        const __m512 nz = _mm512_loadu_ps(a.nz + v);
        __m512 n[3];
#pragma GCC unroll 3
        for (int r = 0; r < 3; ++r) {
            n[r] = _mm512_fmadd_ps(E[r][0], nx, _mm512_fmadd_ps(E[r][1], ny, _mm512_mul_ps(E[r][2], nz)));
        }
        const __m512 len2 = _mm512_fmadd_ps(n[0], n[0], _mm512_fmadd_ps(n[1], n[1], _mm512_mul_ps(n[2], n[2])));
        const __m512 y = _mm512_rsqrt14_ps(len2);
        // Newton: y·(1.5 − 0.5·len2·y²)
        const __m512 h = _mm512_mul_ps(_mm512_mul_ps(len2, _mm512_set1_ps(0.5f)), y);
        const __m512 ys = _mm512_mul_ps(y, _mm512_fnmadd_ps(h, y, _mm512_set1_ps(1.5f)));
        const __mmask16 ok = _mm512_cmp_ps_mask(len2, _mm512_set1_ps(kMinNormalLength2), _CMP_GT_OQ);
        const __m512 scale = _mm512_mask_mov_ps(_mm512_set1_ps(1.f), ok, ys);
        store16<Stream>(a.onx + v, _mm512_mul_ps(n[0], scale));
        store16<Stream>(a.ony + v, _mm512_mul_ps(n[1], scale));
        store16<Stream>(a.onz + v, _mm512_mul_ps(n[2], scale));
    }
    store16<Stream>(a.opx + v, o[0]);
    store16<Stream>(a.opy + v, o[1]);
    store16<Stream>(a.opz + v, o[2]);
}

/// Transposes the first n ≤ kPermutePaletteMax matrices into rows: T[e·stride + i] = element e
/// (= 4·row + col) of matrix i, for e < 12 and i < n; zero for n ≤ i < stride. stride is a
/// multiple of 16.
void transpose_palette(const float* M, std::uint32_t n, float* T, std::size_t stride) {
    for (std::size_t g = 0; g < stride; g += 16) {
        __m512 E[3][4];
        if (g < n) {
            __m512 A[16];
#pragma GCC unroll 16
            for (std::uint32_t k = 0; k < 16; ++k) {
                A[k] = g + k < n ? _mm512_load_ps(M + 16 * (g + k)) : _mm512_setzero_ps();
            }
            transpose16(A, E);
        } else {
#pragma GCC unroll 12
            for (int e = 0; e < 12; ++e) E[e / 4][e % 4] = _mm512_setzero_ps();
        }
#pragma GCC unroll 12
        for (int e = 0; e < 12; ++e) _mm512_store_ps(T + static_cast<std::size_t>(e) * stride + g, E[e / 4][e % 4]);
    }
}

// ---------------------------------------------------------------------------------------------
// 1–4 influences
// ---------------------------------------------------------------------------------------------

/// The gather + transpose blend of vertices [v, v + 16) with K influences.
template <int K>
SLANIM_INLINE void blend_gather16(const KernelArgs& a, std::size_t v, __m512 (&E)[3][4]) {
    const float* M = a.matrices;
    const __m512i last = _mm512_set1_epi16(static_cast<short>(a.num_matrices - 1));
    // Float offsets (index · 16) of the block's 64 influence matrices: one vector pass per block
    // instead of a zero-extend, shift and add per influence per vertex.
    alignas(64) std::uint32_t off[64];
    const std::uint16_t* idx = a.indices + 4 * v;
    const float* w = a.weights4 + 4 * v;
    // Indices past the palette (invalid data) are clamped to the last matrix.
    const __m512i c0 = _mm512_min_epu16(_mm512_loadu_si512(idx), last);
    const __m512i c1 = _mm512_min_epu16(_mm512_loadu_si512(idx + 32), last);
    _mm512_store_si512(off, _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(c0)), 4));
    _mm512_store_si512(off + 16, _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(c0, 1)), 4));
    _mm512_store_si512(off + 32, _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(c1)), 4));
    _mm512_store_si512(off + 48, _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(c1, 1)), 4));
    __m512 A[16];
#pragma GCC unroll 16
    for (int k = 0; k < 16; ++k) {
        const std::uint32_t* ok = off + 4 * k;
        const float* wk = w + 4 * k;
        __m512 m = _mm512_mul_ps(_mm512_set1_ps(wk[0]), _mm512_load_ps(M + ok[0]));
#pragma GCC unroll 3
        for (int j = 1; j < K; ++j) m = _mm512_fmadd_ps(_mm512_set1_ps(wk[j]), _mm512_load_ps(M + ok[j]), m);
        A[k] = m;
    }
    transpose16(A, E);
}

template <int K>
std::size_t skin_k_gather_avx512(const KernelArgs& a) {
    std::size_t v = a.begin;
    for (; v + 16 <= a.end; v += 16) {
        __m512 E[3][4];
        blend_gather16<K>(a, v, E);
        transform16(E, a, v);
    }
    return v;
}

/// Used u16 lanes of an index register (8 vertices × 4 slots): slots k < K.
template <int K>
constexpr __mmask32 used_slots() {
    std::uint32_t m = 0;
    for (int vtx = 0; vtx < 8; ++vtx) m |= ((1u << K) - 1u) << (4 * vtx);
    return m;
}

template <int K>
std::size_t skin_k_avx512(const KernelArgs& a) {
    const std::uint32_t n = a.num_matrices;
    if (n > kPermutePaletteMax) return skin_k_gather_avx512<K>(a);
    alignas(64) float T[12 * kPaletteStrideMax];
    const std::size_t stride = (n + 15) / 16 * 16 + 32;
    transpose_palette(a.matrices, n, T, stride);

    // With ≤ 32 matrices the window is the whole palette; otherwise it starts at each block's
    // smallest used index and the block falls back to the gather path if its indices span 32
    // entries or more.
    const bool windowed = n > 32;
    constexpr __mmask32 used = used_slots<K>();
    const __m512i last = _mm512_set1_epi16(static_cast<short>(n - 1));
    const __m512i all_ones = _mm512_set1_epi16(-1);
    const __m512i max_rel = _mm512_set1_epi16(31);
    // Dword (slot 0 | slot 1 << 16) and (slot 2 | slot 3 << 16) of vertices 0..15 from the two
    // index registers (vertices 0..7 and 8..15, 2 dwords per vertex).
    const __m512i pick01 = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i pick23 = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    // Weights of 4 vertices per register → slot k of 8 vertices in each half.
    const __m512i wpick01 = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
    const __m512i wpick23 = _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31);

    std::size_t v = a.begin;
    for (; v + 16 <= a.end; v += 16) {
        const std::uint16_t* idx = a.indices + 4 * v;
        // Indices past the palette (invalid data) are clamped to the last matrix.
        __m512i lo = _mm512_min_epu16(_mm512_loadu_si512(idx), last);
        __m512i hi = _mm512_min_epu16(_mm512_loadu_si512(idx + 32), last);
        std::uint32_t base = 0;
        if (windowed) {
            const __m512i m = _mm512_min_epu16(_mm512_mask_mov_epi16(all_ones, used, lo),
                                               _mm512_mask_mov_epi16(all_ones, used, hi));
            const __m256i m2 = _mm256_min_epu16(_mm512_castsi512_si256(m), _mm512_extracti64x4_epi64(m, 1));
            const __m128i m3 = _mm_min_epu16(_mm256_castsi256_si128(m2), _mm256_extracti128_si256(m2, 1));
            base = static_cast<std::uint32_t>(_mm_cvtsi128_si32(_mm_minpos_epu16(m3))) & 0xFFFFu;
            const __m512i b = _mm512_set1_epi16(static_cast<short>(base));
            lo = _mm512_sub_epi16(lo, b);
            hi = _mm512_sub_epi16(hi, b);
            if ((_mm512_mask_cmpgt_epu16_mask(used, lo, max_rel) | _mm512_mask_cmpgt_epu16_mask(used, hi, max_rel)) != 0) {
                __m512 E[3][4];
                blend_gather16<K>(a, v, E);
                transform16(E, a, v);
                continue;
            }
        }
        // vpermt2ps reads the low 5 bits of each dword: slot 0 and 2 directly, slot 1 and 3
        // after a shift.
        const __m512i i01 = _mm512_permutex2var_epi32(lo, pick01, hi);
        const __m512i i23 = _mm512_permutex2var_epi32(lo, pick23, hi);
        const __m512i I[4] = {i01, _mm512_srli_epi32(i01, 16), i23, _mm512_srli_epi32(i23, 16)};

        const float* w = a.weights4 + 4 * v;
        const __m512 r0 = _mm512_loadu_ps(w), r1 = _mm512_loadu_ps(w + 16);
        const __m512 r2 = _mm512_loadu_ps(w + 32), r3 = _mm512_loadu_ps(w + 48);
        __m512 W[4];
        {
            const __m512 x = _mm512_permutex2var_ps(r0, wpick01, r1);
            const __m512 y = _mm512_permutex2var_ps(r2, wpick01, r3);
            W[0] = _mm512_shuffle_f32x4(x, y, 0x44);
            W[1] = _mm512_shuffle_f32x4(x, y, 0xEE);
        }
        if constexpr (K > 2) {
            const __m512 x = _mm512_permutex2var_ps(r0, wpick23, r1);
            const __m512 y = _mm512_permutex2var_ps(r2, wpick23, r3);
            W[2] = _mm512_shuffle_f32x4(x, y, 0x44);
            W[3] = _mm512_shuffle_f32x4(x, y, 0xEE);
        }

        const float* t = T + base;
        __m512 E[3][4];
#pragma GCC unroll 12
        for (int e = 0; e < 12; ++e) {
            const float* row = t + static_cast<std::size_t>(e) * stride;
            const __m512 tl = _mm512_loadu_ps(row), th = _mm512_loadu_ps(row + 16);
            __m512 m = _mm512_mul_ps(W[0], _mm512_permutex2var_ps(tl, I[0], th));
#pragma GCC unroll 3
            for (int j = 1; j < K; ++j) m = _mm512_fmadd_ps(W[j], _mm512_permutex2var_ps(tl, I[j], th), m);
            E[e / 4][e % 4] = m;
        }
        transform16(E, a, v);
    }
    return v;
}

// ---------------------------------------------------------------------------------------------
// SL encoding
// ---------------------------------------------------------------------------------------------

/// Entry i = floor(w) clamped to [0, last] (NaN → 0), and f = w − floor(w), of 16 weights.
SLANIM_INLINE void sl_entries(const float* weights, __m512 last_f, __m512i& i, __m512& f) {
    const __m512 w = _mm512_loadu_ps(weights);
    const __m512 fl = _mm512_roundscale_ps(w, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    // max(fl, 0) returns 0 for NaN (second operand): clamp in float, then convert.
    const __m512 flc = _mm512_min_ps(_mm512_max_ps(fl, _mm512_setzero_ps()), last_f);
    i = _mm512_cvttps_epi32(flc);
    f = _mm512_sub_ps(w, fl);
}

std::size_t skin_sl_gather_avx512(const KernelArgs& a) {
    const float* M = a.matrices;
    const __m512 last_f = _mm512_set1_ps(static_cast<float>(a.num_matrices - 1));
    const __m512i last_i = _mm512_set1_epi32(static_cast<int>(a.num_matrices - 1));
    alignas(64) std::uint32_t oi[16], oj[16];
    alignas(64) float fr[16];
    std::size_t v = a.begin;
    for (; v + 16 <= a.end; v += 16) {
        __m512i i;
        __m512 f;
        sl_entries(a.sl_weights + v, last_f, i, f);
        const __m512i j = _mm512_min_epi32(_mm512_add_epi32(i, _mm512_set1_epi32(1)), last_i);
        _mm512_store_si512(oi, _mm512_slli_epi32(i, 4));
        _mm512_store_si512(oj, _mm512_slli_epi32(j, 4));
        _mm512_store_ps(fr, f);
        __m512 A[16];
#pragma GCC unroll 16
        for (int k = 0; k < 16; ++k) {
            const __m512 mi = _mm512_load_ps(M + oi[k]);
            const __m512 mj = _mm512_load_ps(M + oj[k]);
            A[k] = _mm512_fmadd_ps(_mm512_set1_ps(fr[k]), _mm512_sub_ps(mj, mi), mi);
        }
        __m512 E[3][4];
        transpose16(A, E);
        transform16(E, a, v);
    }
    return v;
}


// ---------------------------------------------------------------------------------------------
// Packed influences
// ---------------------------------------------------------------------------------------------

template <int K, bool Stream, bool U16>
std::size_t skin_packed_k_avx512(const KernelArgs& a) {
    const std::uint32_t n = a.num_matrices;
    const bool permute = n <= kPermutePaletteMax;
    alignas(64) float T[12 * kPaletteStrideMax];
    std::size_t stride = 0;
    if (permute) {
        stride = (n + 15) / 16 * 16 + 32;
        transpose_palette(a.matrices, n, T, stride);
    }
    std::size_t v = a.begin;
    for (; v + 16 <= a.end; v += 16) {
        const std::size_t b = v / 16;
        const std::uint32_t h = a.headers[b];
        const std::uint32_t base = h & 0xFFFFu, spread = h >> 16;
        const float* wd = a.packed + b * a.block_floats;
        const auto* rd = reinterpret_cast<const __m128i*>(wd + (U16 ? 8 : 16) * K);
        __m512 W[K];
        __m512i I[K];
#pragma GCC unroll 4
        for (int k = 0; k < K; ++k) {
            if constexpr (U16) {
                const __m256i q = _mm256_load_si256(reinterpret_cast<const __m256i*>(wd + 8 * k));
                W[k] = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepu16_epi32(q)), _mm512_set1_ps(kUnorm16Scale));
            } else {
                W[k] = _mm512_load_ps(wd + 16 * k);
            }
            I[k] = _mm512_cvtepu8_epi32(_mm_load_si128(rd + k));
        }
        __m512 E[3][4];
        if (permute && spread == 0) {
            // Every index in [base, base + 16): one single-table permute per element and slot.
            const float* t = T + base;
#pragma GCC unroll 12
            for (int e = 0; e < 12; ++e) {
                const __m512 row = _mm512_loadu_ps(t + static_cast<std::size_t>(e) * stride);
                __m512 m = _mm512_mul_ps(W[0], _mm512_permutexvar_ps(I[0], row));
#pragma GCC unroll 3
                for (int j = 1; j < K; ++j) m = _mm512_fmadd_ps(W[j], _mm512_permutexvar_ps(I[j], row), m);
                E[e / 4][e % 4] = m;
            }
        } else if (permute && spread == 1) {
            const float* t = T + base;
#pragma GCC unroll 12
            for (int e = 0; e < 12; ++e) {
                const float* row = t + static_cast<std::size_t>(e) * stride;
                const __m512 tl = _mm512_loadu_ps(row), th = _mm512_loadu_ps(row + 16);
                __m512 m = _mm512_mul_ps(W[0], _mm512_permutex2var_ps(tl, I[0], th));
#pragma GCC unroll 3
                for (int j = 1; j < K; ++j) m = _mm512_fmadd_ps(W[j], _mm512_permutex2var_ps(tl, I[j], th), m);
                E[e / 4][e % 4] = m;
            }
        } else {
            // Gather + transpose: float offsets of the 16·K matrices, weights from the rows.
            alignas(64) std::uint32_t off[16 * K];
            const __m512i b16 = _mm512_set1_epi32(static_cast<int>(base));
#pragma GCC unroll 4
            for (int k = 0; k < K; ++k) {
                _mm512_store_si512(off + 16 * k, _mm512_slli_epi32(_mm512_add_epi32(I[k], b16), 4));
            }
            // The weights as floats, per lane (already so for Float32 rows).
            alignas(64) float wf[U16 ? 16 * K : 1];
            const float* ws = wd;
            if constexpr (U16) {
#pragma GCC unroll 4
                for (int k = 0; k < K; ++k) _mm512_store_ps(wf + 16 * k, W[k]);
                ws = wf;
            }
            const float* M = a.matrices;
            __m512 A[16];
#pragma GCC unroll 16
            for (int l = 0; l < 16; ++l) {
                __m512 m = _mm512_mul_ps(_mm512_set1_ps(ws[l]), _mm512_load_ps(M + off[l]));
#pragma GCC unroll 3
                for (int j = 1; j < K; ++j) {
                    m = _mm512_fmadd_ps(_mm512_set1_ps(ws[16 * j + l]), _mm512_load_ps(M + off[16 * j + l]), m);
                }
                A[l] = m;
            }
            transpose16(A, E);
        }
        transform16<Stream>(E, a, v);
    }
    if constexpr (Stream) _mm_sfence();
    return v;
}

template <bool Stream, bool U16>
std::size_t skin_packed_k_avx512(const KernelArgs& a) {
    switch (a.influences) {
        case 1: return skin_packed_k_avx512<1, Stream, U16>(a);
        case 2: return skin_packed_k_avx512<2, Stream, U16>(a);
        case 3: return skin_packed_k_avx512<3, Stream, U16>(a);
        default: return skin_packed_k_avx512<4, Stream, U16>(a);
    }
}


/// The SL blend by permutes from the transposed M (rows 0..11) and D (rows 12..23), stride 32:
/// one table (≤ 16 entries) or two.
template <bool TwoTables, bool Stream>
std::size_t skin_sl_permute_avx512(const KernelArgs& a, const float* T) {
    constexpr std::size_t stride = 32;
    const __m512 last_f = _mm512_set1_ps(static_cast<float>(a.num_matrices - 1));
    std::size_t v = a.begin;
    for (; v + 16 <= a.end; v += 16) {
        __m512i i;
        __m512 f;
        sl_entries(a.sl_weights + v, last_f, i, f);
        __m512 E[3][4];
#pragma GCC unroll 12
        for (std::size_t e = 0; e < 12; ++e) {
            const float* mr = T + e * stride;
            const float* dr = T + (12 + e) * stride;
            __m512 mi, di;
            if constexpr (TwoTables) {
                mi = _mm512_permutex2var_ps(_mm512_load_ps(mr), i, _mm512_load_ps(mr + 16));
                di = _mm512_permutex2var_ps(_mm512_load_ps(dr), i, _mm512_load_ps(dr + 16));
            } else {
                mi = _mm512_permutexvar_ps(i, _mm512_load_ps(mr));
                di = _mm512_permutexvar_ps(i, _mm512_load_ps(dr));
            }
            E[e / 4][e % 4] = _mm512_fmadd_ps(f, di, mi);
        }
        transform16<Stream>(E, a, v);
    }
    if constexpr (Stream) _mm_sfence();
    return v;
}

/// The last 1..15 vertices [v, end) as one block of 16 padded with zeros, through local copies
/// and the same tables, so that every vertex of a run gets the SIMD arithmetic. Returns a.end.
std::size_t skin_sl_tail_avx512(const KernelArgs& a, std::size_t v, const float* T) {
    PaddedBlock<16> block(a, v);
    const KernelArgs t = block.args(a);
    if (a.num_matrices <= 16) skin_sl_permute_avx512<false, false>(t, T);
    else skin_sl_permute_avx512<true, false>(t, T);
    block.copy_out(a);
    return a.end;
}

}  // namespace

std::size_t skin4_avx512(const KernelArgs& a) {
    switch (a.influences) {
        case 1: return skin_k_avx512<1>(a);
        case 2: return skin_k_avx512<2>(a);
        case 3: return skin_k_avx512<3>(a);
        default: return skin_k_avx512<4>(a);
    }
}

std::size_t skin_packed_avx512(const KernelArgs& a) {
    // Non-temporal stores need 64-byte aligned outputs at `begin` (a multiple of 16).
    const bool stream = a.streaming_stores && outputs_aligned(a, a.begin, 64);
    if (a.unorm16) return stream ? skin_packed_k_avx512<true, true>(a) : skin_packed_k_avx512<false, true>(a);
    return stream ? skin_packed_k_avx512<true, false>(a) : skin_packed_k_avx512<false, false>(a);
}

std::size_t skin_sl_avx512(const KernelArgs& a) {
    const std::uint32_t n = a.num_matrices;
    // The SL lists have ≤ 15 entries; longer ones (allowed, never shipped) take the gather path.
    if (n > 32) return skin_sl_gather_avx512(a);
    // Rows 0..11: the palette M; rows 12..23: D[i] = M[min(i + 1, last)] − M[i], the same
    // subtraction the gather path does per vertex, so both paths agree bit for bit.
    constexpr std::size_t stride = 32;
    alignas(64) float T[24 * stride];
    transpose_palette(a.matrices, n, T, stride);
    const __mmask16 lastlo = static_cast<__mmask16>(n - 1 < 16 ? 0xFFFFu << (n - 1) : 0u);
    const __mmask16 lasthi = static_cast<__mmask16>(n - 1 < 16 ? 0xFFFFu : 0xFFFFu << (n - 1 - 16));
#pragma GCC unroll 12
    for (std::size_t e = 0; e < 12; ++e) {
        const float* row = T + e * stride;
        float* d = T + (12 + e) * stride;
        const __m512 c0 = _mm512_load_ps(row), c1 = _mm512_load_ps(row + 16);
        // Entry i ≥ last uses itself as its neighbour (the lanes past the list are 0 − 0); the
        // last M row's neighbour load reads D row 0, written before and masked out.
        const __m512 n0 = _mm512_mask_mov_ps(_mm512_loadu_ps(row + 1), lastlo, c0);
        const __m512 n1 = _mm512_mask_mov_ps(_mm512_loadu_ps(row + 17), lasthi, c1);
        _mm512_store_ps(d, _mm512_sub_ps(n0, c0));
        _mm512_store_ps(d + 16, _mm512_sub_ps(n1, c1));
    }
    // Non-temporal stores need every block's outputs 64-byte aligned: the outputs at the first
    // vertex (a slice may start anywhere; blocks of 16 floats follow).
    const bool stream = a.streaming_stores && outputs_aligned(a, a.begin, 64);
    std::size_t v = 0;
    if (stream)
        v = n <= 16 ? skin_sl_permute_avx512<false, true>(a, T) : skin_sl_permute_avx512<true, true>(a, T);
    else
        v = n <= 16 ? skin_sl_permute_avx512<false, false>(a, T) : skin_sl_permute_avx512<true, false>(a, T);
    return v < a.end ? skin_sl_tail_avx512(a, v, T) : v;
}

}  // namespace slanim::skin_detail

#endif
