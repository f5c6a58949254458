// SPDX-License-Identifier: MIT
#include "slanim/core/blend.hpp"

#include <algorithm>

#if defined(__SSE2__) || defined(_M_X64)
#define SLANIM_BLEND_SSE2 1
#include <emmintrin.h>
#else
#define SLANIM_BLEND_SSE2 0
#endif

#include "slanim/core/clip.hpp"

namespace slanim {

void PoseBlender::resize(int n) {
    slots_.assign(static_cast<std::size_t>(n) * kSlots, JointStateRef{});
    counts_.assign(static_cast<std::size_t>(n), 0);
    active_.clear();
    active_.reserve(static_cast<std::size_t>(n));
}

bool PoseBlender::add_slow(int joint, const JointStateRef& st) {
    if (joint < 0 || joint >= num_joints()) return false;
    JointStateRef* s = &slots_[static_cast<std::size_t>(joint) * kSlots];
    std::uint8_t& n = counts_[joint];
    if (n == 0) active_.push_back(static_cast<std::int16_t>(joint));
    for (int i = 0; i < kSlots; ++i) {
        if (i == n) {  // first empty slot
            s[i] = st;
            ++n;
            return true;
        }
        if (st.priority > s[i].priority) {  // strictly higher: shift the rest down
            const int last = std::min<int>(n, kSlots - 1);
            for (int j = last; j > i; --j) s[j] = s[j - 1];
            s[i] = st;
            if (n < kSlots) ++n;
            return true;
        }
    }
    return false;
}

// One joint, scalar: `LLJointStateBlender::blendJointStates` as the viewer runs it.
void PoseBlender::blend_one(int joint, const LocalPoseView& pose) {
    const JointStateRef* s = &slots_[static_cast<std::size_t>(joint) * kSlots];
    const int n = counts_[joint];
    Vec3 blended_pos = pose.positions[joint];
    Quat blended_rot = pose.rotations[joint];
    Vec3 blended_scale = pose.scales[joint];
    float sum_pos = 0.f, sum_rot = 0.f, sum_scale = 0.f;
    std::uint8_t sum_usage = 0;
    Vec3 added_pos, added_scale;
    Quat added_rot = Quat::identity();

    bool scale_touched = false;
    for (int i = 0; i < n; ++i) {
        const JointStateRef& js = s[i];
        const float w = js.weight;
        if (w == 0.f) continue;
        scale_touched |= (js.usage & kUsageScale) != 0;
        if (js.additive) {
            if (js.usage & kUsagePos) {
                const float nw = std::min(1.f, w + sum_pos);
                added_pos += *js.position * (nw - sum_pos);
            }
            if (js.usage & kUsageScale) {
                const float nw = std::min(1.f, w + sum_scale);
                added_scale += *js.scale * (nw - sum_scale);
            }
            if (js.usage & kUsageRot) {
                const float nw = std::min(1.f, w + sum_rot);
                added_rot = ll_mul(ll_nlerp(nw - sum_rot, added_rot, *js.rotation), added_rot);
            }
        } else {
            if (js.usage & kUsagePos) {
                if (sum_usage & kUsagePos) {
                    const float nw = std::min(1.f, w + sum_pos);
                    blended_pos = lerp(*js.position, blended_pos, sum_pos / nw);
                    sum_pos = nw;
                } else {
                    blended_pos = *js.position;
                    sum_pos = w;
                }
            }
            if (js.usage & kUsageScale) {
                if (sum_usage & kUsageScale) {
                    const float nw = std::min(1.f, w + sum_scale);
                    blended_scale = lerp(*js.scale, blended_scale, sum_scale / nw);
                    sum_scale = nw;
                } else {
                    blended_scale = *js.scale;
                    sum_scale = w;
                }
            }
            if (js.usage & kUsageRot) {
                if (sum_usage & kUsageRot) {
                    const float nw = std::min(1.f, w + sum_rot);
                    blended_rot = ll_nlerp(sum_rot / nw, *js.rotation, blended_rot);
                    sum_rot = nw;
                } else {
                    blended_rot = *js.rotation;
                    sum_rot = w;
                }
            }
            sum_usage = static_cast<std::uint8_t>(sum_usage | js.usage);
        }
    }
    if (!is_finite(added_scale)) added_scale = Vec3{};
    if (!is_finite(blended_scale)) blended_scale = Vec3{1.f, 1.f, 1.f};
    pose.positions[joint] = blended_pos + added_pos;
    // Scales are written only when a state carried one: otherwise the sum is the old value
    // (and the pose's scales may be shared rest scales, see slanim::LocalPose).
    if (scale_touched) pose.scales[joint] = blended_scale + added_scale;
    pose.rotations[joint] = ll_mul(added_rot, blended_rot);
    counts_[joint] = 0;
}

#if SLANIM_BLEND_SSE2
namespace {
inline __m128 select(__m128 mask, __m128 a, __m128 b) {
    return _mm_or_ps(_mm_and_ps(mask, a), _mm_andnot_ps(mask, b));
}
}  // namespace

// Joints in SIMD lanes, for joints whose states are all non-additive and carry no scale (the
// common case). Each lane performs the scalar code's float operations in the same order (IEEE
// single precision, no FMA): the priority-ordered fold of ll_nlerp over the rotations and of
// lerp over the positions, with the first-contributor copy and the capacity-limited weights.
// Lanes whose two quaternions lie in opposite hemispheres take the scalar ll_slerp, as
// ll_nlerp does. The composition with the (identity) additive terms runs per lane with the
// scalar code, so results are bit-identical to blend_one. Two groups of four run interleaved:
// each fold is a chain of dependent divisions and square roots, and two chains keep the
// pipeline busy.
struct PoseBlender::Lanes {
    const std::int16_t* joints = nullptr;
    int lanes = 0, n[4] = {0, 0, 0, 0}, nmax = 0;
    __m128 px, py, pz, rx, ry, rz, rw, sum_pos, sum_rot, has_pos, has_rot;
};

namespace {
// A Vec3 as a vector (8 + 4 bytes: never reads past the element), w lane 0.
inline __m128 load3(const Vec3* v) {
    // _mm_loadl_epi64 reads 8 bytes through an unaligned type: a Vec3 is only 4-byte aligned.
    return _mm_movelh_ps(_mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(&v->x))), _mm_load_ss(&v->z));
}
}  // namespace

void PoseBlender::lanes_begin(Lanes& g, const std::int16_t* joints, int lanes, const LocalPoseView& pose) const {
    static const Quat kIdentity = Quat::identity();
    static const Vec3 kZero{};
    const Quat* rq[4];
    const Vec3* pv[4];
    g.joints = joints;
    g.lanes = lanes;
    g.nmax = 0;
    for (int l = 0; l < 4; ++l) {
        if (l < lanes) {
            rq[l] = &pose.rotations[joints[l]];
            pv[l] = &pose.positions[joints[l]];
            g.n[l] = counts_[joints[l]];
            g.nmax = std::max(g.nmax, g.n[l]);
        } else {
            rq[l] = &kIdentity;
            pv[l] = &kZero;
            g.n[l] = 0;
        }
    }
    g.rx = _mm_loadu_ps(&rq[0]->x), g.ry = _mm_loadu_ps(&rq[1]->x), g.rz = _mm_loadu_ps(&rq[2]->x),
    g.rw = _mm_loadu_ps(&rq[3]->x);
    _MM_TRANSPOSE4_PS(g.rx, g.ry, g.rz, g.rw);
    __m128 pw = load3(pv[3]);
    g.px = load3(pv[0]), g.py = load3(pv[1]), g.pz = load3(pv[2]);
    _MM_TRANSPOSE4_PS(g.px, g.py, g.pz, pw);
    g.sum_pos = g.sum_rot = g.has_pos = g.has_rot = _mm_setzero_ps();
}

__attribute__((always_inline)) inline void PoseBlender::lanes_step(Lanes& g, int s) const {
    static const Quat kIdentity = Quat::identity();
    static const Vec3 kZero{};
    const __m128 one = _mm_set1_ps(1.f), zero = _mm_setzero_ps();
    const __m128 abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7FFFFFFF));
    const __m128 mag_threshold = _mm_set1_ps(0.0000001f), one_ppm = _mm_set1_ps(0.000001f);
    // Gather: each lane's quaternion is one unaligned load, transposed to x/y/z/w rows; empty
    // lanes read an identity (their results are never selected).
    const Quat* rq[4];
    const Vec3* pv[4];
    float w[4];
    std::int32_t rm[4], pm[4];
    for (int l = 0; l < 4; ++l) {
        rq[l] = &kIdentity;
        pv[l] = &kZero;
        w[l] = 0.f;
        rm[l] = pm[l] = 0;
        if (s >= g.n[l]) continue;
        const JointStateRef& js = slots_[static_cast<std::size_t>(g.joints[l]) * kSlots + static_cast<std::size_t>(s)];
        if (js.weight == 0.f) continue;
        w[l] = js.weight;
        if (js.usage & kUsageRot) rq[l] = js.rotation, rm[l] = -1;
        if (js.usage & kUsagePos) pv[l] = js.position, pm[l] = -1;
    }
    __m128 ax = _mm_loadu_ps(&rq[0]->x), ay = _mm_loadu_ps(&rq[1]->x), az = _mm_loadu_ps(&rq[2]->x),
           aw = _mm_loadu_ps(&rq[3]->x);
    _MM_TRANSPOSE4_PS(ax, ay, az, aw);
    __m128 bx = load3(pv[0]), by = load3(pv[1]), bz = load3(pv[2]), bw = load3(pv[3]);
    _MM_TRANSPOSE4_PS(bx, by, bz, bw);
    const __m128 wv = _mm_set_ps(w[3], w[2], w[1], w[0]);
    const __m128 rmask = _mm_castsi128_ps(_mm_set_epi32(rm[3], rm[2], rm[1], rm[0]));
    const __m128 pmask = _mm_castsi128_ps(_mm_set_epi32(pm[3], pm[2], pm[1], pm[0]));

    // Positions: the first contributor copies, later ones lerp(state, blended, sum / new sum).
    {
        const __m128 first = _mm_andnot_ps(g.has_pos, pmask), cont = _mm_and_ps(g.has_pos, pmask);
        const __m128 nw = _mm_min_ps(_mm_add_ps(wv, g.sum_pos), one);
        const __m128 u = _mm_div_ps(g.sum_pos, nw);
        const __m128 lx = _mm_add_ps(bx, _mm_mul_ps(_mm_sub_ps(g.px, bx), u));
        const __m128 ly = _mm_add_ps(by, _mm_mul_ps(_mm_sub_ps(g.py, by), u));
        const __m128 lz = _mm_add_ps(bz, _mm_mul_ps(_mm_sub_ps(g.pz, bz), u));
        g.px = select(first, bx, select(cont, lx, g.px));
        g.py = select(first, by, select(cont, ly, g.py));
        g.pz = select(first, bz, select(cont, lz, g.pz));
        g.sum_pos = select(first, wv, select(cont, nw, g.sum_pos));
        g.has_pos = _mm_or_ps(g.has_pos, pmask);
    }
    // Rotations: the first contributor copies, later ones ll_nlerp(sum / new sum, state, blended).
    {
        const __m128 first = _mm_andnot_ps(g.has_rot, rmask), cont = _mm_and_ps(g.has_rot, rmask);
        const __m128 nw = _mm_min_ps(_mm_add_ps(wv, g.sum_rot), one);
        const __m128 t = _mm_div_ps(g.sum_rot, nw);
        const __m128 inv_t = _mm_sub_ps(one, t);
        __m128 lx = _mm_add_ps(_mm_mul_ps(t, g.rx), _mm_mul_ps(inv_t, ax));
        __m128 ly = _mm_add_ps(_mm_mul_ps(t, g.ry), _mm_mul_ps(inv_t, ay));
        __m128 lz = _mm_add_ps(_mm_mul_ps(t, g.rz), _mm_mul_ps(inv_t, az));
        __m128 lw = _mm_add_ps(_mm_mul_ps(t, g.rw), _mm_mul_ps(inv_t, aw));
        const __m128 mag = _mm_sqrt_ps(_mm_add_ps(
            _mm_add_ps(_mm_add_ps(_mm_mul_ps(lx, lx), _mm_mul_ps(ly, ly)), _mm_mul_ps(lz, lz)), _mm_mul_ps(lw, lw)));
        const __m128 oomag = _mm_div_ps(one, mag);
        const __m128 rescale = _mm_cmpgt_ps(_mm_and_ps(_mm_sub_ps(one, mag), abs_mask), one_ppm);
        const __m128 big = _mm_cmpgt_ps(mag, mag_threshold);
        lx = select(big, select(rescale, _mm_mul_ps(lx, oomag), lx), zero);
        ly = select(big, select(rescale, _mm_mul_ps(ly, oomag), ly), zero);
        lz = select(big, select(rescale, _mm_mul_ps(lz, oomag), lz), zero);
        lw = select(big, select(rescale, _mm_mul_ps(lw, oomag), lw), one);
        const __m128 d = _mm_add_ps(
            _mm_add_ps(_mm_add_ps(_mm_mul_ps(ax, g.rx), _mm_mul_ps(ay, g.ry)), _mm_mul_ps(az, g.rz)), _mm_mul_ps(aw, g.rw));
        const int opposite = _mm_movemask_ps(_mm_and_ps(cont, _mm_cmplt_ps(d, zero)));
        if (opposite) {  // ll_nlerp takes ll_slerp there
            alignas(16) float o[4][4], tt[4], cur[4][4];
            _mm_store_ps(o[0], lx), _mm_store_ps(o[1], ly), _mm_store_ps(o[2], lz), _mm_store_ps(o[3], lw);
            _mm_store_ps(tt, t);
            _mm_store_ps(cur[0], g.rx), _mm_store_ps(cur[1], g.ry), _mm_store_ps(cur[2], g.rz), _mm_store_ps(cur[3], g.rw);
            for (int l = 0; l < 4; ++l) {
                if (!(opposite & (1 << l))) continue;
                const Quat q = ll_slerp(tt[l], *rq[l], Quat{cur[0][l], cur[1][l], cur[2][l], cur[3][l]});
                o[0][l] = q.x, o[1][l] = q.y, o[2][l] = q.z, o[3][l] = q.w;
            }
            lx = _mm_load_ps(o[0]), ly = _mm_load_ps(o[1]), lz = _mm_load_ps(o[2]), lw = _mm_load_ps(o[3]);
        }
        g.rx = select(first, ax, select(cont, lx, g.rx));
        g.ry = select(first, ay, select(cont, ly, g.ry));
        g.rz = select(first, az, select(cont, lz, g.rz));
        g.rw = select(first, aw, select(cont, lw, g.rw));
        g.sum_rot = select(first, wv, select(cont, nw, g.sum_rot));
        g.has_rot = _mm_or_ps(g.has_rot, rmask);
    }
}

void PoseBlender::lanes_end(const Lanes& g, const LocalPoseView& pose) {
    alignas(16) float bp[3][4], br[4][4];
    _mm_store_ps(bp[0], g.px), _mm_store_ps(bp[1], g.py), _mm_store_ps(bp[2], g.pz);
    _mm_store_ps(br[0], g.rx), _mm_store_ps(br[1], g.ry), _mm_store_ps(br[2], g.rz), _mm_store_ps(br[3], g.rw);
    for (int l = 0; l < g.lanes; ++l) {
        const int joint = g.joints[l];
        const Vec3 added_pos;
        const Quat added_rot = Quat::identity();
        pose.positions[joint] = Vec3{bp[0][l], bp[1][l], bp[2][l]} + added_pos;
        pose.rotations[joint] = ll_mul(added_rot, Quat{br[0][l], br[1][l], br[2][l], br[3][l]});
        counts_[joint] = 0;
    }
}

void PoseBlender::blend_eight(const std::int16_t* joints, int count, const LocalPoseView& pose) {
    Lanes a, b;
    lanes_begin(a, joints, std::min(count, 4), pose);
    lanes_begin(b, joints + 4, std::max(count - 4, 0), pose);
    const int nmax = std::max(a.nmax, b.nmax);
    for (int s = 0; s < nmax; ++s) {
        lanes_step(a, s);
        lanes_step(b, s);
    }
    lanes_end(a, pose);
    lanes_end(b, pose);
}
#endif

void PoseBlender::blend_and_apply(const LocalPoseView& pose) {
#if SLANIM_BLEND_SSE2
    std::int16_t group[8];
    int count = 0;
    for (const std::int16_t joint : active_) {
        const JointStateRef* s = &slots_[static_cast<std::size_t>(joint) * kSlots];
        bool simple = true;
        for (int i = 0; i < counts_[joint]; ++i) simple &= !s[i].additive && !(s[i].usage & kUsageScale);
        if (!simple) {
            blend_one(joint, pose);
            continue;
        }
        group[count++] = joint;
        if (count == 8) {
            blend_eight(group, 8, pose);
            count = 0;
        }
    }
    if (count) blend_eight(group, count, pose);
#else
    for (const std::int16_t joint : active_) blend_one(joint, pose);
#endif
    active_.clear();
}

}  // namespace slanim
