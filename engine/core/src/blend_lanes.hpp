// SPDX-License-Identifier: MIT
// The PoseBlender's folds for AVX2 and SSE2 (private). Included by blend_avx2.cpp (compiled
// with -mavx2: 8 lanes, __m256) and blend_sse2.cpp (x86-64 baseline or wasm SIMD: 4 lanes, __m128) inside the
// namespace named by SLANIM_BLEND_LANES_NS, so each translation unit has its own symbols (none
// compiled for AVX2 can be picked by the linker for an SSE2 caller).
//
// One lane per joint, W joints (a chunk) at a time: the AVX-512 fold (blend_avx512.cpp) with
// lane masks kept as all-ones/all-zeros vectors and applied by blends (AVX2 vblendvps; SSE2
// and/andnot/or) instead of k registers. Every lane performs the float operations of
// PoseBlender::blend_one (the viewer's LLJointStateBlender::blendJointStates for non-additive
// states without scale) in the same order and on the same values as the AVX-512 fold: the
// first-contributor copy, the capacity-limited sums, lerp over positions, ll_nlerp over
// rotations with LLQuaternion::normalize's thresholds, ll_slerp (scalar) in lanes whose
// quaternions lie in opposite hemispheres, then the composition with the identity additive
// terms. Separate multiplies and adds (-ffp-contract=off, no FMA), IEEE square root and
// division: the results are the scalar code's bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <immintrin.h>
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

#include "blend_args.hpp"
#include "slanim/core/clip.hpp"

namespace slanim::blend_detail::SLANIM_BLEND_LANES_NS {

// The fold's helpers are inlined into its loops (one call per layer and chunk otherwise).
#define SLANIM_LANES_INLINE __attribute__((always_inline)) inline

// ---- The lane operations of the instruction set ---------------------------------------------
// The first k (clamped to [0, 4]) of the four floats at p, the others zero; only those k are
// read (the partial chunk at an array's end: no store to a temporary, no memcpy).
inline __m128 load4(const float* p, std::ptrdiff_t k) {
    if (k >= 4) return _mm_loadu_ps(p);
    // Two floats through the unaligned 64-bit integer load (p is only 4-byte aligned).
    const auto load2 = [](const float* q) { return _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q))); };
    if (k == 3) return _mm_movelh_ps(load2(p), _mm_load_ss(p + 2));
    if (k == 2) return load2(p);
    if (k == 1) return _mm_load_ss(p);
    return _mm_setzero_ps();
}
// The first k (clamped to [0, 4]) floats of v to p; only those k are written.
inline void store4(float* p, std::ptrdiff_t k, __m128 v) {
    if (k >= 4) return _mm_storeu_ps(p, v);
    if (k >= 2) _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_castps_si128(v));  // unaligned 64-bit store
    if (k == 3) _mm_store_ss(p + 2, _mm_movehl_ps(v, v));
    if (k == 1) _mm_store_ss(p, v);
}
#if defined(__AVX2__)
constexpr int W = 8;  // lanes: joints per chunk
using F = __m256;     // W floats, or W lane masks (all bits set: lane on)
inline F set1(float x) { return _mm256_set1_ps(x); }
inline F set1_bits(std::int32_t x) { return _mm256_castsi256_ps(_mm256_set1_epi32(x)); }
inline F zero() { return _mm256_setzero_ps(); }
inline F add(F a, F b) { return _mm256_add_ps(a, b); }
inline F sub(F a, F b) { return _mm256_sub_ps(a, b); }
inline F mul(F a, F b) { return _mm256_mul_ps(a, b); }
inline F div(F a, F b) { return _mm256_div_ps(a, b); }
inline F sqrt(F a) { return _mm256_sqrt_ps(a); }
inline F and_(F a, F b) { return _mm256_and_ps(a, b); }
inline F or_(F a, F b) { return _mm256_or_ps(a, b); }
inline F andnot(F a, F b) { return _mm256_andnot_ps(b, a); }  // a & ~b
inline F sel(F m, F a, F b) { return _mm256_blendv_ps(b, a, m); }  // m ? a : b
inline F min_first(F a, F b) { return _mm256_min_ps(a, b); }         // a < b ? a : b (NaN: b)
inline F lt(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
inline F le(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
inline F gt(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
inline F eq(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
inline F neq(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_NEQ_UQ); }  // NaN: true
inline unsigned bits(F m) { return static_cast<unsigned>(_mm256_movemask_ps(m)); }
inline F loadu(const float* p) { return _mm256_loadu_ps(p); }
inline void storeu(float* p, F v) { _mm256_storeu_ps(p, v); }
// Integer lanes (as the bits of F).
inline __m256i as_i(F a) { return _mm256_castps_si256(a); }
inline F as_f(__m256i a) { return _mm256_castsi256_ps(a); }
inline F i_gt(F a, F b) { return as_f(_mm256_cmpgt_epi32(as_i(a), as_i(b))); }
inline F i_eq(F a, F b) { return as_f(_mm256_cmpeq_epi32(as_i(a), as_i(b))); }
inline F i_sub(F a, F b) { return as_f(_mm256_sub_epi32(as_i(a), as_i(b))); }
// W bytes at p (all readable) as W integer lanes.
inline F widen_u8(const std::uint8_t* p) {
    std::int64_t x;
    std::memcpy(&x, p, sizeof x);
    return as_f(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(x)));
}
// Lane l on where bit l of m is set.
inline F lane_mask(unsigned m) {
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    return as_f(_mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(static_cast<int>(m)), bit), bit));
}
// Groups of four floats for the AoS transposes: the group at `lo` in lanes 0-3, the one at
// `lo + hi` in lanes 4-7 (each 128-bit half is transposed alike).
// `left`: the floats readable (or writable) from lo (load4, store4).
inline F load_groups(const float* lo, std::size_t hi, std::ptrdiff_t left) {
    const auto h = static_cast<std::ptrdiff_t>(hi);
    return _mm256_insertf128_ps(_mm256_castps128_ps256(load4(lo, left)), load4(lo + hi, left - h), 1);
}
inline void store_groups(float* lo, std::size_t hi, std::ptrdiff_t left, F v) {
    store4(lo, left, _mm256_castps256_ps128(v));
    store4(lo + hi, left - static_cast<std::ptrdiff_t>(hi), _mm256_extractf128_ps(v, 1));
}
inline F unpacklo(F a, F b) { return _mm256_unpacklo_ps(a, b); }
inline F unpackhi(F a, F b) { return _mm256_unpackhi_ps(a, b); }
template <int Imm>
inline F shuf(F a, F b) {
    return _mm256_shuffle_ps(a, b, Imm);
}
// Per 8-lane mask: for each lane with its bit set, the index of its packed value (0, 1, ...).
struct ExpandTable {
    alignas(8) std::uint8_t index[256][8];
    constexpr ExpandTable() : index{} {
        for (unsigned m = 0; m < 256; ++m) {
            std::uint8_t k = 0;
            for (int l = 0; l < 8; ++l)
                if (m >> l & 1u) index[m][l] = k++;
        }
    }
};
inline constexpr ExpandTable kExpand{};
// Spreads W packed values (lanes 0, 1, ...) to the lanes of a mask, in order; other lanes 0.
struct Expand {
    __m256i index;
    F on;
    explicit Expand(unsigned m) : on(lane_mask(m)) {
        std::int64_t x;
        std::memcpy(&x, kExpand.index[m & 0xFFu], sizeof x);
        index = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(x));
    }
    F operator()(F v) const { return and_(_mm256_permutevar8x32_ps(v, index), on); }
};
#else
constexpr int W = 4;
using F = __m128;
inline F set1(float x) { return _mm_set1_ps(x); }
inline F set1_bits(std::int32_t x) { return _mm_castsi128_ps(_mm_set1_epi32(x)); }
inline F zero() { return _mm_setzero_ps(); }
inline F add(F a, F b) { return _mm_add_ps(a, b); }
inline F sub(F a, F b) { return _mm_sub_ps(a, b); }
inline F mul(F a, F b) { return _mm_mul_ps(a, b); }
inline F div(F a, F b) { return _mm_div_ps(a, b); }
inline F sqrt(F a) { return _mm_sqrt_ps(a); }
inline F and_(F a, F b) { return _mm_and_ps(a, b); }
inline F or_(F a, F b) { return _mm_or_ps(a, b); }
inline F andnot(F a, F b) { return _mm_andnot_ps(b, a); }  // a & ~b
inline F sel(F m, F a, F b) { return _mm_or_ps(_mm_and_ps(m, a), _mm_andnot_ps(m, b)); }
#if defined(__wasm_simd128__)
inline F min_first(F a, F b) { return sel(_mm_cmplt_ps(a, b), a, b); }  // a < b ? a : b (NaN: b)
#else
inline F min_first(F a, F b) { return _mm_min_ps(a, b); }  // minps: a < b ? a : b (NaN: b)
#endif
inline F lt(F a, F b) { return _mm_cmplt_ps(a, b); }    // ordered
inline F le(F a, F b) { return _mm_cmple_ps(a, b); }    // ordered
inline F gt(F a, F b) { return _mm_cmpgt_ps(a, b); }    // ordered
inline F eq(F a, F b) { return _mm_cmpeq_ps(a, b); }    // ordered
inline F neq(F a, F b) { return _mm_cmpneq_ps(a, b); }  // unordered: NaN gives true
inline unsigned bits(F m) { return static_cast<unsigned>(_mm_movemask_ps(m)); }
inline F loadu(const float* p) { return _mm_loadu_ps(p); }
inline void storeu(float* p, F v) { _mm_storeu_ps(p, v); }
inline __m128i as_i(F a) { return _mm_castps_si128(a); }
inline F as_f(__m128i a) { return _mm_castsi128_ps(a); }
inline F i_gt(F a, F b) { return as_f(_mm_cmpgt_epi32(as_i(a), as_i(b))); }
inline F i_eq(F a, F b) { return as_f(_mm_cmpeq_epi32(as_i(a), as_i(b))); }
inline F i_sub(F a, F b) { return as_f(_mm_sub_epi32(as_i(a), as_i(b))); }
inline F widen_u8(const std::uint8_t* p) {
    std::int32_t x;
    std::memcpy(&x, p, sizeof x);
    const __m128i z = _mm_setzero_si128();
    return as_f(_mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(x), z), z));
}
inline F lane_mask(unsigned m) {
    const __m128i bit = _mm_setr_epi32(1, 2, 4, 8);
    return as_f(_mm_cmpeq_epi32(_mm_and_si128(_mm_set1_epi32(static_cast<int>(m)), bit), bit));
}
inline F load_groups(const float* lo, std::size_t, std::ptrdiff_t left) { return load4(lo, left); }
inline void store_groups(float* lo, std::size_t, std::ptrdiff_t left, F v) { store4(lo, left, v); }
inline F unpacklo(F a, F b) { return _mm_unpacklo_ps(a, b); }
inline F unpackhi(F a, F b) { return _mm_unpackhi_ps(a, b); }
template <int Imm>
inline F shuf(F a, F b) {
    return _mm_shuffle_ps(a, b, Imm);
}
// The shuffle that spreads packed lanes to the lanes of mask M (lanes off pick lane 0).
constexpr int expand_imm(unsigned m) {
    int imm = 0, k = 0;
    for (int l = 0; l < 4; ++l)
        if (m >> l & 1u) imm |= (k++) << (2 * l);
    return imm;
}
#if defined(__wasm_simd128__)
// wasm SIMD: one byte swizzle per mask from a table (i8x16.swizzle), where the switch below
// would dispatch on every call; indices ≥ 16 give zero bytes, so lanes off read as zero.
struct ExpandTable {
    alignas(16) std::uint8_t index[16][16];
    constexpr ExpandTable() : index{} {
        for (unsigned m = 0; m < 16; ++m) {
            unsigned k = 0;
            for (unsigned l = 0; l < 4; ++l) {
                const bool on = m >> l & 1u;
                for (unsigned b = 0; b < 4; ++b) index[m][4 * l + b] = static_cast<std::uint8_t>(on ? 4 * k + b : 0x80);
                k += on ? 1u : 0u;
            }
        }
    }
};
inline constexpr ExpandTable kExpand{};
struct Expand {
    v128_t index;
    explicit Expand(unsigned m) : index(wasm_v128_load(kExpand.index[m & 15u])) {}
    F operator()(F v) const { return reinterpret_cast<F>(wasm_i8x16_swizzle(reinterpret_cast<v128_t>(v), index)); }
};
#else
template <unsigned M>
inline F expand_const(F v) {
    return and_(_mm_shuffle_ps(v, v, expand_imm(M)), lane_mask(M));
}
struct Expand {
    unsigned m;
    explicit Expand(unsigned mask) : m(mask) {}
    F operator()(F v) const {
        switch (m) {
#define SLANIM_EXPAND_CASE(M) \
    case M: return expand_const<M>(v);
            SLANIM_EXPAND_CASE(1) SLANIM_EXPAND_CASE(2) SLANIM_EXPAND_CASE(3) SLANIM_EXPAND_CASE(4)
            SLANIM_EXPAND_CASE(5) SLANIM_EXPAND_CASE(6) SLANIM_EXPAND_CASE(7) SLANIM_EXPAND_CASE(8)
            SLANIM_EXPAND_CASE(9) SLANIM_EXPAND_CASE(10) SLANIM_EXPAND_CASE(11) SLANIM_EXPAND_CASE(12)
            SLANIM_EXPAND_CASE(13) SLANIM_EXPAND_CASE(14) SLANIM_EXPAND_CASE(15)
#undef SLANIM_EXPAND_CASE
            default: return zero();
        }
    }
};
#endif  // __wasm_simd128__
#endif
constexpr unsigned kAllLanes = (1u << W) - 1u;
inline F abs_(F a) { return and_(a, set1_bits(0x7FFFFFFF)); }
inline unsigned first_lanes(int n) { return n >= W ? kAllLanes : (1u << n) - 1u; }

// ---- AoS ↔ SoA --------------------------------------------------------------------------------
// Floats per 128-bit half of a register in the group loads: 4 quaternions or 4 Vec3.
constexpr std::size_t kQuatHalf = 16, kVec3Half = 12;

// n ≤ W quaternions at q into x, y, z, w lanes (lanes ≥ n zero; only n read).
SLANIM_LANES_INLINE void quats_in(const Quat* q, F (&out)[4], int n = W) {
    const float* f = &q->x;
    F a[4];
    for (int k = 0; k < 4; ++k) a[k] = load_groups(f + 4 * k, kQuatHalf, 4 * (n - k));  // quaternion k (and 4 + k)
    const F t0 = unpacklo(a[0], a[1]), t1 = unpacklo(a[2], a[3]);  // x0 x1 y0 y1 | x2 x3 y2 y3
    const F t2 = unpackhi(a[0], a[1]), t3 = unpackhi(a[2], a[3]);  // z0 z1 w0 w1 | z2 z3 w2 w3
    out[0] = shuf<_MM_SHUFFLE(1, 0, 1, 0)>(t0, t1), out[1] = shuf<_MM_SHUFFLE(3, 2, 3, 2)>(t0, t1);
    out[2] = shuf<_MM_SHUFFLE(1, 0, 1, 0)>(t2, t3), out[3] = shuf<_MM_SHUFFLE(3, 2, 3, 2)>(t2, t3);
}
SLANIM_LANES_INLINE void quats_out(const F (&in)[4], Quat* q, int n = W) {  // n ≤ W written
    float* f = &q->x;
    const F t0 = unpacklo(in[0], in[1]), t1 = unpackhi(in[0], in[1]);  // x0 y0 x1 y1 | x2 y2 x3 y3
    const F t2 = unpacklo(in[2], in[3]), t3 = unpackhi(in[2], in[3]);  // z0 w0 z1 w1 | z2 w2 z3 w3
    store_groups(f, kQuatHalf, 4 * n - 0, shuf<_MM_SHUFFLE(1, 0, 1, 0)>(t0, t2));
    store_groups(f + 4, kQuatHalf, 4 * n - 4, shuf<_MM_SHUFFLE(3, 2, 3, 2)>(t0, t2));
    store_groups(f + 8, kQuatHalf, 4 * n - 8, shuf<_MM_SHUFFLE(1, 0, 1, 0)>(t1, t3));
    store_groups(f + 12, kQuatHalf, 4 * n - 12, shuf<_MM_SHUFFLE(3, 2, 3, 2)>(t1, t3));
}
// n ≤ W Vec3 at v into x, y, z lanes (lanes ≥ n zero; only n read). Per half: a = x0 y0 z0 x1,
// b = y1 z1 x2 y2, c = z2 x3 y3 z3.
SLANIM_LANES_INLINE void vec3s_in(const Vec3* v, F (&out)[3], int n = W) {
    const float* f = &v->x;
    const std::ptrdiff_t t = 3 * n;
    const F a = load_groups(f, kVec3Half, t), b = load_groups(f + 4, kVec3Half, t - 4), c = load_groups(f + 8, kVec3Half, t - 8);
    const F xy_hi = shuf<_MM_SHUFFLE(2, 1, 3, 2)>(b, c);  // x2 y2 x3 y3
    const F yz_lo = shuf<_MM_SHUFFLE(1, 0, 2, 1)>(a, b);  // y0 z0 y1 z1
    out[0] = shuf<_MM_SHUFFLE(2, 0, 3, 0)>(a, xy_hi);
    out[1] = shuf<_MM_SHUFFLE(3, 1, 2, 0)>(yz_lo, xy_hi);
    out[2] = shuf<_MM_SHUFFLE(3, 0, 3, 1)>(yz_lo, c);
}
SLANIM_LANES_INLINE void vec3s_out(const F (&in)[3], Vec3* v, int n = W) {  // n ≤ W written
    float* f = &v->x;
    const std::ptrdiff_t t = 3 * n;
    const F xy_lo = unpacklo(in[0], in[1]), xy_hi = unpackhi(in[0], in[1]);  // x0 y0 x1 y1 | x2 y2 x3 y3
    const F zx = shuf<_MM_SHUFFLE(1, 1, 0, 0)>(in[2], in[0]);                   // z0 z0 x1 x1
    const F yz = shuf<_MM_SHUFFLE(1, 1, 1, 1)>(in[1], in[2]);                   // y1 y1 z1 z1
    const F zx3 = shuf<_MM_SHUFFLE(3, 3, 2, 2)>(in[2], in[0]);                  // z2 z2 x3 x3
    const F yz3 = shuf<_MM_SHUFFLE(3, 3, 3, 3)>(in[1], in[2]);                  // y3 y3 z3 z3
    store_groups(f, kVec3Half, t - 0, shuf<_MM_SHUFFLE(2, 0, 1, 0)>(xy_lo, zx));
    store_groups(f + 4, kVec3Half, t - 4, shuf<_MM_SHUFFLE(1, 0, 2, 0)>(yz, xy_hi));
    store_groups(f + 8, kVec3Half, t - 8, shuf<_MM_SHUFFLE(2, 0, 2, 0)>(zx3, yz3));
}
// n ≤ W elements (lanes ≥ n read as zero; only n are read from memory).
template <class T, int C>
inline void load_n(const T* p, int n, F (&out)[C]) {
    if (n >= W) n = W;  // (the usual full chunk: the partial checks fold away)
    if constexpr (C == 4) n == W ? quats_in(p, out) : quats_in(p, out, n);
    else n == W ? vec3s_in(p, out) : vec3s_in(p, out, n);
}
template <class T, int C>
inline void store_n(const F (&v)[C], T* p, int n) {
    if (n >= W) n = W;
    if constexpr (C == 4) n == W ? quats_out(v, p) : quats_out(v, p, n);
    else n == W ? vec3s_out(v, p) : vec3s_out(v, p, n);
}

// ---- The fold of one chunk ------------------------------------------------------------------
// A chunk of W joints: the running blend, the sums, the lanes blended so far, the pose as read.
struct Chunk {
    F r[4], p[3], sum_pos, sum_rot;
    unsigned has_pos, has_rot;  // lanes holding a position, a rotation (first contributor seen)
    F in_r[4], in_p[3];
    F blended;  // lanes this fold writes (the others keep the pose's bits)
    std::size_t j0;
    int lanes;
};

// Starts a chunk's blend from its pose; with `read_pose` false (every lane gets a first rotation
// and position from its states) the pose cannot reach the output and is not read.
SLANIM_LANES_INLINE void start_chunk(Chunk& c, const Quat* r, const Vec3* p, bool read_pose = true) {
    if (read_pose) {
        load_n(r, c.lanes, c.in_r);
        load_n(p, c.lanes, c.in_p);
    } else {
        for (F& x : c.in_r) x = zero();
        for (F& x : c.in_p) x = zero();
    }
    for (int k = 0; k < 4; ++k) c.r[k] = c.in_r[k];
    for (int k = 0; k < 3; ++k) c.p[k] = c.in_p[k];
    c.sum_pos = c.sum_rot = zero();
    c.has_pos = c.has_rot = 0;
}

// `llmin(1, w + sum)` as the scalar code computes it (`ws < 1 ? ws : 1`: a NaN gives 1; x86's
// minimum is that select in one instruction).
inline F capped_sum(F w, F sum) {
    return min_first(add(w, sum), set1(1.f));
}
// sum / nw on the lanes of `lanes`; skipped where every such lane has nw = 1 and a sum that is
// not NaN (x / 1 = x exactly), as the AVX-512 fold does.
// (`sum == sum` is the not-NaN test: one compare everywhere, where wasm SIMD has no ordered
// compare and Emscripten's _mm_cmpord_ps takes three instructions.)
inline F ratio(unsigned lanes, F sum, F nw) {
    const F exact = and_(eq(nw, set1(1.f)), eq(sum, sum));
    return (lanes & ~bits(exact)) ? div(sum, nw) : sum;
}

// ll_slerp(t, a, b) in the lanes of `lanes` (ll_nlerp's branch for opposite hemispheres; rare).
__attribute__((noinline)) inline void slerp_lanes(unsigned lanes, const F& t, const F (&a)[4], const F (&b)[4], F (&out)[4]) {
    alignas(32) float tf[W], af[4][W], bf[4][W], of[4][W];
    storeu(tf, t);
    for (int c = 0; c < 4; ++c) storeu(af[c], a[c]), storeu(bf[c], b[c]), storeu(of[c], out[c]);
    for (int l = 0; l < W; ++l) {
        if (!(lanes >> l & 1u)) continue;
        const Quat q = ll_slerp(tf[l], Quat{af[0][l], af[1][l], af[2][l], af[3][l]}, Quat{bf[0][l], bf[1][l], bf[2][l], bf[3][l]});
        of[0][l] = q.x, of[1][l] = q.y, of[2][l] = q.z, of[3][l] = q.w;
    }
    for (int c = 0; c < 4; ++c) out[c] = loadu(of[c]);
}

// One state per lane (a slot, or a layer's tracks) in the running blend: blend_one's loop body.
struct State {
    F r[4], p[3];
    F w;      // weight
    F usage;  // usage bits as integers
    F lanes;  // lanes holding a state
    // What is known for every lane (a layer's states): the weight (w1_known) and the usage
    // (usage1 ≥ 0), so the lane conditions are computed on bits, not vectors.
    bool w1_known = false;
    float w1 = 0.f;
    int usage1 = -1;
};

// The nlerp of a continuing rotation: t·r + (1 − t)·a normalised with LLQuaternion::normalize's
// rules (kept when |1 − |q|| ≤ 1e-6, identity below 1e-7), into l.
SLANIM_LANES_INLINE void nlerp(unsigned cont, F t, const F (&r)[4], const F (&a)[4], F (&l)[4]) {
    const F one = set1(1.f), inv_t = sub(one, t);
    for (int c = 0; c < 4; ++c) l[c] = add(mul(t, r[c]), mul(inv_t, a[c]));
    const F m2 = add(add(add(mul(l[0], l[0]), mul(l[1], l[1])), mul(l[2], l[2])), mul(l[3], l[3]));
    // |m2 − 1| ≤ 1e-6 guarantees |1 − sqrt(m2)| ≤ 1e-6 (blend_avx512.cpp): no rescale there.
    const F near_unit = le(abs_(sub(m2, one)), set1(0.000001f));
    if (cont & ~bits(near_unit)) {
        const F mag = sqrt(m2);
        const F oomag = div(one, mag);
        const F dev = abs_(sub(one, mag));
        const F big = gt(mag, set1(0.0000001f));
        const F scale_it = gt(dev, set1(0.000001f));
        if (!(cont & ~bits(and_(big, scale_it)))) {  // every continuing lane rescaled (usual): no selects
            for (F& c : l) c = mul(c, oomag);
            return;
        }
        for (int c = 0; c < 3; ++c) l[c] = and_(big, sel(scale_it, mul(l[c], oomag), l[c]));
        l[3] = sel(big, sel(scale_it, mul(l[3], oomag), l[3]), one);
    }
}

// The lanes of `mb` from a, the others from b: no blend when mb is all on or all off
// (the usual case: a motion covers the whole chunk).
SLANIM_LANES_INLINE F pick(unsigned mb, F a, F b) { return mb == kAllLanes ? a : mb == 0 ? b : sel(lane_mask(mb), a, b); }

// The bits of the lanes of a state with `bit` in its usage among the live ones.
SLANIM_LANES_INLINE unsigned usage_lanes(const State& s, F live, unsigned live_bits, int bit) {
    if (s.usage1 >= 0) return (s.usage1 & bit) ? live_bits : 0u;
    return bits(and_(live, i_eq(and_(s.usage, set1_bits(bit)), set1_bits(bit))));
}

// A state's positions on the lanes `cb` of a blend already holding one: the capacity-limited
// sum and lerp(state, blend, sum / nw).
// (nw and u: the capped sum and sum / nw, when the caller has them.)
SLANIM_LANES_INLINE void continue_positions(Chunk& b, const State& s, unsigned cb, F nw, F u) {
    for (int c = 0; c < 3; ++c) b.p[c] = pick(cb, add(s.p[c], mul(sub(b.p[c], s.p[c]), u)), b.p[c]);
    b.sum_pos = pick(cb, nw, b.sum_pos);
}
SLANIM_LANES_INLINE void continue_positions(Chunk& b, const State& s, unsigned cb) {
    const F nw = capped_sum(s.w, b.sum_pos);
    continue_positions(b, s, cb, nw, ratio(cb, b.sum_pos, nw));
}
// A state's rotations on the lanes `cb` of a blend already holding one: ll_nlerp(sum / nw,
// state, blend) (ll_slerp in lanes of opposite hemispheres).
SLANIM_LANES_INLINE void continue_rotations(Chunk& b, const State& s, unsigned cb, F nw, F t) {
    F l[4];
    nlerp(cb, t, b.r, s.r, l);
    const F d = add(add(add(mul(s.r[0], b.r[0]), mul(s.r[1], b.r[1])), mul(s.r[2], b.r[2])), mul(s.r[3], b.r[3]));
    const unsigned opposite = cb & bits(lt(d, zero()));
    if (opposite) {  // ll_nlerp takes ll_slerp there (copies: the blend's address is not taken)
        const F a[4] = {s.r[0], s.r[1], s.r[2], s.r[3]}, r[4] = {b.r[0], b.r[1], b.r[2], b.r[3]};
        F o[4] = {l[0], l[1], l[2], l[3]};
        slerp_lanes(opposite, t, a, r, o);
        for (int c = 0; c < 4; ++c) l[c] = o[c];
    }
    for (int c = 0; c < 4; ++c) b.r[c] = pick(cb, l[c], b.r[c]);
    b.sum_rot = pick(cb, nw, b.sum_rot);
}
SLANIM_LANES_INLINE void continue_rotations(Chunk& b, const State& s, unsigned cb) {
    const F nw = capped_sum(s.w, b.sum_rot);
    continue_rotations(b, s, cb, nw, ratio(cb, b.sum_rot, nw));
}

SLANIM_LANES_INLINE void fold_state(Chunk& b, const State& s) {
    const F zero_v = zero();
    // live: a state whose weight is not 0 (`w == 0.f` skips; NaN does not).
    F live;
    unsigned live_bits;
    if (s.w1_known) {
        live_bits = s.w1 == 0.f ? 0u : bits(s.lanes);
        live = live_bits ? s.lanes : zero_v;
    } else {
        live = and_(s.lanes, neq(s.w, zero_v));
        live_bits = bits(live);
    }
    const unsigned pb = usage_lanes(s, live, live_bits, kUsagePos);
    const unsigned rb = usage_lanes(s, live, live_bits, kUsageRot);
    if (pb) {
        const unsigned cb = pb & b.has_pos, fb = pb & ~b.has_pos;
        if (cb) continue_positions(b, s, cb);
        if (fb) {
            for (int c = 0; c < 3; ++c) b.p[c] = pick(fb, s.p[c], b.p[c]);
            b.sum_pos = pick(fb, s.w, b.sum_pos);
            b.has_pos |= pb;
        }
    }
    if (rb) {
        const unsigned cb = rb & b.has_rot, fb = rb & ~b.has_rot;
        if (cb) continue_rotations(b, s, cb);
        if (fb) {
            for (int c = 0; c < 4; ++c) b.r[c] = pick(fb, s.r[c], b.r[c]);
            b.sum_rot = pick(fb, s.w, b.sum_rot);
            b.has_rot |= rb;
        }
    }
}

// The lanes where a component of the quaternion r is −0, infinite or NaN (AVX2: the largest
// magnitude and the smallest signed integer over the four components, then two compares).
SLANIM_LANES_INLINE unsigned special_lanes(const F (&r)[4]) {
    const F max_finite = set1_bits(0x7F7FFFFF), minus_zero = set1_bits(static_cast<std::int32_t>(0x80000000u));
#if defined(__AVX2__)
    const auto max_ = [](F a, F b) { return as_f(_mm256_max_epi32(as_i(a), as_i(b))); };
    const auto min_ = [](F a, F b) { return as_f(_mm256_min_epi32(as_i(a), as_i(b))); };
    const F mag = max_(max_(abs_(r[0]), abs_(r[1])), max_(abs_(r[2]), abs_(r[3])));
    const F low = min_(min_(r[0], r[1]), min_(r[2], r[3]));
    return bits(or_(i_gt(mag, max_finite), i_eq(low, minus_zero)));
#else
    F special = zero();
    for (const F& c : r) special = or_(special, or_(i_gt(abs_(c), max_finite), i_eq(c, minus_zero)));
    return bits(special);
#endif
}

// blend_one's ending: blended + zero added position; ll_mul(identity added rotation, blended)
// with ll_mul's operations (compose_identity), skipped where no component is −0, infinite or NaN
// (the product is then the quaternion itself, bit for bit). Lanes not blended keep their pose's
// bits (finish_chunk).
SLANIM_LANES_INLINE void compose_identity(const F (&r)[4], F (&q)[4]) {
    const F one = set1(1.f), z = zero();
    for (int c = 0; c < 4; ++c) q[c] = r[c];
    if (special_lanes(r)) {
        const F rx = r[0], ry = r[1], rz = r[2], rw = r[3];
        q[0] = sub(add(add(mul(rw, z), mul(rx, one)), mul(ry, z)), mul(rz, z));
        q[1] = sub(add(add(mul(rw, z), mul(ry, one)), mul(rz, z)), mul(rx, z));
        q[2] = sub(add(add(mul(rw, z), mul(rz, one)), mul(rx, z)), mul(ry, z));
        q[3] = sub(sub(sub(mul(rw, one), mul(rx, z)), mul(ry, z)), mul(rz, z));
    }
}
SLANIM_LANES_INLINE void finish_chunk(const Chunk& b, Quat* r, Vec3* p) {
    const F z = zero();
    F q[4];
    compose_identity(b.r, q);
    F out_r[4], out_p[3];
    for (int c = 0; c < 4; ++c) out_r[c] = sel(b.blended, q[c], b.in_r[c]);
    for (int c = 0; c < 3; ++c) out_p[c] = sel(b.blended, add(b.p[c], z), b.in_p[c]);
    store_n(out_r, r, b.lanes);
    store_n(out_p, p, b.lanes);
}

// ---- The fold of the slots --------------------------------------------------------------------
// PoseBlender's slot arrays, W joints at a time, slot by slot (fold_masked's AVX2/SSE2 form).
inline void fold_slots_impl(const FoldArgs& a) {
    constexpr int R = PoseBlender::kFields;
    const std::size_t S = a.stride;
    for (std::size_t j0 = 0; j0 < a.joints; j0 += W) {
        Chunk b;
        b.j0 = j0;
        b.lanes = a.joints - j0 < W ? static_cast<int>(a.joints - j0) : W;
        // Lanes blended here: joints with states and no additive or scaled one.
        int nmax = 0;
        for (int l = 0; l < b.lanes; ++l) {
            const std::size_t j = j0 + static_cast<std::size_t>(l);
            if (!a.scalar[j] && a.counts[j] > nmax) nmax = a.counts[j];
        }
        if (nmax == 0) continue;
        const F count = and_(and_(widen_u8(a.counts + j0), i_eq(widen_u8(a.scalar + j0), zero())), lane_mask(first_lanes(b.lanes)));
        b.blended = i_gt(count, zero());
        start_chunk(b, a.rotations + j0, a.positions + j0);
        for (int s = 0; s < nmax; ++s) {
            const float* v = a.values + static_cast<std::size_t>(s) * R * S + j0;
            State st;
            st.lanes = i_gt(count, set1_bits(s));
            st.w = loadu(v + PoseBlender::kWeight * S);
            st.usage = widen_u8(a.flags + static_cast<std::size_t>(s) * S + j0);
            for (int c = 0; c < 4; ++c) st.r[c] = loadu(v + static_cast<std::size_t>(PoseBlender::kRx + c) * S);
            for (int c = 0; c < 3; ++c) st.p[c] = loadu(v + static_cast<std::size_t>(PoseBlender::kPx + c) * S);
            fold_state(b, st);
        }
        finish_chunk(b, a.rotations + j0, a.positions + j0);
    }
}

// ---- The fold straight from recorded layers ---------------------------------------------------
// A layer with tracks in the chunk being folded: its block record, the chunk's lanes it covers
// and its first track there.
struct Present {
    const BlendLayer* layer;
    const LayerBlock* lb;
    unsigned m;         // lanes (bit l: joint j0 + l)
    std::size_t first;  // the track of the lowest such lane
};

// The layer's states in the chunk, spread from its packed tracks to the lanes of x.m
// (components whose array is null are zeros and absent from the usage, blend.hpp). The
// priorities too when `prio` is given.
SLANIM_LANES_INLINE void load_layer_chunk(const Present& x, State& s, F* prio = nullptr) {
    const BlendLayer& layer = *x.layer;
    const LayerShape& shape = *layer.shape;
    const int n = __builtin_popcount(x.m);
    const bool whole = x.first + W <= shape.size();  // W tracks readable from the first
    const auto bytes = [&](const auto* src) {
        std::uint8_t tmp[W] = {};
        if (whole) return widen_u8(reinterpret_cast<const std::uint8_t*>(src + x.first));
        std::memcpy(tmp, src + x.first, static_cast<std::size_t>(n));
        return widen_u8(tmp);
    };
    const std::int32_t usage_bits = (layer.rotations ? kUsageRot : 0) | (layer.positions ? kUsagePos : 0);
    // Tracks of one usage over the block (a motion's usual case): no per-track bytes to read.
    const bool one_usage = x.lb->usage == x.lb->usage_all;
    s.usage = one_usage ? set1_bits(x.lb->usage & usage_bits) : and_(bytes(shape.usages.data()), set1_bits(usage_bits));
    for (F& c : s.r) c = zero();
    for (F& c : s.p) c = zero();
    const int count = whole ? W : n;
    if (layer.rotations && (x.lb->usage & kUsageRot)) load_n(layer.rotations + x.first, count, s.r);
    if (layer.positions && (x.lb->usage & kUsagePos)) load_n(layer.positions + x.first, count, s.p);
    if (prio) *prio = bytes(shape.priorities.data());  // priorities are ≥ 0 (LayerShape::build)
    s.w = set1(layer.weight);
    s.w1_known = true, s.w1 = layer.weight;
    s.usage1 = one_usage ? (x.lb->usage & usage_bits) : -1;
    s.lanes = lane_mask(x.m);
    if (x.m == kAllLanes) return;  // every lane has a track, in order
    const Expand e(x.m);
    if (!one_usage) s.usage = e(s.usage);  // (else lanes without a track are off in s.lanes)
    for (F& c : s.r) c = e(c);
    for (F& c : s.p) c = e(c);
    if (prio) *prio = e(*prio);
}

// The layers with tracks in one 16-joint block, in slot order when `uniform` (every one has a
// single priority over its tracks there: LayerBlock::priority ≥ 0, a motion's usual case;
// sorted by priority, descending, the earlier offered first among equals), else in the order
// offered. Found once per block, shared by its chunks.
struct BlockLayers {
    Present list[PoseBlender::kMaxDeferred];  // m: the block's 16 lanes; first: its first track
    int P = 0;
    bool uniform = true;
};

// Fills `bl` for the block of joints [j0, j0 + 16) (advancing each layer's block cursor). False
// when no layer has a track there.
inline bool block_layers(const LayerFoldArgs& a, std::size_t j0, std::size_t* cursor, BlockLayers& bl) {
    const auto block = static_cast<std::uint16_t>(j0 / 16);
    const std::size_t left = a.joints - j0;
    const unsigned lane_bits = left >= 16 ? 0xFFFFu : (1u << left) - 1u;
    bl.P = 0, bl.uniform = true;
    for (int k = 0; k < a.count; ++k) {
        const BlendLayer& layer = a.layers[k];
        const LayerShape& shape = *layer.shape;
        std::size_t& c = cursor[k];
        while (c < shape.blocks.size() && shape.blocks[c].block < block) ++c;
        if (c == shape.blocks.size() || shape.blocks[c].block != block) continue;
        const LayerBlock& lb = shape.blocks[c];
        const unsigned m = lb.mask & lane_bits;
        if (!m) continue;
        bl.list[bl.P++] = {&layer, &lb, m, lb.first};
        bl.uniform = bl.uniform && lb.priority >= 0;
    }
    if (bl.uniform)
        for (int i = 1; i < bl.P; ++i) {  // stable insertion sort by priority, descending
            const Present x = bl.list[i];
            int j = i;
            for (; j > 0 && bl.list[j - 1].lb->priority < x.lb->priority; --j) bl.list[j] = bl.list[j - 1];
            bl.list[j] = x;
        }
    return bl.P > 0;
}

// One chunk's recorded layers and its running blend. When every layer present has one priority
// over its tracks in the block (LayerBlock::priority ≥ 0: the usual motion), each lane's slot
// order is the layers' order by priority (descending), then by offer: `order` holds them so and
// step k folds the k-th straight from its arrays (`uniform`; lanes past six states drop the
// rest). Otherwise every layer is loaded into `L` and ranked per lane (a state's slot is the
// number of the lane's states with a higher priority or an equal one offered earlier), and
// step s folds the states ranked s.
struct ChunkWork {
    Chunk b;
    Present order[PoseBlender::kMaxDeferred];
    int P = 0, steps = 0;
    bool uniform = true;
    F seen;  // uniform: states folded per lane so far
    State L[PoseBlender::kMaxDeferred];
    F rank[PoseBlender::kMaxDeferred];
};

// Ranks the layers of a non-uniform chunk (ChunkWork).
inline void rank_layers(ChunkWork& w) {
    F prio[PoseBlender::kMaxDeferred];
    for (int i = 0; i < w.P; ++i) load_layer_chunk(w.order[i], w.L[i], &prio[i]);
    for (int i = 0; i < w.P; ++i) {
        F r = zero();
        for (int j = 0; j < w.P; ++j) {
            if (j == i) continue;
            const F both = and_(w.L[i].lanes, w.L[j].lanes);
            // ahead: j < i with prio_j ≥ prio_i, or j > i with prio_j > prio_i
            const F ahead = j < i ? andnot(both, i_gt(prio[i], prio[j])) : and_(both, i_gt(prio[j], prio[i]));
            r = i_sub(r, ahead);  // ahead = −1 per lane
        }
        w.rank[i] = r;
    }
}

// The layers of the chunk at j0 (inside the block of `bl`), ordered or ranked, and its blend
// started. False when no layer has a state in the chunk.
inline bool prepare_chunk(const LayerFoldArgs& a, const BlockLayers& bl, std::size_t j0, ChunkWork& w) {
    Chunk& b = w.b;
    b.j0 = j0;
    b.lanes = a.joints - j0 < W ? static_cast<int>(a.joints - j0) : W;
    const unsigned shift = static_cast<unsigned>(j0 % 16), lane_bits = first_lanes(b.lanes);
    bool covered = false;  // a live layer gives every lane a rotation and a position
    unsigned any = 0;
    int P = 0;
    for (int i = 0; i < bl.P; ++i) {
        const Present& x = bl.list[i];
        const unsigned m = (x.m >> shift) & lane_bits;
        if (!m) continue;
        const auto before = static_cast<std::size_t>(__builtin_popcount(x.m & ((1u << shift) - 1u)));
        w.order[P++] = {x.layer, x.lb, m, x.first + before};
        any |= m;
        const BlendLayer& layer = *x.layer;
        covered = covered || (m == lane_bits && !(layer.weight == 0.f) && layer.rotations && layer.positions &&
                              (x.lb->usage_all & (kUsageRot | kUsagePos)) == (kUsageRot | kUsagePos));
    }
    w.P = P;
    if (P == 0) return false;
    w.uniform = bl.uniform;
    b.blended = lane_mask(any);
    if (w.uniform) {
        w.seen = zero();
        w.steps = P;
    } else {
        rank_layers(w);
        w.steps = P < PoseBlender::kSlots ? P : PoseBlender::kSlots;
    }
    // (With more than six layers the covering one could fall past the sixth slot on a lane.)
    start_chunk(b, a.rotations + j0, a.positions + j0, !(covered && P <= PoseBlender::kSlots));
    return true;
}

// Step s of a prepared chunk (ChunkWork) into its blend b (a copy of w.b the caller keeps in
// registers).
SLANIM_LANES_INLINE void fold_step(ChunkWork& w, Chunk& b, int s) {
    State src;
    if (w.uniform) {
        load_layer_chunk(w.order[s], src);
        if (w.P > PoseBlender::kSlots) {
            const F on = src.lanes;
            src.lanes = and_(on, i_gt(set1_bits(PoseBlender::kSlots), w.seen));
            w.seen = i_sub(w.seen, on);  // on = −1 per lane
        }
    } else {
        for (F& c : src.r) c = zero();
        for (F& c : src.p) c = zero();
        src.w = src.usage = src.lanes = zero();
        for (int i = 0; i < w.P; ++i) {  // the layers holding rank s, each on its lanes
            const State& x = w.L[i];
            const F at = and_(x.lanes, i_eq(w.rank[i], set1_bits(s)));
            if (!bits(at)) continue;
            for (int c = 0; c < 4; ++c) src.r[c] = sel(at, x.r[c], src.r[c]);
            for (int c = 0; c < 3; ++c) src.p[c] = sel(at, x.p[c], src.p[c]);
            src.w = sel(at, x.w, src.w);
            src.usage = sel(at, x.usage, src.usage);
            src.lanes = or_(src.lanes, at);
        }
    }
    if (bits(src.lanes)) fold_state(b, src);
}

// ---- The fold layer by layer ------------------------------------------------------------------
// When every recorded layer has one priority over all its tracks (a motion's usual case) and
// there are at most six, every lane's slot order is the layers' order by priority (descending,
// the earlier offered first among equals) and no lane drops a state. The layers are then folded
// in that order one after the other (ozz's loop order), each over its own blocks only, a dense
// one (a rotation and a position on every lane of a chunk) without lane masks; every chunk's
// running blend waits between layers in the fold scratch (ChunkAcc, ChunkBits). Per lane the
// same states meet the same operations in the same order as in the general fold below: the same
// bits.

// A chunk's running blend between layers (Chunk's r, p and sums).
struct ChunkAcc {
    F r[4], p[3], sum_pos, sum_rot;
};
// A chunk's lane bits between layers: the lanes holding a position, a rotation, the lanes with
// a state (written at the end), and whether its blend was started.
struct ChunkBits {
    std::uint8_t has_pos, has_rot, blended, started;
};
static_assert(16 / W * (sizeof(ChunkAcc) + sizeof(ChunkBits)) <= kFoldBlockBytes, "fold scratch per 16 joints");

// The recorded layers in slot order into `order` (their count), or −1 when the fold layer by
// layer does not apply (more than six layers, or a layer whose tracks differ in priority).
inline int layers_in_slot_order(const LayerFoldArgs& a, const BlendLayer** order) {
    if (a.count > PoseBlender::kSlots) return -1;
    std::int8_t prio[PoseBlender::kSlots];
    int n = 0;
    for (int k = 0; k < a.count; ++k) {
        const LayerShape& shape = *a.layers[k].shape;
        if (shape.blocks.empty()) continue;
        const std::int8_t p = shape.blocks.front().priority;
        for (const LayerBlock& lb : shape.blocks)
            if (lb.priority < 0 || lb.priority != p) return -1;
        int j = n++;  // stable insertion by priority, descending
        for (; j > 0 && prio[j - 1] < p; --j) order[j] = order[j - 1], prio[j] = prio[j - 1];
        order[j] = &a.layers[k], prio[j] = p;
    }
    return n;
}

inline void load_acc(const ChunkAcc& acc, const ChunkBits& cb, Chunk& b) {
    for (int c = 0; c < 4; ++c) b.r[c] = acc.r[c];
    for (int c = 0; c < 3; ++c) b.p[c] = acc.p[c];
    b.sum_pos = acc.sum_pos, b.sum_rot = acc.sum_rot;
    b.has_pos = cb.has_pos, b.has_rot = cb.has_rot;
}
inline void store_acc(const Chunk& b, ChunkAcc& acc, ChunkBits& cb) {
    for (int c = 0; c < 4; ++c) acc.r[c] = b.r[c];
    for (int c = 0; c < 3; ++c) acc.p[c] = b.p[c];
    acc.sum_pos = b.sum_pos, acc.sum_rot = b.sum_rot;
    cb.has_pos = static_cast<std::uint8_t>(b.has_pos), cb.has_rot = static_cast<std::uint8_t>(b.has_rot);
}

// A dense layer's states on every lane of a full chunk at j0 (x.m = kAllLanes, each track with
// a rotation and a position, both arrays given) folded into the chunk's running blend.
SLANIM_LANES_INLINE void fold_dense(const LayerFoldArgs& a, const Present& x, std::size_t j0, ChunkAcc& acc, ChunkBits& cb) {
    const BlendLayer& layer = *x.layer;
    cb.blended = static_cast<std::uint8_t>(kAllLanes);
    Chunk b;
    b.lanes = W;
    if (layer.weight == 0.f) {  // skipped; a first layer leaves the pose as read
        if (!cb.started) start_chunk(b, a.rotations + j0, a.positions + j0), store_acc(b, acc, cb), cb.started = 1;
        return;
    }
    State s;
    quats_in(layer.rotations + x.first, s.r);
    vec3s_in(layer.positions + x.first, s.p);
    s.w = set1(layer.weight);
    if (!cb.started || (cb.has_pos == 0 && cb.has_rot == 0)) {  // the first contributor on every lane
        for (int c = 0; c < 4; ++c) acc.r[c] = s.r[c];
        for (int c = 0; c < 3; ++c) acc.p[c] = s.p[c];
        acc.sum_pos = acc.sum_rot = s.w;
        cb.has_pos = cb.has_rot = static_cast<std::uint8_t>(kAllLanes), cb.started = 1;
        return;
    }
    load_acc(acc, cb, b);
    if (cb.has_pos == kAllLanes && cb.has_rot == kAllLanes) {  // continuing on every lane
        if (bits(i_eq(b.sum_pos, b.sum_rot)) == kAllLanes) {
            // The two sums have the same bits (dense layers so far: the usual case), so the
            // capped sum and its ratio are the same for both: computed once.
            const F nw = capped_sum(s.w, b.sum_pos), t = ratio(kAllLanes, b.sum_pos, nw);
            continue_positions(b, s, kAllLanes, nw, t);
            continue_rotations(b, s, kAllLanes, nw, t);
        } else {
            continue_positions(b, s, kAllLanes);
            continue_rotations(b, s, kAllLanes);
        }
    } else {
        s.lanes = set1_bits(-1);
        s.w1_known = true, s.w1 = layer.weight;
        s.usage1 = kUsageRot | kUsagePos;
        s.usage = set1_bits(s.usage1);
        fold_state(b, s);
    }
    store_acc(b, acc, cb);
}

// A dense layer's states (x.m = kAllLanes, rotations and positions, weight not 0) into a blend b
// that holds a rotation and a position on every lane, or is started by them (`first`).
SLANIM_LANES_INLINE void fold_dense_regs(const Present& x, Chunk& b, bool first) {
    const BlendLayer& layer = *x.layer;
    State s;
    quats_in(layer.rotations + x.first, s.r);
    vec3s_in(layer.positions + x.first, s.p);
    s.w = set1(layer.weight);
    if (first) {
        for (int c = 0; c < 4; ++c) b.r[c] = s.r[c];
        for (int c = 0; c < 3; ++c) b.p[c] = s.p[c];
        b.sum_pos = b.sum_rot = s.w;
        b.has_pos = b.has_rot = kAllLanes;
    } else if (bits(i_eq(b.sum_pos, b.sum_rot)) == kAllLanes) {  // fold_dense's continuing case
        const F nw = capped_sum(s.w, b.sum_pos), t = ratio(kAllLanes, b.sum_pos, nw);
        continue_positions(b, s, kAllLanes, nw, t);
        continue_rotations(b, s, kAllLanes, nw, t);
    } else {
        continue_positions(b, s, kAllLanes);
        continue_rotations(b, s, kAllLanes);
    }
}

// Two dense live layers x1 then x2 on a full chunk whose blend is not started, has no state yet,
// or holds a rotation and a position on every lane: both folded with the blend in registers
// (one trip through the scratch instead of two). Else fold_dense twice.
SLANIM_LANES_INLINE void fold_dense_pair(const LayerFoldArgs& a, const Present& x1, const Present& x2, std::size_t j0,
                                         ChunkAcc& acc, ChunkBits& cb) {
    const bool first = !cb.started || (cb.has_pos == 0 && cb.has_rot == 0);
    if (!first && !(cb.has_pos == kAllLanes && cb.has_rot == kAllLanes)) {
        fold_dense(a, x1, j0, acc, cb);
        fold_dense(a, x2, j0, acc, cb);
        return;
    }
    Chunk b;
    b.lanes = W;
    if (!first) load_acc(acc, cb, b);
    fold_dense_regs(x1, b, first);
    fold_dense_regs(x2, b, false);
    store_acc(b, acc, cb);
    cb.started = 1;
    cb.blended = static_cast<std::uint8_t>(kAllLanes);
}

// Whether layers x and y can be folded in pairs (fold_dense_pair): both live with rotations and
// positions, their tracks on the same joints with both components in the same blocks.
inline bool dense_pair(const BlendLayer& x, const BlendLayer& y) {
    if (x.weight == 0.f || y.weight == 0.f || !x.rotations || !x.positions || !y.rotations || !y.positions) return false;
    const std::vector<LayerBlock>& bx = x.shape->blocks;
    const std::vector<LayerBlock>& by = y.shape->blocks;
    if (bx.size() != by.size()) return false;
    for (std::size_t k = 0; k < bx.size(); ++k)
        if (bx[k].block != by[k].block || bx[k].mask != by[k].mask ||
            (bx[k].usage_all & (kUsageRot | kUsagePos)) != (by[k].usage_all & (kUsageRot | kUsagePos)))
            return false;
    return true;
}

// One layer's states on the lanes x.m of the chunk at j0 (track x.first the lowest) folded into
// the chunk's running blend; the blend is started on its first layer (the pose read unless this
// layer gives every lane a live rotation and position).
SLANIM_LANES_INLINE void fold_layer_chunk(const LayerFoldArgs& a, const Present& x, std::size_t j0, ChunkAcc& acc,
                                          ChunkBits& cb) {
    const BlendLayer& layer = *x.layer;
    if (x.m == kAllLanes && layer.rotations && layer.positions &&
        (x.lb->usage_all & (kUsageRot | kUsagePos)) == (kUsageRot | kUsagePos))
        return fold_dense(a, x, j0, acc, cb);
    Chunk b;
    b.lanes = a.joints - j0 < W ? static_cast<int>(a.joints - j0) : W;
    if (!cb.started) {
        const bool covered = x.m == first_lanes(b.lanes) && !(layer.weight == 0.f) && layer.rotations &&
                             layer.positions && (x.lb->usage_all & (kUsageRot | kUsagePos)) == (kUsageRot | kUsagePos);
        start_chunk(b, a.rotations + j0, a.positions + j0, !covered);
        cb.started = 1;
    } else {
        load_acc(acc, cb, b);
    }
    State s;
    load_layer_chunk(x, s);
    fold_state(b, s);
    store_acc(b, acc, cb);
    cb.blended = static_cast<std::uint8_t>(cb.blended | x.m);
}

// The fold layer by layer of `n` layers in slot order (layers_in_slot_order), then every started
// chunk written to the pose (its lanes without a state keep the pose's bits: their running
// blend is the pose as read).
// Two consecutive layers on the same joints (dense_pair), block by block: full dense chunks fold
// both at once, the others one after the other.
inline void fold_layer_pair(const LayerFoldArgs& a, const BlendLayer& layer, const BlendLayer& next, ChunkAcc* acc,
                            ChunkBits* cbits) {
    const LayerBlock* const blocks = layer.shape->blocks.data();
    const LayerBlock* const next_blocks = next.shape->blocks.data();
    const std::size_t num_blocks = layer.shape->blocks.size();
    for (std::size_t k = 0; k < num_blocks; ++k) {
        const LayerBlock& lb = blocks[k];
        const LayerBlock& lb2 = next_blocks[k];
        const std::size_t block_j0 = std::size_t{lb.block} * 16;
        if (block_j0 >= a.joints) break;
        const std::size_t left = a.joints - block_j0;
        unsigned mask = left >= 16 ? lb.mask : lb.mask & ((1u << left) - 1u);
        std::size_t first = lb.first;
        const bool dense = (lb.usage_all & (kUsageRot | kUsagePos)) == (kUsageRot | kUsagePos);
        for (std::size_t j0 = block_j0; mask; j0 += W, mask >>= W) {
            const unsigned m = mask & kAllLanes;
            if (!m) continue;
            const Present x{&layer, &lb, m, first}, y{&next, &lb2, m, lb2.first + (first - lb.first)};
            if (m == kAllLanes && dense) {
                fold_dense_pair(a, x, y, j0, acc[j0 / W], cbits[j0 / W]);
            } else {
                fold_layer_chunk(a, x, j0, acc[j0 / W], cbits[j0 / W]);
                fold_layer_chunk(a, y, j0, acc[j0 / W], cbits[j0 / W]);
            }
            first += static_cast<std::size_t>(__builtin_popcount(m));
        }
    }
}

// A started chunk's running blend (its layers all folded) written to the pose at j0: its lanes
// without a state keep the pose's bits (their running blend is the pose as read).
SLANIM_LANES_INLINE void write_chunk(const LayerFoldArgs& a, const ChunkAcc& acc, const ChunkBits& cb, std::size_t j0) {
    Chunk b;
    b.lanes = a.joints - j0 < W ? static_cast<int>(a.joints - j0) : W;
    for (int k = 0; k < 4; ++k) b.r[k] = b.in_r[k] = acc.r[k];
    for (int k = 0; k < 3; ++k) b.p[k] = b.in_p[k] = acc.p[k];
    b.blended = lane_mask(cb.blended);
    finish_chunk(b, a.rotations + j0, a.positions + j0);
}

// Whether the n layers in slot order fold as one dense run (fold_dense_run): every one live
// with rotations and positions, on the first's joints with the first's usages (so the same
// blocks, masks and components: dense_pair with the first; a shape compared to itself or by
// two memcmp, not block by block).
inline bool dense_run(const BlendLayer* const* order, int n) {
    if (n < 2) return false;  // (one layer: fold_by_layer's loop, as cheap)
    const LayerShape& s0 = *order[0]->shape;
    for (int i = 0; i < n; ++i) {
        const BlendLayer& x = *order[i];
        if (x.weight == 0.f || !x.rotations || !x.positions) return false;
        const LayerShape& s = *x.shape;
        if (&s == &s0) continue;
        if (s.joints.size() != s0.joints.size() || s.usages.size() != s0.usages.size() ||
            std::memcmp(s.joints.data(), s0.joints.data(), s.joints.size() * sizeof(std::int16_t)) != 0 ||
            std::memcmp(s.usages.data(), s0.usages.data(), s.usages.size()) != 0)
            return false;
    }
    return true;
}

// C (1 or 2) consecutive full dense chunks of a dense run, at j0, j0 + W: the n layers' states
// from `track` on (the same track index in every layer: their blocks and masks are the same, so
// are the tracks before each block) folded in slot order with the running blends in registers,
// then written to the pose (every lane blended: the first layer covers the chunks, so the pose
// is not read). Two chunks fold side by side, layer by layer, so one chunk's dependency chain
// (the nlerp's square root and division) overlaps the other's; the loops over them are unrolled
// (else GCC keeps both blends in memory). The same operations as fold_dense_pair's: the position
// and rotation sums start equal and take the same capped sums, so they keep the same bits and
// one sum serves both.
template <int C>
SLANIM_LANES_INLINE void fold_dense_chunks(const LayerFoldArgs& a, const BlendLayer* const* order, int n,
                                           std::size_t track, std::size_t j0) {
    Chunk b[C];
#pragma GCC unroll 2
    for (int c = 0; c < C; ++c) {
        quats_in(order[0]->rotations + track + c * W, b[c].r);
        vec3s_in(order[0]->positions + track + c * W, b[c].p);
        b[c].sum_pos = set1(order[0]->weight);
    }
    for (int i = 1; i < n; ++i) {
        const BlendLayer& layer = *order[i];
#pragma GCC unroll 2
        for (int c = 0; c < C; ++c) {
            State s;
            vec3s_in(layer.positions + track + c * W, s.p);
            quats_in(layer.rotations + track + c * W, s.r);
            s.w = set1(layer.weight);
            const F nw = capped_sum(s.w, b[c].sum_pos), t = ratio(kAllLanes, b[c].sum_pos, nw);
            continue_positions(b[c], s, kAllLanes, nw, t);
            continue_rotations(b[c], s, kAllLanes, nw, t);
        }
    }
#pragma GCC unroll 2
    for (int c = 0; c < C; ++c) {
        F q[4], out_p[3];
        compose_identity(b[c].r, q);
        for (int k = 0; k < 3; ++k) out_p[k] = add(b[c].p[k], zero());
        quats_out(q, a.rotations + j0 + c * W);
        vec3s_out(out_p, a.positions + j0 + c * W);
    }
}

// A dense run (dense_run) block by block, each chunk finished before the next: full dense chunks
// fold all n layers at once in registers (fold_dense_chunks, two at a time where two follow);
// the others (partial chunks, blocks without both components) take fold_layer_chunk layer
// after layer with their running blend on the stack. No fold scratch.
inline void fold_dense_run(const LayerFoldArgs& a, const BlendLayer* const* order, int n) {
    const std::vector<LayerBlock>& blocks = order[0]->shape->blocks;
    for (std::size_t k = 0; k < blocks.size(); ++k) {
        const LayerBlock& lb = blocks[k];
        const std::size_t block_j0 = std::size_t{lb.block} * 16;
        if (block_j0 >= a.joints) break;
        const std::size_t left = a.joints - block_j0;
        unsigned mask = left >= 16 ? lb.mask : lb.mask & ((1u << left) - 1u);
        std::size_t first = lb.first;
        const bool dense = (lb.usage_all & (kUsageRot | kUsagePos)) == (kUsageRot | kUsagePos);
        for (std::size_t j0 = block_j0; mask; j0 += W, mask >>= W) {
            const unsigned m = mask & kAllLanes;
            if (!m) continue;
            if (m == kAllLanes && dense) {
                if (((mask >> W) & kAllLanes) == kAllLanes) {  // the next chunk too: two chains at once
                    fold_dense_chunks<2>(a, order, n, first, j0);
                    first += 2 * W, j0 += W, mask >>= W;
                    continue;
                }
                fold_dense_chunks<1>(a, order, n, first, j0);
            } else {  // every layer of the run on this chunk, then written
                ChunkAcc acc{};
                ChunkBits cb{};
                for (int i = 0; i < n; ++i)
                    fold_layer_chunk(a, Present{order[i], &order[i]->shape->blocks[k], m, first}, j0, acc, cb);
                write_chunk(a, acc, cb, j0);
            }
            first += static_cast<std::size_t>(__builtin_popcount(m));
        }
    }
}

inline void fold_by_layer(const LayerFoldArgs& a, const BlendLayer* const* order, int n) {
    if (dense_run(order, n)) return fold_dense_run(a, order, n);
    const std::size_t chunks = (a.joints + W - 1) / W;
    auto* acc = static_cast<ChunkAcc*>(a.scratch);
    auto* cbits = reinterpret_cast<ChunkBits*>(acc + chunks);
    std::memset(static_cast<void*>(cbits), 0, chunks * sizeof(ChunkBits));
    for (int i = 0; i < n; ++i) {
        const BlendLayer& layer = *order[i];
        if (i + 1 < n && dense_pair(layer, *order[i + 1])) {  // the next layer on the same joints too
            fold_layer_pair(a, layer, *order[i + 1], acc, cbits);
            ++i;
            continue;
        }
        for (const LayerBlock& lb : layer.shape->blocks) {
            const std::size_t block_j0 = std::size_t{lb.block} * 16;
            if (block_j0 >= a.joints) break;
            const std::size_t left = a.joints - block_j0;
            unsigned mask = left >= 16 ? lb.mask : lb.mask & ((1u << left) - 1u);
            std::size_t first = lb.first;
            for (std::size_t j0 = block_j0; mask; j0 += W, mask >>= W) {
                const unsigned m = mask & kAllLanes;
                if (!m) continue;
                fold_layer_chunk(a, Present{&layer, &lb, m, first}, j0, acc[j0 / W], cbits[j0 / W]);
                first += static_cast<std::size_t>(__builtin_popcount(m));
            }
        }
    }
    for (std::size_t c = 0; c < chunks; ++c) {
        if (!cbits[c].started) continue;
        Chunk b;
        b.lanes = a.joints - c * W < W ? static_cast<int>(a.joints - c * W) : W;
        for (int k = 0; k < 4; ++k) b.r[k] = b.in_r[k] = acc[c].r[k];
        for (int k = 0; k < 3; ++k) b.p[k] = b.in_p[k] = acc[c].p[k];
        b.blended = lane_mask(cbits[c].blended);
        finish_chunk(b, a.rotations + c * W, a.positions + c * W);
    }
}

// PoseBlender's fold straight from recorded layers (no additive layer, no scales, nothing added
// otherwise). Block by block of 16 joints (its layers found once), two chunks at a time, step by
// step, so one chunk's dependency chain (division, square root, division, each waiting on the
// previous state) overlaps the other's.
inline void fold_layers_impl(const LayerFoldArgs& a) {
    const BlendLayer* order[PoseBlender::kSlots];
    const int by_layer = layers_in_slot_order(a, order);
    if (by_layer >= 0) return fold_by_layer(a, order, by_layer);
    std::size_t cursor[PoseBlender::kMaxDeferred] = {};
    BlockLayers bl;
    ChunkWork w[2];
    for (std::size_t block = 0; block < a.joints; block += 16) {
        if (!block_layers(a, block, cursor, bl)) continue;
        for (std::size_t j0 = block; j0 < block + 16 && j0 < a.joints; j0 += 2 * W) {
            int ready = 0;
            for (std::size_t j = j0; j < j0 + 2 * W && j < a.joints; j += W)
                if (prepare_chunk(a, bl, j, w[ready])) ++ready;
            if (ready == 0) continue;
            const int n = ready == 2 && w[1].steps > w[0].steps ? w[1].steps : w[0].steps;
            Chunk b0 = w[0].b, b1 = w[1].b;
            for (int s = 0; s < n; ++s) {
                if (s < w[0].steps) fold_step(w[0], b0, s);
                if (ready == 2 && s < w[1].steps) fold_step(w[1], b1, s);
            }
            finish_chunk(b0, a.rotations + b0.j0, a.positions + b0.j0);
            if (ready == 2) finish_chunk(b1, a.rotations + b1.j0, a.positions + b1.j0);
        }
    }
}

#undef SLANIM_LANES_INLINE

}  // namespace slanim::blend_detail::SLANIM_BLEND_LANES_NS
