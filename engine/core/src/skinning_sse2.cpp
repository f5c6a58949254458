// SPDX-License-Identifier: MIT
// SSE2 skinning kernels, 4 vertices per iteration: the x86-64 baseline, for CPUs without AVX2
// and SLANIM_ISA=sse2. No per-file ISA flags (SSE2 is part of x86-64), but keep this file free
// of standard-library inline functions anyway, like the other kernel files (skinning_kernels.hpp).
//
// Without FMA every blend and transform is a multiply then an add, in the scalar kernel's order
// (transform_vertex and the blends in skinning.cpp), and the normal is scaled by 1 / sqrt(len²)
// (sqrtps, divps: correctly rounded, as the scalar 1.f / std::sqrt); the project builds with
// -ffp-contract=off, so the scalar kernel rounds every operation too. The SSE2 kernels therefore
// give the scalar kernel's bits exactly (tests/engine/core/skinning_test.cpp checks it); they
// differ from the FMA kernels (AVX2, AVX-512) in the last bits.
//
// Per block of 4 vertices: each vertex's blended matrix is 3 xmm (its rows); a 4×4 transpose
// per row turns the 4 matrices into 12 xmm holding element (row, col) of the 4 vertices
// (E[r][c]); positions and normals are then transformed in SoA form.
#include "skinning_kernels.hpp"

#if defined(SLANIM_SKINNING_X86)

#include <emmintrin.h>

namespace slanim::skin_detail {
namespace {

#define SLANIM_INLINE inline __attribute__((always_inline))

/// Element C of x in every lane.
template <int C>
SLANIM_INLINE __m128 splat(__m128 x) {
    return _mm_shuffle_ps(x, x, C * 0x55);
}

/// E[r][c] = element c of row r, in every lane: the 4 vertices of a block share one matrix.
SLANIM_INLINE void splat_rows(const __m128 (&R)[3], __m128 (&E)[3][4]) {
#pragma GCC unroll 3
    for (int r = 0; r < 3; ++r) {
        E[r][0] = splat<0>(R[r]);
        E[r][1] = splat<1>(R[r]);
        E[r][2] = splat<2>(R[r]);
        E[r][3] = splat<3>(R[r]);
    }
}

/// The 4 vertices' matrices (B[l][r]: row r of vertex l) as SoA elements E[r][c] (lane l).
SLANIM_INLINE void rows_to_elements(const __m128 (&B)[4][3], __m128 (&E)[3][4]) {
#pragma GCC unroll 3
    for (int r = 0; r < 3; ++r) {
        const __m128 t0 = _mm_unpacklo_ps(B[0][r], B[1][r]);  // a0 b0 a1 b1
        const __m128 t1 = _mm_unpackhi_ps(B[0][r], B[1][r]);  // a2 b2 a3 b3
        const __m128 t2 = _mm_unpacklo_ps(B[2][r], B[3][r]);  // c0 d0 c1 d1
        const __m128 t3 = _mm_unpackhi_ps(B[2][r], B[3][r]);  // c2 d2 c3 d3
        E[r][0] = _mm_movelh_ps(t0, t2);
        E[r][1] = _mm_movehl_ps(t2, t0);
        E[r][2] = _mm_movelh_ps(t1, t3);
        E[r][3] = _mm_movehl_ps(t3, t1);
    }
}

/// Stores 4 floats at p: non-temporal (p 16-byte aligned) when Stream.
template <bool Stream>
SLANIM_INLINE void store4(float* p, __m128 x) {
    if constexpr (Stream) _mm_stream_ps(p, x);
    else _mm_storeu_ps(p, x);
}

/// Positions (and normals) of vertices [v, v + 4) by the SoA matrices E, with the scalar
/// kernel's operations: ((m0·x + m1·y) + m2·z) + m3 per row; the normal's ((m0·x + m1·y) + m2·z)
/// scaled by 1 / sqrt(len²) when len² > kMinNormalLength2, else left as it is.
template <bool Stream>
SLANIM_INLINE void transform_e4(const __m128 (&E)[3][4], const KernelArgs& a, std::size_t v) {
    const __m128 px = _mm_loadu_ps(a.px + v);
    const __m128 py = _mm_loadu_ps(a.py + v);
    const __m128 pz = _mm_loadu_ps(a.pz + v);
    __m128 o[3];
#pragma GCC unroll 3
    for (int r = 0; r < 3; ++r) {
        o[r] = _mm_add_ps(_mm_add_ps(_mm_add_ps(_mm_mul_ps(E[r][0], px), _mm_mul_ps(E[r][1], py)), _mm_mul_ps(E[r][2], pz)),
                          E[r][3]);
    }
    if (a.nx) {
        const __m128 nx = _mm_loadu_ps(a.nx + v);
        const __m128 ny = _mm_loadu_ps(a.ny + v);
        const __m128 nz = _mm_loadu_ps(a.nz + v);
        __m128 n[3];
#pragma GCC unroll 3
        for (int r = 0; r < 3; ++r) {
            n[r] = _mm_add_ps(_mm_add_ps(_mm_mul_ps(E[r][0], nx), _mm_mul_ps(E[r][1], ny)), _mm_mul_ps(E[r][2], nz));
        }
        const __m128 len2 = _mm_add_ps(_mm_add_ps(_mm_mul_ps(n[0], n[0]), _mm_mul_ps(n[1], n[1])), _mm_mul_ps(n[2], n[2]));
        const __m128 one = _mm_set1_ps(1.f);
        const __m128 s = _mm_div_ps(one, _mm_sqrt_ps(len2));
        const __m128 ok = _mm_cmpgt_ps(len2, _mm_set1_ps(kMinNormalLength2));
        const __m128 scale = _mm_or_ps(_mm_and_ps(ok, s), _mm_andnot_ps(ok, one));
        store4<Stream>(a.onx + v, _mm_mul_ps(n[0], scale));
        store4<Stream>(a.ony + v, _mm_mul_ps(n[1], scale));
        store4<Stream>(a.onz + v, _mm_mul_ps(n[2], scale));
    }
    store4<Stream>(a.opx + v, o[0]);
    store4<Stream>(a.opy + v, o[1]);
    store4<Stream>(a.opz + v, o[2]);
}


/// Non-temporal stores when asked and every output stream is 16-byte aligned at `begin`.
bool stream_outputs(const KernelArgs& a) { return a.streaming_stores && outputs_aligned(a, a.begin, 16); }

// ---------------------------------------------------------------------------------------------
// SkinningJob and PackedSkinningJob: M = w0·M0, then M += wk·Mk (the scalar kernels' order)
// ---------------------------------------------------------------------------------------------

/// Rows of Σ_k w[k]·M_k for one vertex: K matrices at m[k], weights broadcast from w[k · step].
template <int K>
SLANIM_INLINE void blend_rows(const float* const (&m)[4], const float* w, std::size_t step, __m128 (&rows)[3]) {
    __m128 wb = _mm_set1_ps(w[0]);
#pragma GCC unroll 3
    for (int r = 0; r < 3; ++r) rows[r] = _mm_mul_ps(wb, _mm_load_ps(m[0] + 4 * r));
#pragma GCC unroll 3
    for (int k = 1; k < K; ++k) {
        wb = _mm_set1_ps(w[static_cast<std::size_t>(k) * step]);
#pragma GCC unroll 3
        for (int r = 0; r < 3; ++r) rows[r] = _mm_add_ps(rows[r], _mm_mul_ps(wb, _mm_load_ps(m[k] + 4 * r)));
    }
}

template <int K>
std::size_t skin_k_sse2(const KernelArgs& args) {
    const KernelArgs a = args;
    const float* M = a.matrices;
    // Indices clamped to the palette: SSE2 has only a signed 16-bit min, so flip the sign bits.
    const __m128i flip = _mm_set1_epi16(static_cast<short>(0x8000));
    const __m128i last = _mm_xor_si128(_mm_set1_epi16(static_cast<short>(a.num_matrices - 1)), flip);
    alignas(16) std::uint16_t ci[16];
    std::size_t v = a.begin;
    for (; v + 4 <= a.end; v += 4) {
        const std::uint16_t* idx = a.indices + 4 * v;
        const float* w = a.weights4 + 4 * v;
        const __m128i i0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(idx));
        const __m128i i1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(idx + 8));
        _mm_store_si128(reinterpret_cast<__m128i*>(ci), _mm_xor_si128(_mm_min_epi16(_mm_xor_si128(i0, flip), last), flip));
        _mm_store_si128(reinterpret_cast<__m128i*>(ci + 8), _mm_xor_si128(_mm_min_epi16(_mm_xor_si128(i1, flip), last), flip));
        __m128 B[4][3];
#pragma GCC unroll 4
        for (int l = 0; l < 4; ++l) {
            const float* m[4] = {};
#pragma GCC unroll 4
            for (int k = 0; k < K; ++k) m[k] = M + 16 * static_cast<std::size_t>(ci[4 * l + k]);
            blend_rows<K>(m, w + 4 * l, 1, B[l]);
        }
        __m128 E[3][4];
        rows_to_elements(B, E);
        transform_e4<false>(E, a, v);
    }
    return v;
}

template <int K, bool U16, bool Stream>
std::size_t skin_packed_k_sse2(const KernelArgs& args) {
    const KernelArgs a = args;
    std::size_t v = a.begin;  // a multiple of 16: quarter blocks of 4 vertices from here
    for (; v + 4 <= a.end; v += 4) {
        const std::size_t b = v / 16, lane0 = v % 16;
        const float* block = a.packed + b * a.block_floats;
        const float* M = a.matrices + 16 * static_cast<std::size_t>(a.headers[b] & 0xFFFFu);
        const auto* rd = reinterpret_cast<const std::uint8_t*>(block + (U16 ? 8 : 16) * K) + lane0;
        // The quarter block's weights (row stride 16 floats): as stored, or decoded.
        alignas(16) float wf[U16 ? 16 * K : 1];
        const float* wd = block + lane0;
        if constexpr (U16) {
            const auto* q16 = reinterpret_cast<const std::uint16_t*>(block) + lane0;
#pragma GCC unroll 4
            for (int k = 0; k < K; ++k) {
                const __m128i q = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(q16 + 16 * k));
                const __m128 wq = _mm_cvtepi32_ps(_mm_unpacklo_epi16(q, _mm_setzero_si128()));
                _mm_store_ps(wf + 16 * k, _mm_mul_ps(wq, _mm_set1_ps(kUnorm16Scale)));
            }
            wd = wf;
        }
        __m128 B[4][3];
#pragma GCC unroll 4
        for (int l = 0; l < 4; ++l) {
            const float* m[4] = {};
#pragma GCC unroll 4
            for (int k = 0; k < K; ++k) m[k] = M + 16 * static_cast<std::size_t>(rd[16 * k + l]);
            blend_rows<K>(m, wd + l, 16, B[l]);
        }
        __m128 E[3][4];
        rows_to_elements(B, E);
        transform_e4<Stream>(E, a, v);
    }
    if constexpr (Stream) _mm_sfence();
    return v;
}

template <bool U16, bool Stream>
std::size_t skin_packed_u_sse2(const KernelArgs& a) {
    switch (a.influences) {
        case 1: return skin_packed_k_sse2<1, U16, Stream>(a);
        case 2: return skin_packed_k_sse2<2, U16, Stream>(a);
        case 3: return skin_packed_k_sse2<3, U16, Stream>(a);
        default: return skin_packed_k_sse2<4, U16, Stream>(a);
    }
}

}  // namespace

std::size_t skin4_sse2(const KernelArgs& a) {
    switch (a.influences) {
        case 1: return skin_k_sse2<1>(a);
        case 2: return skin_k_sse2<2>(a);
        case 3: return skin_k_sse2<3>(a);
        default: return skin_k_sse2<4>(a);
    }
}

std::size_t skin_packed_sse2(const KernelArgs& a) {
    const bool stream = stream_outputs(a);
    if (a.unorm16) return stream ? skin_packed_u_sse2<true, true>(a) : skin_packed_u_sse2<true, false>(a);
    return stream ? skin_packed_u_sse2<false, true>(a) : skin_packed_u_sse2<false, false>(a);
}

// ---------------------------------------------------------------------------------------------
// SlSkinningJob: M = M[i] + f·(M[j] − M[i]) (the scalar kernel's order)
// ---------------------------------------------------------------------------------------------

namespace {

/// floor(w) without SSE4.1's roundps: truncate, minus 1 where that rounded up; −0 keeps its
/// sign (as floor(−0) = −0); |w| ≥ 2^23, infinities and NaN are their own floor.
SLANIM_INLINE __m128 floor_sse2(__m128 w) {
    const __m128 sign = _mm_set1_ps(-0.f);
    const __m128 t = _mm_cvtepi32_ps(_mm_cvttps_epi32(w));
    __m128 fl = _mm_sub_ps(t, _mm_and_ps(_mm_cmpgt_ps(t, w), _mm_set1_ps(1.f)));
    fl = _mm_or_ps(fl, _mm_and_ps(w, sign));
    const __m128 small = _mm_cmplt_ps(_mm_andnot_ps(sign, w), _mm_set1_ps(8388608.f));
    return _mm_or_ps(_mm_and_ps(small, fl), _mm_andnot_ps(small, w));
}

/// Per-entry rows for lists of ≤ kSlTableEntries entries, built once per run: D[i] = M[j] − M[i]
/// (j = min(i + 1, last)), the subtraction the scalar kernel does per vertex, and R[i] = M[i] +
/// 0·D[i], the blend at f = 0 with its bits (M[i] itself, except that a −0 may become +0), so
/// that rigid blocks read R and skip the blend. Entry i: 24 floats, D's 3 rows then R's.
constexpr std::uint32_t kSlTableEntries = 64;

void sl_rows_table(const float* M, std::uint32_t n, float* T) {
    const __m128 zero = _mm_setzero_ps();
    for (std::uint32_t i = 0; i < n; ++i) {
        const float* mi = M + 16 * static_cast<std::size_t>(i);
        const float* mj = M + 16 * static_cast<std::size_t>(i + 1 < n ? i + 1 : i);
        float* t = T + 24 * static_cast<std::size_t>(i);
#pragma GCC unroll 3
        for (int r = 0; r < 3; ++r) {
            const __m128 x = _mm_load_ps(mi + 4 * r);
            const __m128 d = _mm_sub_ps(_mm_load_ps(mj + 4 * r), x);
            _mm_store_ps(t + 4 * r, d);
            _mm_store_ps(t + 12 + 4 * r, _mm_add_ps(x, _mm_mul_ps(zero, d)));
        }
    }
}

/// Rows of D[i] (and R[i]) of entry i, whose successor is j: from the table, or computed.
template <bool Table>
SLANIM_INLINE void sl_entry_rows(const float* M, const float* T, std::uint32_t i, std::uint32_t j, __m128 (&D)[3],
                                 __m128* R) {
    if constexpr (Table) {
        const float* t = T + 24 * static_cast<std::size_t>(i);
#pragma GCC unroll 3
        for (int r = 0; r < 3; ++r) {
            D[r] = _mm_load_ps(t + 4 * r);
            if (R) R[r] = _mm_load_ps(t + 12 + 4 * r);
        }
    } else {
        const float* mi = M + 16 * static_cast<std::size_t>(i);
        const float* mj = M + 16 * static_cast<std::size_t>(j);
#pragma GCC unroll 3
        for (int r = 0; r < 3; ++r) {
            const __m128 x = _mm_load_ps(mi + 4 * r);
            D[r] = _mm_sub_ps(_mm_load_ps(mj + 4 * r), x);
            if (R) R[r] = _mm_add_ps(x, _mm_mul_ps(_mm_setzero_ps(), D[r]));
        }
    }
}

template <bool Stream, bool Table>
std::size_t skin_sl_sse2_impl(const KernelArgs& args) {
    // A local copy: the output stores cannot alias it, so the stream pointers stay in registers.
    const KernelArgs a = args;
    const float* M = a.matrices;
    const __m128 last = _mm_set1_ps(static_cast<float>(a.num_matrices - 1));
    alignas(16) float T[Table ? 24 * kSlTableEntries : 1];
    if constexpr (Table) sl_rows_table(M, a.num_matrices, T);
    alignas(16) std::int32_t ei[4], ej[4] = {};
    alignas(16) float fr[4];
    std::size_t v = a.begin;
    for (; v + 4 <= a.end; v += 4) {
        // The scalar kernel's entry rule: clamp floor(w) in float (NaN and negatives → 0), then
        // convert; j = min(i + 1, last) in float (exact: lists hold ≤ 2^24 entries).
        const __m128 w = _mm_loadu_ps(a.sl_weights + v);
        // Valid weights (sign bit clear, below 2^23): floor is the truncation.
        const __m128 t = _mm_cvtepi32_ps(_mm_cvttps_epi32(w));
        const bool plain = (_mm_movemask_ps(w) | (_mm_movemask_ps(_mm_cmplt_ps(w, _mm_set1_ps(8388608.f))) ^ 0xF)) == 0;
        const __m128 fl = plain ? t : floor_sse2(w);
        const __m128 flc = _mm_min_ps(_mm_max_ps(fl, _mm_setzero_ps()), last);
        const __m128i i = _mm_cvttps_epi32(flc);
        const __m128 f = _mm_sub_ps(w, fl);
        const auto i0 = static_cast<std::uint32_t>(_mm_cvtsi128_si32(i));
        __m128 E[3][4];
        if (_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(i, _mm_set1_epi32(static_cast<int>(i0))))) == 0xF) {
            // One entry for the 4 vertices (most blocks of the SL meshes): broadcast elements.
            const std::uint32_t j0 = i0 + 1 < a.num_matrices ? i0 + 1 : i0;
            __m128 D[3], R[3];
            if (_mm_movemask_ps(_mm_cmpeq_ps(w, fl)) == 0xF) {
                // Rigid (f = 0 in every lane): the blend is R[i].
                sl_entry_rows<Table>(M, T, i0, j0, D, R);
                splat_rows(R, E);
            } else {
                sl_entry_rows<Table>(M, T, i0, j0, D, nullptr);
                const float* mi = M + 16 * static_cast<std::size_t>(i0);
                __m128 Mi[3], Ms[3][4], Ds[3][4];
#pragma GCC unroll 3
                for (int r = 0; r < 3; ++r) Mi[r] = _mm_load_ps(mi + 4 * r);
                splat_rows(Mi, Ms);
                splat_rows(D, Ds);
#pragma GCC unroll 12
                for (int e = 0; e < 12; ++e) E[e / 4][e % 4] = _mm_add_ps(Ms[e / 4][e % 4], _mm_mul_ps(f, Ds[e / 4][e % 4]));
            }
        } else {
            // Entries differ: blend each vertex's rows, then transpose.
            _mm_store_si128(reinterpret_cast<__m128i*>(ei), i);
            if constexpr (!Table) {
                const __m128 jf = _mm_min_ps(_mm_add_ps(flc, _mm_set1_ps(1.f)), last);
                _mm_store_si128(reinterpret_cast<__m128i*>(ej), _mm_cvttps_epi32(jf));
            }
            _mm_store_ps(fr, f);
            __m128 B[4][3];
#pragma GCC unroll 4
            for (int l = 0; l < 4; ++l) {
                const auto il = static_cast<std::uint32_t>(ei[l]);
                __m128 D[3];
                sl_entry_rows<Table>(M, T, il, static_cast<std::uint32_t>(ej[l]), D, nullptr);
                const float* mi = M + 16 * static_cast<std::size_t>(il);
                const __m128 fl4 = _mm_set1_ps(fr[l]);
#pragma GCC unroll 3
                for (int r = 0; r < 3; ++r) B[l][r] = _mm_add_ps(_mm_load_ps(mi + 4 * r), _mm_mul_ps(fl4, D[r]));
            }
            rows_to_elements(B, E);
        }
        transform_e4<Stream>(E, a, v);
    }
    if constexpr (Stream) _mm_sfence();
    return v;
}

template <bool Stream>
std::size_t skin_sl_sse2_s(const KernelArgs& a) {
    // The table costs ~20 operations per entry: worth it from a few blocks on.
    const bool table = a.num_matrices <= kSlTableEntries && a.end - a.begin >= 32;
    return table ? skin_sl_sse2_impl<Stream, true>(a) : skin_sl_sse2_impl<Stream, false>(a);
}

}  // namespace

std::size_t skin_sl_sse2(const KernelArgs& a) {
    return stream_outputs(a) ? skin_sl_sse2_s<true>(a) : skin_sl_sse2_s<false>(a);
}

}  // namespace slanim::skin_detail

#endif
