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
    std::int32_t o = 0;
    for (int l = 0; l < kLanes; ++l) o |= m[l];
    return o != 0;
}
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

void fold(const FoldArgs& a) {
    constexpr int R = PoseBlender::kFields;
    const vf one = vf{} + 1.f, zero = vf{};
    const vf mag_threshold = vf{} + 0.0000001f, one_ppm = vf{} + 0.000001f;
    alignas(64) float cur[7][kLanes];
    for (std::size_t j0 = 0; j0 < a.joints; j0 += kLanes) {
        // Lanes this block blends: joints with states and no additive or scaled one.
        alignas(64) std::int32_t count[kLanes];
        std::uint32_t active = 0;
        int nmax = 0;
        for (int l = 0; l < kLanes; ++l) {
            const std::size_t j = j0 + static_cast<std::size_t>(l);
            const int c = (j < a.joints && !a.scalar[j]) ? a.counts[j] : 0;
            count[l] = c;
            if (c) active |= 1u << l, nmax = c > nmax ? c : nmax;
        }
        if (!active) continue;
        // Every lane of the block reads its joint's pose (no branch per lane: the active lanes
        // vary from block to block) and writes it back below, unchanged where inactive.
        const int lanes = a.joints - j0 < kLanes ? static_cast<int>(a.joints - j0) : kLanes;
        for (int l = 0; l < kLanes; ++l) {
            const std::size_t j = j0 + static_cast<std::size_t>(l < lanes ? l : 0);
            const Quat q = a.rotations[j];
            const Vec3 p = a.positions[j];
            cur[0][l] = q.x, cur[1][l] = q.y, cur[2][l] = q.z, cur[3][l] = q.w;
            cur[4][l] = p.x, cur[5][l] = p.y, cur[6][l] = p.z;
        }
        vf rx = load(cur[0]), ry = load(cur[1]), rz = load(cur[2]), rw = load(cur[3]);
        vf px = load(cur[4]), py = load(cur[5]), pz = load(cur[6]);
        const vf orx = rx, ory = ry, orz = rz, orw = rw, opx = px, opy = py, opz = pz;
        vf sum_pos = zero, sum_rot = zero;
        vi has_pos = vi{}, has_rot = vi{};
        vi lane_count;
        std::memcpy(&lane_count, count, sizeof lane_count);
        const vi blended = lane_count > 0;

        for (int s = 0; s < nmax; ++s) {
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
                const vf ws = w + sum_pos;
                const vf nw = ws < one ? ws : one;
                const vf u = sum_pos / nw;
                const vf lx = bx + (px - bx) * u, ly = by + (py - by) * u, lz = bz + (pz - bz) * u;
                px = first ? bx : (cont ? lx : px);
                py = first ? by : (cont ? ly : py);
                pz = first ? bz : (cont ? lz : pz);
                sum_pos = first ? w : (cont ? nw : sum_pos);
                has_pos |= pmask;
            }
            // Rotations: the first contributor copies, later ones ll_nlerp(sum / new sum, state,
            // blended).
            if (any(rmask)) {
                const vf ax = load(v + PoseBlender::kRx * a.stride), ay = load(v + PoseBlender::kRy * a.stride),
                         az = load(v + PoseBlender::kRz * a.stride), aw = load(v + PoseBlender::kRw * a.stride);
                const vi first = rmask & ~has_rot, cont = rmask & has_rot;
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
                    for (int l = 0; l < kLanes; ++l) {
                        if (!opposite[l]) continue;
                        const Quat q = ll_slerp(t[l], Quat{ax[l], ay[l], az[l], aw[l]}, Quat{rx[l], ry[l], rz[l], rw[l]});
                        lx[l] = q.x, ly[l] = q.y, lz[l] = q.z, lw[l] = q.w;
                    }
                }
                rx = first ? ax : (cont ? lx : rx);
                ry = first ? ay : (cont ? ly : ry);
                rz = first ? az : (cont ? lz : rz);
                rw = first ? aw : (cont ? lw : rw);
                sum_rot = first ? w : (cont ? nw : sum_rot);
                has_rot |= rmask;
            }
        }
        // blend_one's ending: blended + zero added position; ll_mul(identity added rotation,
        // blended) with ll_mul's operations (a = identity: b.w·0 + b.x·1 + b.y·0 − b.z·0, ...).
        // Lanes not blended here keep their pose's bits.
        const vf ox = blended ? px + zero : opx, oy = blended ? py + zero : opy, oz = blended ? pz + zero : opz;
        const vf qx = blended ? ((rw * zero + rx * one) + ry * zero) - rz * zero : orx;
        const vf qy = blended ? ((rw * zero + ry * one) + rz * zero) - rx * zero : ory;
        const vf qz = blended ? ((rw * zero + rz * one) + rx * zero) - ry * zero : orz;
        const vf qw = blended ? ((rw * one - rx * zero) - ry * zero) - rz * zero : orw;
        for (int l = 0; l < lanes; ++l) {
            const std::size_t j = j0 + static_cast<std::size_t>(l);
            a.positions[j] = Vec3{ox[l], oy[l], oz[l]};
            a.rotations[j] = Quat{qx[l], qy[l], qz[l], qw[l]};
        }
    }
}

}  // namespace slanim::blend_detail::SLANIM_BLEND_KERNEL_NS

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
