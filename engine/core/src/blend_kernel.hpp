// SPDX-License-Identifier: MIT
// AVX-512 helpers of the PoseBlender's vector kernels (private), included by blend_avx512.cpp
// (compiled with -mavx512f...) inside the namespace named by SLANIM_BLEND_KERNEL_NS, so no
// other translation unit shares their symbols: 16 joints per block, one lane per joint, the
// pose moved between its AoS arrays and SoA registers (vpermt2ps tables). The fold itself
// (blend_avx512.cpp) performs for every lane the float operations of PoseBlender::blend_one (the
// viewer's LLJointStateBlender::blendJointStates for non-additive states without scale) in the
// same order; IEEE single precision, no FMA (-ffp-contract=off), so results are bit-identical
// to the scalar code. The AVX2 and SSE2 paths are in blend_lanes.hpp.
#pragma once

#include <cstdint>
#include <cstring>

#include <immintrin.h>

#include "blend_args.hpp"
#include "slanim/core/track_usage.hpp"

// 64-byte vectors pass through inline helpers only; GCC warns about the ABI such a function
// would have without AVX-512.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace slanim::blend_detail::SLANIM_BLEND_KERNEL_NS {

typedef float vf __attribute__((vector_size(64)));

// The pose of one block of 16 joints, AoS in memory, SoA in registers: lanes [0, lanes) are
// read and written, lanes beyond hold zeros (loads) and are not stored.
struct BlockPose {
    vf rx, ry, rz, rw, px, py, pz;
};
// Permutation tables for vpermt2ps (indices 0-15 pick the first source, 16-31 the second).
struct Perm {
    alignas(64) std::int32_t i[16];
};
constexpr Perm quat_pair(int first) {  // x (or z) of 8 quaternions, then y (or w)
    Perm p{};
    for (int l = 0; l < 8; ++l) p.i[l] = 4 * l + first, p.i[8 + l] = 4 * l + first + 1;
    return p;
}
constexpr Perm halves(int which) {  // low (0) or high (8) halves of both sources
    Perm p{};
    for (int l = 0; l < 8; ++l) p.i[l] = which + l, p.i[8 + l] = 16 + which + l;
    return p;
}
constexpr Perm quat_interleave(int q0) {  // quaternions q0..q0+3 from [x|y] and [z|w] halves
    Perm p{};
    for (int l = 0; l < 4; ++l)
        p.i[4 * l] = q0 + l, p.i[4 * l + 1] = 8 + q0 + l, p.i[4 * l + 2] = 16 + q0 + l,
                p.i[4 * l + 3] = 24 + q0 + l;
    return p;
}
constexpr Perm vec3_gather(int c, int step) {  // component c of 16 Vec3: step 0 (floats 0-31), 1
    Perm p{};
    for (int l = 0; l < 16; ++l) {
        const int f = 3 * l + c;
        p.i[l] = step == 0 ? (f < 32 ? f : 0) : (f < 32 ? l : f - 16);
    }
    return p;
}
constexpr Perm vec3_scatter(int k, int step) {  // floats 16k..16k+15 of 16 Vec3 from x, y, z
    Perm p{};
    for (int m = 0; m < 16; ++m) {
        const int f = 16 * k + m, lane = f / 3, c = f % 3;
        p.i[m] = step == 0 ? (c == 0 ? lane : c == 1 ? 16 + lane : 0) : (c == 2 ? 16 + lane : m);
    }
    return p;
}
inline __m512i perm(const Perm& p) { return _mm512_load_si512(p.i); }
inline __mmask16 first_floats(int n) {  // mask of the first n (clamped to [0, 16]) floats
    return n <= 0 ? __mmask16{0} : n >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << n) - 1u);
}
inline vf as_vf(__m512 x) { return reinterpret_cast<vf>(x); }
inline __m512 as_m(vf x) { return reinterpret_cast<__m512>(x); }

// n (≤ 16) quaternions from memory into SoA registers; lanes ≥ n read as zero.
inline void load_quats(const Quat* r, int n, vf& x, vf& y, vf& z, vf& w) {
    static constexpr Perm kXY = quat_pair(0), kZW = quat_pair(2), kLo = halves(0), kHi = halves(8);
    const float* f = &r->x;
    __m512 q[4];
    for (int k = 0; k < 4; ++k) q[k] = _mm512_maskz_loadu_ps(first_floats(4 * n - 16 * k), f + 16 * k);
    const __m512 xy0 = _mm512_permutex2var_ps(q[0], perm(kXY), q[1]), zw0 = _mm512_permutex2var_ps(q[0], perm(kZW), q[1]);
    const __m512 xy1 = _mm512_permutex2var_ps(q[2], perm(kXY), q[3]), zw1 = _mm512_permutex2var_ps(q[2], perm(kZW), q[3]);
    x = as_vf(_mm512_permutex2var_ps(xy0, perm(kLo), xy1));
    y = as_vf(_mm512_permutex2var_ps(xy0, perm(kHi), xy1));
    z = as_vf(_mm512_permutex2var_ps(zw0, perm(kLo), zw1));
    w = as_vf(_mm512_permutex2var_ps(zw0, perm(kHi), zw1));
}
// n (≤ 16) Vec3 from memory into SoA registers; lanes ≥ n read as zero.
inline void load_vec3s(const Vec3* p, int n, vf& x, vf& y, vf& z) {
    static constexpr Perm kV[3][2] = {{vec3_gather(0, 0), vec3_gather(0, 1)},
                                      {vec3_gather(1, 0), vec3_gather(1, 1)},
                                      {vec3_gather(2, 0), vec3_gather(2, 1)}};
    const float* f = &p->x;
    __m512 v[3];
    for (int k = 0; k < 3; ++k) v[k] = _mm512_maskz_loadu_ps(first_floats(3 * n - 16 * k), f + 16 * k);
    vf* out[3] = {&x, &y, &z};
    for (int c = 0; c < 3; ++c)
        *out[c] = as_vf(_mm512_permutex2var_ps(_mm512_permutex2var_ps(v[0], perm(kV[c][0]), v[1]), perm(kV[c][1]), v[2]));
}
inline BlockPose load_pose(const Quat* r, const Vec3* p, int lanes) {
    BlockPose b;
    load_quats(r, lanes, b.rx, b.ry, b.rz, b.rw);
    load_vec3s(p, lanes, b.px, b.py, b.pz);
    return b;
}
// The largest of 16 unsigned bytes.
inline int hmax_u8(__m128i c) {
    __m128i m = _mm_max_epu8(c, _mm_srli_si128(c, 8));
    m = _mm_max_epu8(m, _mm_srli_si128(m, 4));
    m = _mm_max_epu8(m, _mm_srli_si128(m, 2));
    m = _mm_max_epu8(m, _mm_srli_si128(m, 1));
    return _mm_cvtsi128_si32(m) & 0xFF;
}
inline void store_pose(const BlockPose& b, Quat* r, Vec3* p, int lanes) {
    static constexpr Perm kLo = halves(0), kHi = halves(8);
    static constexpr Perm kQ[2] = {quat_interleave(0), quat_interleave(4)};
    static constexpr Perm kS[3][2] = {{vec3_scatter(0, 0), vec3_scatter(0, 1)},
                                      {vec3_scatter(1, 0), vec3_scatter(1, 1)},
                                      {vec3_scatter(2, 0), vec3_scatter(2, 1)}};
    float* rf = &r->x;
    float* pf = &p->x;
    const __m512 xy0 = _mm512_permutex2var_ps(as_m(b.rx), perm(kLo), as_m(b.ry));
    const __m512 xy1 = _mm512_permutex2var_ps(as_m(b.rx), perm(kHi), as_m(b.ry));
    const __m512 zw0 = _mm512_permutex2var_ps(as_m(b.rz), perm(kLo), as_m(b.rw));
    const __m512 zw1 = _mm512_permutex2var_ps(as_m(b.rz), perm(kHi), as_m(b.rw));
    const __m512 q[4] = {_mm512_permutex2var_ps(xy0, perm(kQ[0]), zw0), _mm512_permutex2var_ps(xy0, perm(kQ[1]), zw0),
                         _mm512_permutex2var_ps(xy1, perm(kQ[0]), zw1), _mm512_permutex2var_ps(xy1, perm(kQ[1]), zw1)};
    for (int k = 0; k < 4; ++k) _mm512_mask_storeu_ps(rf + 16 * k, first_floats(4 * lanes - 16 * k), q[k]);
    for (int k = 0; k < 3; ++k) {
        const __m512 u = _mm512_permutex2var_ps(as_m(b.px), perm(kS[k][0]), as_m(b.py));
        _mm512_mask_storeu_ps(pf + 16 * k, first_floats(3 * lanes - 16 * k),
                              _mm512_permutex2var_ps(u, perm(kS[k][1]), as_m(b.pz)));
    }
}
}  // namespace slanim::blend_detail::SLANIM_BLEND_KERNEL_NS

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
