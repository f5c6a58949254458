// SPDX-License-Identifier: MIT
#include "slanim/core/local_to_model.hpp"

#include "isa_dispatch.hpp"
#include "slanim/core/skeleton.hpp"

#if defined(__SSE2__) || defined(_M_X64)
#define SLANIM_L2M_SSE2 1
#include <emmintrin.h>
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
#endif

/// run() after validate(): depth by depth, `kLanes` four joints at a time (SSE2 builds).
template <bool kLanes>
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
        if (kLanes && d > 0)  // four joints of one depth at a time; their parents are done
            for (; k + 4 <= end; k += 4) four(job, order.data() + k);
#endif
        for (; k < end; ++k) one(order[k]);
    }
}

void run_scalar(const LocalToModelJob& job) { run_depths<false>(job); }
void run_sse2(const LocalToModelJob& job) { run_depths<true>(job); }
// The same code for AVX2: VEX encoding, the same bits; ~4 % faster than run_sse2 on the test VM
// (docs/runtime-threading.md, "Instruction sets").
SLANIM_TARGET_AVX2 void run_avx2(const LocalToModelJob& job) { run_depths<true>(job); }

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
