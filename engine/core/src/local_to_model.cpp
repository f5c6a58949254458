// SPDX-License-Identifier: MIT
#include "slanim/core/local_to_model.hpp"

#include "isa_dispatch.hpp"
#include "slanim/core/skeleton.hpp"

#if defined(__SSE2__) || defined(_M_X64)
#define SLANIM_L2M_SSE2 1
#include <emmintrin.h>
#if SLANIM_HAS_AVX2_COPIES
#include <immintrin.h>
#endif
#else
#define SLANIM_L2M_SSE2 0
#endif

namespace slanim {

bool LocalToModelJob::validate() const {
    if (!skeleton) return false;
    const auto n = static_cast<std::size_t>(skeleton->num_joints());
    return local_positions.size() >= n && local_rotations.size() >= n && local_scales.size() >= n &&
           model_positions.size() >= n && model_rotations.size() >= n;
}

namespace {

#if SLANIM_L2M_SSE2
SLANIM_ALWAYS_INLINE __m128 load3(const Vec3& v) {
    // _mm_loadl_epi64 / _mm_storel_epi64 access 8 bytes through an unaligned type: a Vec3 is
    // only 4-byte aligned.
    return _mm_movelh_ps(_mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(&v.x))), _mm_load_ss(&v.z));
}
SLANIM_ALWAYS_INLINE void store3(Vec3& v, __m128 x) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(&v.x), _mm_castps_si128(x));
    _mm_store_ss(&v.z, _mm_movehl_ps(x, x));
}

// Four joints (all with a parent), one per SIMD lane: the scalar rotate(), scaled() and ll_mul()
// float operations in the same order (no FMA), so results are bit-identical to the scalar path.
// Inlined into both copies of run_depths().
SLANIM_ALWAYS_INLINE void four(const LocalToModelJob& job, const std::int16_t* j) {
    const auto parents = job.skeleton->parents();
    const auto local_positions = job.local_positions;
    const auto local_rotations = job.local_rotations;
    const auto local_scales = job.local_scales;
    const auto model_positions = job.model_positions;
    const auto model_rotations = job.model_rotations;
    int p[4];
    for (int l = 0; l < 4; ++l) p[l] = parents[static_cast<std::size_t>(j[l])];
    // Parent world rotation r and position, parent local scale s, local position a and rotation q.
    __m128 rx = _mm_loadu_ps(&model_rotations[p[0]].x), ry = _mm_loadu_ps(&model_rotations[p[1]].x),
           rz = _mm_loadu_ps(&model_rotations[p[2]].x), rw = _mm_loadu_ps(&model_rotations[p[3]].x);
    _MM_TRANSPOSE4_PS(rx, ry, rz, rw);
    __m128 ppx = load3(model_positions[p[0]]), ppy = load3(model_positions[p[1]]),
           ppz = load3(model_positions[p[2]]), ppw = load3(model_positions[p[3]]);
    _MM_TRANSPOSE4_PS(ppx, ppy, ppz, ppw);
    __m128 sx = load3(local_scales[p[0]]), sy = load3(local_scales[p[1]]), sz = load3(local_scales[p[2]]),
           sw = load3(local_scales[p[3]]);
    _MM_TRANSPOSE4_PS(sx, sy, sz, sw);
    __m128 ax = load3(local_positions[j[0]]), ay = load3(local_positions[j[1]]), az = load3(local_positions[j[2]]),
           aw = load3(local_positions[j[3]]);
    _MM_TRANSPOSE4_PS(ax, ay, az, aw);
    __m128 qx = _mm_loadu_ps(&local_rotations[j[0]].x), qy = _mm_loadu_ps(&local_rotations[j[1]].x),
           qz = _mm_loadu_ps(&local_rotations[j[2]].x), qw = _mm_loadu_ps(&local_rotations[j[3]].x);
    _MM_TRANSPOSE4_PS(qx, qy, qz, qw);
    const __m128 neg = _mm_set1_ps(-0.f);
    const auto mul = [](__m128 a, __m128 b) { return _mm_mul_ps(a, b); };
    const auto add = [](__m128 a, __m128 b) { return _mm_add_ps(a, b); };
    const auto sub = [](__m128 a, __m128 b) { return _mm_sub_ps(a, b); };
    // scaled(a, s)
    ax = mul(ax, sx), ay = mul(ay, sy), az = mul(az, sz);
    // rotate(a, r)
    const __m128 nrx = _mm_xor_ps(rx, neg), nry = _mm_xor_ps(ry, neg), nrz = _mm_xor_ps(rz, neg);
    const __m128 tw = sub(sub(mul(nrx, ax), mul(ry, ay)), mul(rz, az));
    const __m128 tx = sub(add(mul(rw, ax), mul(ry, az)), mul(rz, ay));
    const __m128 ty = sub(add(mul(rw, ay), mul(rz, ax)), mul(rx, az));
    const __m128 tz = sub(add(mul(rw, az), mul(rx, ay)), mul(ry, ax));
    const __m128 ntw = _mm_xor_ps(tw, neg);
    __m128 ox = add(add(sub(add(mul(ntw, rx), mul(tx, rw)), mul(ty, rz)), mul(tz, ry)), ppx);
    __m128 oy = add(add(sub(add(mul(ntw, ry), mul(ty, rw)), mul(tz, rx)), mul(tx, rz)), ppy);
    __m128 oz = add(add(sub(add(mul(ntw, rz), mul(tz, rw)), mul(tx, ry)), mul(ty, rx)), ppz);
    (void)nry, (void)nrz;
    // ll_mul(q, r): a = q (local), b = r (parent world)
    __m128 mx = sub(add(add(mul(rw, qx), mul(rx, qw)), mul(ry, qz)), mul(rz, qy));
    __m128 my = sub(add(add(mul(rw, qy), mul(ry, qw)), mul(rz, qx)), mul(rx, qz));
    __m128 mz = sub(add(add(mul(rw, qz), mul(rz, qw)), mul(rx, qy)), mul(ry, qx));
    __m128 mw = sub(sub(sub(mul(rw, qw), mul(rx, qx)), mul(ry, qy)), mul(rz, qz));
    _MM_TRANSPOSE4_PS(mx, my, mz, mw);
    _mm_storeu_ps(&model_rotations[j[0]].x, mx);
    _mm_storeu_ps(&model_rotations[j[1]].x, my);
    _mm_storeu_ps(&model_rotations[j[2]].x, mz);
    _mm_storeu_ps(&model_rotations[j[3]].x, mw);
    __m128 ow = _mm_setzero_ps();
    _MM_TRANSPOSE4_PS(ox, oy, oz, ow);
    store3(model_positions[j[0]], ox);
    store3(model_positions[j[1]], oy);
    store3(model_positions[j[2]], oz);
    store3(model_positions[j[3]], ow);
}

#if SLANIM_HAS_AVX2_COPIES
// Eight 4-float rows (lanes 0-3 of each) as their x, y, z, w columns over 8 lanes: rows l and
// 4 + l share a register, each 128-bit half transposed alike.
SLANIM_TARGET_AVX2 SLANIM_ALWAYS_INLINE void columns8(const __m128 (&row)[8], __m256 (&col)[4]) {
    __m256 r[4];
    for (int l = 0; l < 4; ++l) r[l] = _mm256_insertf128_ps(_mm256_castps128_ps256(row[l]), row[4 + l], 1);
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpacklo_ps(r[2], r[3]);
    const __m256 t2 = _mm256_unpackhi_ps(r[0], r[1]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    col[0] = _mm256_shuffle_ps(t0, t1, _MM_SHUFFLE(1, 0, 1, 0)), col[1] = _mm256_shuffle_ps(t0, t1, _MM_SHUFFLE(3, 2, 3, 2));
    col[2] = _mm256_shuffle_ps(t2, t3, _MM_SHUFFLE(1, 0, 1, 0)), col[3] = _mm256_shuffle_ps(t2, t3, _MM_SHUFFLE(3, 2, 3, 2));
}
// The inverse: four 8-lane columns back to eight 4-float rows.
SLANIM_TARGET_AVX2 SLANIM_ALWAYS_INLINE void rows8(const __m256 (&col)[4], __m128 (&row)[8]) {
    const __m256 t0 = _mm256_unpacklo_ps(col[0], col[1]), t1 = _mm256_unpacklo_ps(col[2], col[3]);
    const __m256 t2 = _mm256_unpackhi_ps(col[0], col[1]), t3 = _mm256_unpackhi_ps(col[2], col[3]);
    const __m256 r[4] = {_mm256_shuffle_ps(t0, t1, _MM_SHUFFLE(1, 0, 1, 0)), _mm256_shuffle_ps(t0, t1, _MM_SHUFFLE(3, 2, 3, 2)),
                         _mm256_shuffle_ps(t2, t3, _MM_SHUFFLE(1, 0, 1, 0)), _mm256_shuffle_ps(t2, t3, _MM_SHUFFLE(3, 2, 3, 2))};
    for (int l = 0; l < 4; ++l) row[l] = _mm256_castps256_ps128(r[l]), row[4 + l] = _mm256_extractf128_ps(r[l], 1);
}

// four() for eight joints of one depth (AVX2 registers): the same float operations per lane in
// the same order, so the same bits.
// Not inlined: its caller, run_depths(), is compiled for the baseline (called from run_avx2 only).
SLANIM_TARGET_AVX2 __attribute__((noinline)) void eight(const LocalToModelJob& job, const std::int16_t* j) {
    const auto parents = job.skeleton->parents();
    int p[8];
    for (int l = 0; l < 8; ++l) p[l] = parents[static_cast<std::size_t>(j[l])];
    __m128 row[8];
    __m256 r[4], pp[4], sc[4], a[4], q[4];
    for (int l = 0; l < 8; ++l) row[l] = _mm_loadu_ps(&job.model_rotations[p[l]].x);
    columns8(row, r);
    for (int l = 0; l < 8; ++l) row[l] = load3(job.model_positions[p[l]]);
    columns8(row, pp);
    for (int l = 0; l < 8; ++l) row[l] = load3(job.local_scales[p[l]]);
    columns8(row, sc);
    for (int l = 0; l < 8; ++l) row[l] = load3(job.local_positions[j[l]]);
    columns8(row, a);
    for (int l = 0; l < 8; ++l) row[l] = _mm_loadu_ps(&job.local_rotations[j[l]].x);
    columns8(row, q);
    const __m256 neg = _mm256_set1_ps(-0.f);
#define mul(x, y) _mm256_mul_ps(x, y)
#define add(x, y) _mm256_add_ps(x, y)
#define sub(x, y) _mm256_sub_ps(x, y)
    const __m256 rx = r[0], ry = r[1], rz = r[2], rw = r[3];
    // scaled(a, s)
    const __m256 ax = mul(a[0], sc[0]), ay = mul(a[1], sc[1]), az = mul(a[2], sc[2]);
    // rotate(a, r)
    const __m256 nrx = _mm256_xor_ps(rx, neg);
    const __m256 tw = sub(sub(mul(nrx, ax), mul(ry, ay)), mul(rz, az));
    const __m256 tx = sub(add(mul(rw, ax), mul(ry, az)), mul(rz, ay));
    const __m256 ty = sub(add(mul(rw, ay), mul(rz, ax)), mul(rx, az));
    const __m256 tz = sub(add(mul(rw, az), mul(rx, ay)), mul(ry, ax));
    const __m256 ntw = _mm256_xor_ps(tw, neg);
    const __m256 o[4] = {add(add(sub(add(mul(ntw, rx), mul(tx, rw)), mul(ty, rz)), mul(tz, ry)), pp[0]),
                         add(add(sub(add(mul(ntw, ry), mul(ty, rw)), mul(tz, rx)), mul(tx, rz)), pp[1]),
                         add(add(sub(add(mul(ntw, rz), mul(tz, rw)), mul(tx, ry)), mul(ty, rx)), pp[2]), _mm256_setzero_ps()};
    // ll_mul(q, r): a = q (local), b = r (parent world)
    const __m256 qx = q[0], qy = q[1], qz = q[2], qw = q[3];
    const __m256 m[4] = {sub(add(add(mul(rw, qx), mul(rx, qw)), mul(ry, qz)), mul(rz, qy)),
                         sub(add(add(mul(rw, qy), mul(ry, qw)), mul(rz, qx)), mul(rx, qz)),
                         sub(add(add(mul(rw, qz), mul(rz, qw)), mul(rx, qy)), mul(ry, qx)),
                         sub(sub(sub(mul(rw, qw), mul(rx, qx)), mul(ry, qy)), mul(rz, qz))};
#undef mul
#undef add
#undef sub
    rows8(m, row);
    for (int l = 0; l < 8; ++l) _mm_storeu_ps(&job.model_rotations[j[l]].x, row[l]);
    rows8(o, row);
    for (int l = 0; l < 8; ++l) store3(job.model_positions[j[l]], row[l]);
}
#endif
#endif

/// run() after validate(): depth by depth, `kLanes` four joints at a time (SSE2 builds).
template <bool kLanes, bool kWide = false>
SLANIM_ALWAYS_INLINE void run_depths(const LocalToModelJob& job) {
    const auto parents = job.skeleton->parents();
    const auto order = job.skeleton->depth_order();
    const auto starts = job.skeleton->depth_starts();
    const auto one = [&](int i) {
        const int p = parents[static_cast<std::size_t>(i)];
        const Vec3 ppos = p >= 0 ? job.model_positions[p] : job.root_position;
        const Quat prot = p >= 0 ? job.model_rotations[p] : job.root_rotation;
        const Vec3 pscale = p >= 0 ? job.local_scales[p] : Vec3{1.f, 1.f, 1.f};
        job.model_positions[i] = rotate(scaled(job.local_positions[i], pscale), prot) + ppos;
        job.model_rotations[i] = ll_mul(job.local_rotations[i], prot);
    };
    for (std::size_t d = 0; d + 1 < starts.size(); ++d) {
        std::size_t k = starts[d];
        const std::size_t end = starts[d + 1];
#if SLANIM_L2M_SSE2
#if SLANIM_HAS_AVX2_COPIES
        if (kWide && d > 0)  // eight joints of one depth at a time (AVX2)
            for (; k + 8 <= end; k += 8) eight(job, order.data() + k);
#endif
        if (kLanes && d > 0)  // four joints of one depth at a time; their parents are done
            for (; k + 4 <= end; k += 4) four(job, order.data() + k);
#endif
        for (; k < end; ++k) one(order[k]);
    }
}

void run_scalar(const LocalToModelJob& job) { run_depths<false>(job); }
void run_sse2(const LocalToModelJob& job) { run_depths<true>(job); }
// AVX2: eight joints of a depth per step (eight()), then four, then one; the same bits.
SLANIM_TARGET_AVX2 void run_avx2(const LocalToModelJob& job) { run_depths<true, true>(job); }

}  // namespace

bool LocalToModelJob::run() const {
    if (!validate()) return false;
    const Isa isa = active_isa();
    if (SLANIM_HAS_AVX2_COPIES && isa >= Isa::Avx2) run_avx2(*this);
    else if (isa >= Isa::Sse2) run_sse2(*this);
    else run_scalar(*this);
    return true;
}

}  // namespace slanim
