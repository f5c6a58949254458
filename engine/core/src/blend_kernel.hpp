// SPDX-License-Identifier: MIT
// The PoseBlender's vector fold (private). Included by blend.cpp (baseline ISA) and
// blend_avx512.cpp (compiled with -mavx512f...) inside a namespace named by
// SLANIM_BLEND_KERNEL_NS, so each translation unit gets its own copy for its ISA.
//
// 16 joints per block, one lane per joint, written with GCC/Clang vector extensions: the
// compiler lowers a 16-float vector to one AVX-512 register or four SSE registers. Every lane
// performs the float operations of PoseBlender::blend_one (the viewer's
// LLJointStateBlender::blendJointStates for non-additive states without scale) in the same
// order: the priority-ordered fold of ll_nlerp over rotations and of lerp over positions, the
// first-contributor copy and the capacity-limited weights, then the composition with the
// identity additive terms. IEEE single precision, no FMA (-ffp-contract=off), so results are
// bit-identical to the scalar code. Lanes whose two quaternions lie in opposite hemispheres take
// the scalar ll_slerp, as ll_nlerp does.
#pragma once

#include <cstdint>
#include <cstring>
#include <new>

#include <immintrin.h>

#include "slanim/core/blend.hpp"
#include "slanim/core/clip.hpp"

namespace slanim::blend_detail {

/// What the kernel reads and writes (PoseBlender's arrays, blend.cpp).
struct FoldArgs {
    const float* values = nullptr;           // kSlots × kFields × stride
    const std::uint8_t* flags = nullptr;     // kSlots × stride: usage bits
    const std::uint8_t* counts = nullptr;    // stride
    const std::uint8_t* scalar = nullptr;    // stride: 1 → the scalar code blends this joint
    std::size_t stride = 0;
    std::size_t joints = 0;                  // joints to visit (≤ stride, ≤ pose size)
    // The pose as raw pointers: no inline library function (std::span::operator[]) is
    // instantiated in the AVX-512 translation unit, where the linker could pick its copy for
    // every caller.
    Vec3* positions = nullptr;
    Quat* rotations = nullptr;
    // Room for the running blend of every block: kFoldBlockBytes per 16 joints, 64-byte aligned.
    void* scratch = nullptr;
};
/// Bytes of fold scratch per block of 16 joints (static_assert in the kernel).
constexpr std::size_t kFoldBlockBytes = 1280;

/// What PoseBlender::add_layer's vector insertion reads and writes (blend_avx512.cpp).
struct InsertArgs {
    float* values = nullptr;              // kSlots × kFields × stride
    std::int8_t* priorities = nullptr;    // kSlots × stride
    std::uint8_t* flags = nullptr;        // kSlots × stride
    std::uint8_t* counts = nullptr;       // stride
    std::uint8_t* scalar = nullptr;       // stride
    bool* any_scalar = nullptr;           // set when a scalar entry is set
    std::size_t stride = 0;
    int num_joints = 0;
};

/// What the AVX-512 fold straight from recorded layers reads and writes (blend_avx512.cpp).
struct LayerFoldArgs {
    const BlendLayer* layers = nullptr;  // in the order offered; none additive, none with scales
    int count = 0;
    std::size_t joints = 0;              // joints to visit (≤ the blender's, ≤ pose size)
    Vec3* positions = nullptr;
    Quat* rotations = nullptr;
};

}  // namespace slanim::blend_detail

// 64-byte vectors pass through inline helpers only; GCC warns about the ABI such a function
// would have without AVX-512.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace slanim::blend_detail::SLANIM_BLEND_KERNEL_NS {

constexpr int kLanes = 16;
typedef float vf __attribute__((vector_size(64)));
typedef std::int32_t vi __attribute__((vector_size(64)));

inline vf load(const float* p) {
    vf v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
inline vi widen(const std::uint8_t* p) {
    vi v;
    for (int l = 0; l < kLanes; ++l) v[l] = p[l];
    return v;
}
inline bool any(vi m) {
#if defined(__AVX512F__)
    return _mm512_test_epi32_mask(reinterpret_cast<__m512i>(m), reinterpret_cast<__m512i>(m)) != 0;
#else
    std::int32_t o = 0;
    for (int l = 0; l < kLanes; ++l) o |= m[l];
    return o != 0;
#endif
}

// The pose of one block of 16 joints, AoS in memory, SoA in registers: lanes [0, lanes) are
// read and written, lanes beyond hold zeros (loads) and are not stored.
struct BlockPose {
    vf rx, ry, rz, rw, px, py, pz;
};
#if defined(__AVX512F__)
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
#else
inline BlockPose load_pose(const Quat* r, const Vec3* p, int lanes) {
    alignas(64) float cur[7][kLanes] = {};
    for (int l = 0; l < lanes; ++l) {
        cur[0][l] = r[l].x, cur[1][l] = r[l].y, cur[2][l] = r[l].z, cur[3][l] = r[l].w;
        cur[4][l] = p[l].x, cur[5][l] = p[l].y, cur[6][l] = p[l].z;
    }
    return {load(cur[0]), load(cur[1]), load(cur[2]), load(cur[3]), load(cur[4]), load(cur[5]), load(cur[6])};
}
inline void store_pose(const BlockPose& b, Quat* r, Vec3* p, int lanes) {
    for (int l = 0; l < lanes; ++l) {
        r[l] = Quat{b.rx[l], b.ry[l], b.rz[l], b.rw[l]};
        p[l] = Vec3{b.px[l], b.py[l], b.pz[l]};
    }
}
#endif
// The generic fold (below) and its helpers. blend_avx512.cpp has its own, with mask registers.
#if !defined(SLANIM_BLEND_OWN_FOLD)
inline vf vsqrt(vf x) {
#if defined(__AVX512F__)
    // maskz: GCC 12 reports _mm512_sqrt_ps's undefined pass-through as maybe-uninitialized.
    return reinterpret_cast<vf>(_mm512_maskz_sqrt_ps(0xFFFF, reinterpret_cast<__m512>(x)));
#else
    __m128 p[4];
    std::memcpy(p, &x, sizeof x);
    for (__m128& q : p) q = _mm_sqrt_ps(q);
    vf r;
    std::memcpy(&r, p, sizeof r);
    return r;
#endif
}

// One block of 16 joints in the fold: its pose as read, the running blend and its sums.
struct Block {
    std::size_t j0 = 0;
    int lanes = 0, nmax = 0;
    vi lane_count, has_pos, has_rot;
    vf rx, ry, rz, rw, px, py, pz, sum_pos, sum_rot;
    BlockPose in;
};

// Reads block j0's counts and pose; false when none of its lanes is blended here.
inline bool begin_block(const FoldArgs& a, std::size_t j0, Block& b) {
    b.j0 = j0;
    b.lanes = a.joints - j0 < kLanes ? static_cast<int>(a.joints - j0) : kLanes;
    // Lanes this block blends: joints with states and no additive or scaled one.
#if defined(__AVX512F__)
    // (maskz forms: GCC 12 reports the plain ones' undefined pass-through as uninitialized.)
    const __m128i counts = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a.counts + j0));
    const __m128i scalar = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a.scalar + j0));
    const __m128i c = _mm_maskz_mov_epi8(_mm_testn_epi8_mask(scalar, scalar) & first_floats(b.lanes), counts);
    b.lane_count = reinterpret_cast<vi>(_mm512_maskz_cvtepu8_epi32(0xFFFF, c));
    b.nmax = hmax_u8(c);
#else
    b.nmax = 0;
    for (int l = 0; l < kLanes; ++l) {
        const std::size_t j = j0 + static_cast<std::size_t>(l);
        const int c = (l < b.lanes && !a.scalar[j]) ? a.counts[j] : 0;
        b.lane_count[l] = c;
        b.nmax = c > b.nmax ? c : b.nmax;
    }
#endif
    if (b.nmax == 0) return false;
    // Every lane of the block reads its joint's pose (no branch per lane: the active lanes vary
    // from block to block) and writes it back in end_block, unchanged where inactive.
    b.in = load_pose(a.rotations + j0, a.positions + j0, b.lanes);
    b.rx = b.in.rx, b.ry = b.in.ry, b.rz = b.in.rz, b.rw = b.in.rw;
    b.px = b.in.px, b.py = b.in.py, b.pz = b.in.pz;
    b.sum_pos = vf{}, b.sum_rot = vf{};
    b.has_pos = vi{}, b.has_rot = vi{};
    return true;
}

// 16 quaternions, SoA.
struct Quats {
    vf x, y, z, w;
};
// ll_slerp(t, a, b) in the lanes of `lanes` (ll_nlerp's branch for opposite hemispheres; rare).
// Out of line, so the fold's registers are not spilled for it.
__attribute__((noinline)) Quats slerp_lanes(vi lanes, vf t, Quats a, Quats b) {
    Quats r{};
    for (int l = 0; l < kLanes; ++l) {
        if (!lanes[l]) continue;
        const Quat q = ll_slerp(t[l], Quat{a.x[l], a.y[l], a.z[l], a.w[l]}, Quat{b.x[l], b.y[l], b.z[l], b.w[l]});
        r.x[l] = q.x, r.y[l] = q.y, r.z[l] = q.z, r.w[l] = q.w;
    }
    return r;
}

// Folds slot s of every lane of the block into its blend (blend_one's loop body).
__attribute__((always_inline)) inline void fold_slot(const FoldArgs& a, Block& blk, int s) {
    constexpr int R = PoseBlender::kFields;
    const vf one = vf{} + 1.f, zero = vf{};
    const vf mag_threshold = vf{} + 0.0000001f, one_ppm = vf{} + 0.000001f;
    const std::size_t j0 = blk.j0;
    vf &rx = blk.rx, &ry = blk.ry, &rz = blk.rz, &rw = blk.rw, &px = blk.px, &py = blk.py, &pz = blk.pz;
    vf &sum_pos = blk.sum_pos, &sum_rot = blk.sum_rot;
    vi &has_pos = blk.has_pos, &has_rot = blk.has_rot;
    const vi lane_count = blk.lane_count;
    const float* v = a.values + static_cast<std::size_t>(s) * R * a.stride + j0;
    const vf w = load(v + PoseBlender::kWeight * a.stride);
    const vi usage = widen(a.flags + static_cast<std::size_t>(s) * a.stride + j0);
    const vi live = (vi{} + s < lane_count) & (w != zero);
    const vi rmask = live & ((usage & std::int32_t{kUsageRot}) != 0);
    const vi pmask = live & ((usage & std::int32_t{kUsagePos}) != 0);

    // Positions: the first contributor copies, later ones lerp(state, blended, sum / new sum).
    if (any(pmask)) {
        const vf bx = load(v + PoseBlender::kPx * a.stride), by = load(v + PoseBlender::kPy * a.stride),
                 bz = load(v + PoseBlender::kPz * a.stride);
        const vi first = pmask & ~has_pos, cont = pmask & has_pos;
        if (any(cont)) {  // (none in a joint's first slot: no division needed there)
            const vf ws = w + sum_pos;
            const vf nw = ws < one ? ws : one;
            const vf u = sum_pos / nw;
            const vf lx = bx + (px - bx) * u, ly = by + (py - by) * u, lz = bz + (pz - bz) * u;
            px = cont ? lx : px, py = cont ? ly : py, pz = cont ? lz : pz;
            sum_pos = cont ? nw : sum_pos;
        }
        px = first ? bx : px, py = first ? by : py, pz = first ? bz : pz;
        sum_pos = first ? w : sum_pos;
        has_pos |= pmask;
    }
    // Rotations: the first contributor copies, later ones ll_nlerp(sum / new sum, state,
    // blended).
    if (any(rmask)) {
        const vf ax = load(v + PoseBlender::kRx * a.stride), ay = load(v + PoseBlender::kRy * a.stride),
                 az = load(v + PoseBlender::kRz * a.stride), aw = load(v + PoseBlender::kRw * a.stride);
        const vi first = rmask & ~has_rot, cont = rmask & has_rot;
        if (any(cont)) {
            const vf ws = w + sum_rot;
            const vf nw = ws < one ? ws : one;
            const vf t = sum_rot / nw;
            const vf inv_t = one - t;
            vf lx = t * rx + inv_t * ax, ly = t * ry + inv_t * ay, lz = t * rz + inv_t * az,
               lw = t * rw + inv_t * aw;
            const vf mag = vsqrt(((lx * lx + ly * ly) + lz * lz) + lw * lw);
            const vf oomag = one / mag;
            const vf dev = one - mag;
            const vi rescale = reinterpret_cast<vi>(dev) & 0x7FFFFFFF;  // |1 − mag| as bits
            const vi big = mag > mag_threshold;
            const vi scale_it = reinterpret_cast<vf>(rescale) > one_ppm;
            lx = big ? (scale_it ? lx * oomag : lx) : zero;
            ly = big ? (scale_it ? ly * oomag : ly) : zero;
            lz = big ? (scale_it ? lz * oomag : lz) : zero;
            lw = big ? (scale_it ? lw * oomag : lw) : one;
            const vf d = ((ax * rx + ay * ry) + az * rz) + aw * rw;
            const vi opposite = cont & (d < zero);
            if (any(opposite)) {  // ll_nlerp takes ll_slerp there
                const Quats q = slerp_lanes(opposite, t, Quats{ax, ay, az, aw}, Quats{rx, ry, rz, rw});
                lx = opposite ? q.x : lx, ly = opposite ? q.y : ly, lz = opposite ? q.z : lz;
                lw = opposite ? q.w : lw;
            }
            rx = cont ? lx : rx, ry = cont ? ly : ry, rz = cont ? lz : rz, rw = cont ? lw : rw;
            sum_rot = cont ? nw : sum_rot;
        }
        rx = first ? ax : rx, ry = first ? ay : ry, rz = first ? az : rz, rw = first ? aw : rw;
        sum_rot = first ? w : sum_rot;
        has_rot |= rmask;
    }
}

// blend_one's ending: blended + zero added position; ll_mul(identity added rotation, blended)
// with ll_mul's operations (a = identity: b.w·0 + b.x·1 + b.y·0 − b.z·0, ...). Lanes not
// blended here keep their pose's bits.
inline void end_block(const FoldArgs& a, const Block& b) {
    const vf one = vf{} + 1.f, zero = vf{};
    const vi blended = b.lane_count > 0;
    const vf rx = b.rx, ry = b.ry, rz = b.rz, rw = b.rw;
    const vf ox = blended ? b.px + zero : b.in.px, oy = blended ? b.py + zero : b.in.py,
             oz = blended ? b.pz + zero : b.in.pz;
    const vf qx = blended ? ((rw * zero + rx * one) + ry * zero) - rz * zero : b.in.rx;
    const vf qy = blended ? ((rw * zero + ry * one) + rz * zero) - rx * zero : b.in.ry;
    const vf qz = blended ? ((rw * zero + rz * one) + rx * zero) - ry * zero : b.in.rz;
    const vf qw = blended ? ((rw * one - rx * zero) - ry * zero) - rz * zero : b.in.rw;
    store_pose(BlockPose{qx, qy, qz, qw, ox, oy, oz}, a.rotations + b.j0, a.positions + b.j0, b.lanes);
}

// Slot by slot over all blocks, not block by block: one block's slot is a long dependency
// chain (division, square root, division, each waiting on the previous slot), while different
// blocks are independent, so sweeping the blocks per slot lets the CPU overlap them. The running
// blends live in the scratch between sweeps.
void fold(const FoldArgs& a) {
    static_assert(sizeof(Block) <= kFoldBlockBytes && alignof(Block) <= 64, "PoseBlender sizes the fold scratch");
    Block* blocks = static_cast<Block*>(a.scratch);
    int nb = 0, smax = 0;
    for (std::size_t j0 = 0; j0 < a.joints; j0 += kLanes) {
        Block& b = *new (blocks + nb) Block;
        if (!begin_block(a, j0, b)) continue;
        smax = b.nmax > smax ? b.nmax : smax;
        ++nb;
    }
    for (int s = 0; s < smax; ++s)
        for (int i = 0; i < nb; ++i)
            if (s < blocks[i].nmax) fold_slot(a, blocks[i], s);
    for (int i = 0; i < nb; ++i) end_block(a, blocks[i]);
}
#endif

}  // namespace slanim::blend_detail::SLANIM_BLEND_KERNEL_NS

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
