// SPDX-License-Identifier: MIT
// Curve evaluation with the viewer's semantics (RotationCurve/PositionCurve::getValue, §2.1),
// using a per-track cursor instead of the viewer's std::map lower_bound.
//
// One run follows the clip's sampling plan (detail::SamplingPlan in clip.hpp, built by
// MotionClip::build):
//  1. constant curves (one key): plain copies, no search;
//  2. key-sharing groups (≥ 4 animated curves with identical key times, values stored
//     structure-of-arrays): one seek and one interpolant u for the whole group, then four
//     curves per SIMD operation;
//  3. the other animated curves: a cursor seek each; holds and exact key hits are written at
//     once, curves that need interpolating are queued and interpolated four at a time.
// Every SIMD lane performs the float operations of the scalar ll_nlerp / lerp and of the
// scalar u = (t − t_left) / (t_right − t_left), in the same order (IEEE single precision, no
// FMA), so results are bit-identical to the viewer's getValue. Lanes whose two keys lie in
// opposite hemispheres (dot < 0) take the scalar ll_slerp, as ll_nlerp does. Without SSE2 the
// same plan runs with scalar code.
#include <algorithm>
#include <cmath>
#include <cstdint>

#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#define SLANIM_SAMPLING_SSE2 1
#include <emmintrin.h>
#else
#define SLANIM_SAMPLING_SSE2 0
#endif

#include "slanim/core/sampling.hpp"

#include "sampling_plan.hpp"

namespace slanim {

namespace {

using detail::PlanCurve;
using detail::PlanGroup;
using detail::SamplingPlan;

// Index of the first key with time >= t (std::lower_bound), starting from the cursor.
inline std::uint32_t seek(const float* times, std::uint32_t n, std::uint32_t cur, float t) {
    if (cur > n) cur = n;
    if (cur > 0 && times[cur - 1] >= t) {
        // Moved backwards (loop wrap or seek): binary search in [0, cur).
        return static_cast<std::uint32_t>(std::lower_bound(times, times + cur, t) - times);
    }
    // Forward: a few linear steps cover normal playback; gallop into a binary search otherwise.
    std::uint32_t i = cur;
    for (int steps = 0; steps < 4; ++steps) {
        if (i == n || times[i] >= t) return i;
        ++i;
    }
    return static_cast<std::uint32_t>(std::lower_bound(times + i, times + n, t) - times);
}

// Single curves waiting for interpolation: `keys` points at the left key of the pair (the
// right key follows it), t0/t1 are the pair's times. Fixed capacity, flushed when full:
// sampling never allocates.
template <class T>
struct Queue {
    static constexpr int kCapacity = 64;
    alignas(16) float t0[kCapacity];
    alignas(16) float t1[kCapacity];
    const T* keys[kCapacity];
    T* out[kCapacity];
    int size = 0;

    void push(const T* pair, const float* times, T* dst) {
        t0[size] = times[0];
        t1[size] = times[1];
        keys[size] = pair;
        out[size] = dst;
        ++size;
    }
    // Pads the last group of four with harmless lanes (keys `pad_keys`, times 0 and 1, output
    // `sink`).
    void pad(const T* pad_keys, T* sink) {
        for (int i = size; i % 4 != 0; ++i) {
            t0[i] = 0.f;
            t1[i] = 1.f;
            keys[i] = pad_keys;
            out[i] = sink;
        }
    }
};

// The two keys a seeked key-sharing group interpolates between, and the factor. `i` is the
// lower_bound index; `components` is 4 for rotations, 3 for positions. On a hold (before the
// first key, past the last, or an exact hit) both point at the held key and u is 0.
struct GroupKeys {
    const float* a;
    const float* b;
    float u;
    bool hold;
    std::uint32_t lanes;
};
inline GroupKeys group_keys(const PlanGroup& g, const float* soa, std::uint32_t components,
                            const float* times, std::uint32_t i, float t) {
    const std::uint32_t lanes = (g.num_curves + 3u) & ~3u;
    const std::uint32_t n = g.num_keys;
    const bool hold = i == n || i == 0 || times[i] == t;
    const std::uint32_t key = hold ? (i == n ? n - 1 : i) : i - 1;
    const float* a = soa + static_cast<std::size_t>(key) * components * lanes;
    const float* b = hold ? a : a + components * lanes;
    const float u = hold ? 0.f : (t - times[i - 1]) / (times[i] - times[i - 1]);
    return {a, b, u, hold, lanes};
}

#if SLANIM_SAMPLING_SSE2

constexpr Quat kPadRot[2] = {Quat::identity(), Quat::identity()};
constexpr Vec3 kPadPos[2] = {Vec3{}, Vec3{}};

struct Rows4 {
    __m128 x, y, z, w;
};

// ll_nlerp(u, a, b) on four lanes, except that lanes with dot(a, b) < 0 (returned as a bit
// mask) must be replaced by the scalar ll_slerp:
//   r = u·b + (1 − u)·a (ll_lerp), then ll_normalize: |r| = sqrt(((x² + y²) + z²) + w²);
//   |r| ≤ 1e-7 → identity; |1 − |r|| > 1e-6 → r · (1 / |r|); else r unchanged.
inline int nlerp4(__m128 u, const Rows4& a, const Rows4& b, Rows4& r) {
    const __m128 one = _mm_set1_ps(1.f);
    const __m128 d = _mm_add_ps(
        _mm_add_ps(_mm_add_ps(_mm_mul_ps(a.x, b.x), _mm_mul_ps(a.y, b.y)), _mm_mul_ps(a.z, b.z)),
        _mm_mul_ps(a.w, b.w));
    const int slerp_lanes = _mm_movemask_ps(_mm_cmplt_ps(d, _mm_setzero_ps()));

    const __m128 inv_u = _mm_sub_ps(one, u);
    const __m128 rx = _mm_add_ps(_mm_mul_ps(u, b.x), _mm_mul_ps(inv_u, a.x));
    const __m128 ry = _mm_add_ps(_mm_mul_ps(u, b.y), _mm_mul_ps(inv_u, a.y));
    const __m128 rz = _mm_add_ps(_mm_mul_ps(u, b.z), _mm_mul_ps(inv_u, a.z));
    const __m128 rw = _mm_add_ps(_mm_mul_ps(u, b.w), _mm_mul_ps(inv_u, a.w));
    const __m128 mag = _mm_sqrt_ps(_mm_add_ps(
        _mm_add_ps(_mm_add_ps(_mm_mul_ps(rx, rx), _mm_mul_ps(ry, ry)), _mm_mul_ps(rz, rz)),
        _mm_mul_ps(rw, rw)));
    const __m128 valid = _mm_cmpgt_ps(mag, _mm_set1_ps(0.0000001f));
    const __m128 abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7FFFFFFF));
    const __m128 rescale = _mm_and_ps(
        valid, _mm_cmpgt_ps(_mm_and_ps(_mm_sub_ps(one, mag), abs_mask), _mm_set1_ps(0.000001f)));
    // Where rescale is false the multiplier is exactly 1 (x · 1 = x), else 1 / |r|.
    const __m128 oomag =
        _mm_or_ps(_mm_and_ps(rescale, _mm_div_ps(one, mag)), _mm_andnot_ps(rescale, one));
    r.x = _mm_and_ps(valid, _mm_mul_ps(rx, oomag));  // invalid → identity (0, 0, 0, 1)
    r.y = _mm_and_ps(valid, _mm_mul_ps(ry, oomag));
    r.z = _mm_and_ps(valid, _mm_mul_ps(rz, oomag));
    r.w = _mm_or_ps(_mm_and_ps(valid, _mm_mul_ps(rw, oomag)), _mm_andnot_ps(valid, one));
    return slerp_lanes;
}

inline Rows4 load_rows(const float* p, std::uint32_t stride) {
    return {_mm_loadu_ps(p), _mm_loadu_ps(p + stride), _mm_loadu_ps(p + 2 * stride),
            _mm_loadu_ps(p + 3 * stride)};
}

inline Quat lane_quat(const float* p, std::uint32_t stride, int lane) {
    return {p[lane], p[stride + lane], p[2 * stride + lane], p[3 * stride + lane]};
}

void flush_rotations(Queue<Quat>& q, float t) {
    const int n = q.size;
    Quat sink[1];
    q.pad(kPadRot, sink);
    const __m128 vt = _mm_set1_ps(t);
    for (int i = 0; i < n; i += 4) {
        const __m128 t0 = _mm_load_ps(q.t0 + i);
        const __m128 u = _mm_div_ps(_mm_sub_ps(vt, t0), _mm_sub_ps(_mm_load_ps(q.t1 + i), t0));
        const Quat* const* k = q.keys + i;
        Rows4 a{_mm_loadu_ps(&k[0][0].x), _mm_loadu_ps(&k[1][0].x), _mm_loadu_ps(&k[2][0].x),
                _mm_loadu_ps(&k[3][0].x)};
        Rows4 b{_mm_loadu_ps(&k[0][1].x), _mm_loadu_ps(&k[1][1].x), _mm_loadu_ps(&k[2][1].x),
                _mm_loadu_ps(&k[3][1].x)};
        _MM_TRANSPOSE4_PS(a.x, a.y, a.z, a.w);
        _MM_TRANSPOSE4_PS(b.x, b.y, b.z, b.w);
        Rows4 r;
        const int slerp_lanes = nlerp4(u, a, b, r);
        _MM_TRANSPOSE4_PS(r.x, r.y, r.z, r.w);
        Quat* const* out = q.out + i;
        _mm_storeu_ps(&out[0]->x, r.x);
        _mm_storeu_ps(&out[1]->x, r.y);
        _mm_storeu_ps(&out[2]->x, r.z);
        _mm_storeu_ps(&out[3]->x, r.w);
        if (slerp_lanes) {  // rare: keys in opposite hemispheres
            alignas(16) float us[4];
            _mm_store_ps(us, u);
            for (int l = 0; l < 4; ++l)
                if (slerp_lanes & (1 << l)) *out[l] = ll_slerp(us[l], k[l][0], k[l][1]);
        }
    }
    q.size = 0;
}

void flush_positions(Queue<Vec3>& q, float t) {
    const int n = q.size;
    Vec3 sink[1];
    q.pad(kPadPos, sink);
    const __m128 vt = _mm_set1_ps(t);
    for (int i = 0; i < n; i += 4) {
        const __m128 t0 = _mm_load_ps(q.t0 + i);
        alignas(16) float us[4];
        _mm_store_ps(us, _mm_div_ps(_mm_sub_ps(vt, t0), _mm_sub_ps(_mm_load_ps(q.t1 + i), t0)));
        for (int l = 0; l < 4; ++l)
            *q.out[i + l] = lerp(q.keys[i + l][0], q.keys[i + l][1], us[l]);
    }
    q.size = 0;
}

// A rotation group at key index i (seeked). `soa` = [key][x, y, z, w][lanes].
void sample_rot_group(const PlanGroup& g, const std::uint32_t* tracks, const float* soa,
                      const float* times, std::uint32_t i, float t, Quat* out) {
    const GroupKeys k = group_keys(g, soa, 4, times, i, t);
    const std::uint32_t lanes = k.lanes;
    const bool hold = k.hold;
    const float* va = k.a;
    const float* vb = k.b;
    const float u = k.u;
    const __m128 vu = _mm_set1_ps(u);
    for (std::uint32_t l0 = 0; l0 < g.num_curves; l0 += 4) {
        Rows4 r = load_rows(va + l0, lanes);
        int slerp_lanes = 0;
        if (!hold) slerp_lanes = nlerp4(vu, Rows4(r), load_rows(vb + l0, lanes), r);
        _MM_TRANSPOSE4_PS(r.x, r.y, r.z, r.w);
        const __m128 rows[4] = {r.x, r.y, r.z, r.w};
        const std::uint32_t m = std::min(4u, g.num_curves - l0);
        for (std::uint32_t l = 0; l < m; ++l) {
            Quat* o = out + tracks[l0 + l];
            if (slerp_lanes & (1 << l)) {
                const int lane = static_cast<int>(l0 + l);
                *o = ll_slerp(u, lane_quat(va, lanes, lane), lane_quat(vb, lanes, lane));
            } else {
                _mm_storeu_ps(&o->x, rows[l]);
            }
        }
    }
}

// A position group at key index i (seeked). `soa` = [key][x, y, z][lanes].
void sample_pos_group(const PlanGroup& g, const std::uint32_t* tracks, const float* soa,
                      const float* times, std::uint32_t i, float t, Vec3* out) {
    const GroupKeys k = group_keys(g, soa, 3, times, i, t);
    const std::uint32_t lanes = k.lanes;
    const bool hold = k.hold;
    const float* va = k.a;
    const float* vb = k.b;
    const __m128 u = _mm_set1_ps(k.u);
    for (std::uint32_t l0 = 0; l0 < g.num_curves; l0 += 4) {
        __m128 x = _mm_loadu_ps(va + l0), y = _mm_loadu_ps(va + lanes + l0),
               z = _mm_loadu_ps(va + 2 * lanes + l0);
        if (!hold) {  // lerp: a + (b − a)·u
            x = _mm_add_ps(x, _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(vb + l0), x), u));
            y = _mm_add_ps(y, _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(vb + lanes + l0), y), u));
            z = _mm_add_ps(z, _mm_mul_ps(_mm_sub_ps(_mm_loadu_ps(vb + 2 * lanes + l0), z), u));
        }
        alignas(16) float xs[4], ys[4], zs[4];
        _mm_store_ps(xs, x);
        _mm_store_ps(ys, y);
        _mm_store_ps(zs, z);
        const std::uint32_t m = std::min(4u, g.num_curves - l0);
        for (std::uint32_t l = 0; l < m; ++l) out[tracks[l0 + l]] = {xs[l], ys[l], zs[l]};
    }
}

#else  // scalar fallback: the same plan, one curve at a time

void flush_rotations(Queue<Quat>& q, float t) {
    for (int i = 0; i < q.size; ++i) {
        const float u = (t - q.t0[i]) / (q.t1[i] - q.t0[i]);
        *q.out[i] = ll_nlerp(u, q.keys[i][0], q.keys[i][1]);
    }
    q.size = 0;
}

void flush_positions(Queue<Vec3>& q, float t) {
    for (int i = 0; i < q.size; ++i) {
        const float u = (t - q.t0[i]) / (q.t1[i] - q.t0[i]);
        *q.out[i] = lerp(q.keys[i][0], q.keys[i][1], u);
    }
    q.size = 0;
}

void sample_rot_group(const PlanGroup& g, const std::uint32_t* tracks, const float* soa,
                      const float* times, std::uint32_t i, float t, Quat* out) {
    const GroupKeys k = group_keys(g, soa, 4, times, i, t);
    const std::uint32_t lanes = k.lanes;
    const bool hold = k.hold;
    const float* va = k.a;
    const float* vb = k.b;
    const float u = k.u;
    for (std::uint32_t l = 0; l < g.num_curves; ++l) {
        const Quat a{va[l], va[lanes + l], va[2 * lanes + l], va[3 * lanes + l]};
        const Quat b{vb[l], vb[lanes + l], vb[2 * lanes + l], vb[3 * lanes + l]};
        out[tracks[l]] = hold ? a : ll_nlerp(u, a, b);
    }
}

void sample_pos_group(const PlanGroup& g, const std::uint32_t* tracks, const float* soa,
                      const float* times, std::uint32_t i, float t, Vec3* out) {
    const GroupKeys k = group_keys(g, soa, 3, times, i, t);
    const std::uint32_t lanes = k.lanes;
    const bool hold = k.hold;
    const float* va = k.a;
    const float* vb = k.b;
    const float u = k.u;
    for (std::uint32_t l = 0; l < g.num_curves; ++l) {
        const Vec3 a{va[l], va[lanes + l], va[2 * lanes + l]};
        const Vec3 b{vb[l], vb[lanes + l], vb[2 * lanes + l]};
        out[tracks[l]] = hold ? a : lerp(a, b, u);
    }
}

#endif

// Single animated curves of one kind: seek each, write holds and key hits, queue the rest.
template <class T, void (*Flush)(Queue<T>&, float)>
inline void sample_curves(const std::vector<PlanCurve>& curves, const float* all_times,
                          const T* all_values, std::uint32_t* cursor, T* out, float t) {
    if (curves.empty()) return;
    Queue<T> queue;
    for (const PlanCurve& c : curves) {
        const float* times = all_times + c.first;
        const T* vals = all_values + c.first;
        const std::uint32_t n = c.count;
        const std::uint32_t i = seek(times, n, cursor[c.cursor], t);
        cursor[c.cursor] = i;
        if (i == n) {
            out[c.track] = vals[n - 1];  // past the last key: hold it
        } else if (i == 0 || times[i] == t) {
            out[c.track] = vals[i];  // before the first key (held) or an exact hit
        } else {
            queue.push(vals + (i - 1), times + (i - 1), out + c.track);
            if (queue.size == Queue<T>::kCapacity) Flush(queue, t);
        }
    }
    if (queue.size) Flush(queue, t);
}

template <class T, void (*Sample)(const PlanGroup&, const std::uint32_t*, const float*,
                                  const float*, std::uint32_t, float, T*)>
inline void sample_groups(const std::vector<PlanGroup>& groups, const SamplingPlan& plan,
                          const std::vector<float>& soa, const float* all_times,
                          std::uint32_t* cursor, T* out, float t) {
    for (const PlanGroup& g : groups) {
        const float* times = all_times + g.times_first;
        const std::uint32_t i = seek(times, g.num_keys, cursor[g.cursor], t);
        cursor[g.cursor] = i;
        Sample(g, plan.group_tracks.data() + g.tracks_first, soa.data() + g.values_first, times, i,
               t, out);
    }
}

}  // namespace

void SamplingCursor::reset(const MotionClip& c) {
    clip = &c;
    rot.assign(c.sampling_plan().rot_cursors, 0);
    pos.assign(c.sampling_plan().pos_cursors, 0);
}

bool SamplingJob::validate() const {
    if (!clip || !cursor || cursor->clip != clip) return false;
    const std::size_t n = clip->tracks().size();
    const detail::SamplingPlan& plan = clip->sampling_plan();
    return rotations.size() >= n && positions.size() >= n && cursor->rot.size() == plan.rot_cursors &&
           cursor->pos.size() == plan.pos_cursors;
}

bool SamplingJob::run() const {
    if (!validate()) return false;
    const float t = std::isnan(time) ? 0.f : time;
    const SamplingPlan& plan = clip->sampling_plan();
    Quat* rot_out = rotations.data();
    Vec3* pos_out = positions.data();
    const float* rot_times = clip->rot_times().data();
    const float* pos_times = clip->pos_times().data();

    for (std::size_t k = 0; k < plan.const_rot_tracks.size(); ++k)
        rot_out[plan.const_rot_tracks[k]] = plan.const_rot_values[k];
    for (std::size_t k = 0; k < plan.const_pos_tracks.size(); ++k)
        pos_out[plan.const_pos_tracks[k]] = plan.const_pos_values[k];

    sample_groups<Quat, sample_rot_group>(plan.rot_groups, plan, plan.rot_soa, rot_times,
                                          cursor->rot.data(), rot_out, t);
    sample_groups<Vec3, sample_pos_group>(plan.pos_groups, plan, plan.pos_soa, pos_times,
                                          cursor->pos.data(), pos_out, t);
    sample_curves<Quat, flush_rotations>(plan.rot_curves, rot_times, clip->rot_values().data(),
                                         cursor->rot.data(), rot_out, t);
    sample_curves<Vec3, flush_positions>(plan.pos_curves, pos_times, clip->pos_values().data(),
                                         cursor->pos.data(), pos_out, t);
    return true;
}

}  // namespace slanim
