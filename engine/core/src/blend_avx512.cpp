// SPDX-License-Identifier: MIT
// The PoseBlender's vector fold and layer insertion compiled for AVX-512 (one 16-float register
// per component); chosen at run time by blend.cpp when the CPU has AVX-512F.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SLANIM_BLEND_KERNEL_NS avx512
#include "blend_kernel.hpp"

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace slanim::blend_detail::avx512 {

namespace {
inline __m128i load16(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
inline __m512i widen_u8(__m128i b) { return _mm512_maskz_cvtepu8_epi32(0xFFFF, b); }
inline __m512i widen_i8(__m128i b) { return _mm512_maskz_cvtepi8_epi32(0xFFFF, b); }
inline __m128i narrow(__m512i v) { return _mm512_maskz_cvtepi32_epi8(0xFFFF, v); }

// A layer's states in one 16-joint block, expanded from the layer's packed tracks to the lanes
// of their joints (`m`: the lanes with a track, the block's mask cut at the skeleton's end).
// Components whose array is null are zeros, and absent from `usage` (blend.hpp).
struct BlockStates {
    __m512 r[4], p[3], s[3];
    __m512i prio, usage;
};
// A layer's rotations, positions and usages in one block, expanded to the lanes of `m`.
inline void load_layer_block(const BlendLayer& layer, const LayerBlock& lb, __mmask16 m, __m512 (&r)[4], __m512 (&p)[3],
                             __m512i& usage) {
    const int n = __builtin_popcount(lb.mask);
    const bool full = m == 0xFFFF;  // every lane has a track, in order: no expansion
    const auto expand_f = [&](vf x) { return full ? as_m(x) : _mm512_maskz_expand_ps(m, as_m(x)); };
    const std::int32_t usage_bits = (layer.rotations ? kUsageRot : 0) | (layer.positions ? kUsagePos : 0) |
                                    (layer.scales ? kUsageScale : 0);
    const __m512i u = widen_u8(_mm_maskz_loadu_epi8(first_floats(n), layer.shape->usages.data() + lb.first));
    usage = _mm512_and_si512(full ? u : _mm512_maskz_expand_epi32(m, u), _mm512_set1_epi32(usage_bits));
    // Components no track of the block uses stay zero (their usage bit is clear on every lane).
    vf q[4]{}, v[3]{};
    if (layer.rotations && (lb.usage & kUsageRot)) load_quats(layer.rotations + lb.first, n, q[0], q[1], q[2], q[3]);
    if (layer.positions && (lb.usage & kUsagePos)) load_vec3s(layer.positions + lb.first, n, v[0], v[1], v[2]);
    for (int c = 0; c < 4; ++c) r[c] = expand_f(q[c]);
    for (int c = 0; c < 3; ++c) p[c] = expand_f(v[c]);
}

inline void expand_block(const BlendLayer& layer, const LayerBlock& lb, __mmask16 m, BlockStates& out) {
    const int n = __builtin_popcount(lb.mask);
    const bool full = m == 0xFFFF;
    load_layer_block(layer, lb, m, out.r, out.p, out.usage);
    const __m512i prio = widen_i8(_mm_maskz_loadu_epi8(first_floats(n), layer.shape->priorities.data() + lb.first));
    out.prio = full ? prio : _mm512_maskz_expand_epi32(m, prio);
    vf sc[3]{};
    if (layer.scales) load_vec3s(layer.scales + lb.first, n, sc[0], sc[1], sc[2]);
    for (int c = 0; c < 3; ++c) out.s[c] = full ? as_m(sc[c]) : _mm512_maskz_expand_ps(m, as_m(sc[c]));
}
}  // namespace

// PoseBlender::add_layer with one block of 16 joints at a time. For every lane (joint) the
// state goes where add() would put it: after the slots of priority ≥ its own (slots are kept in
// descending priority, so that is the count of such slots), the slots from there on move down
// one (the sixth falls out), and a state that would land past the sixth slot is dropped.
int insert_layer(const InsertArgs& a, const BlendLayer& layer) {
    constexpr int F = PoseBlender::kFields;
    // Locals, so the stores into the slot arrays cannot be taken to change them.
    const LayerBlock* const blocks = layer.shape->blocks.data();
    const std::size_t num_blocks = layer.shape->blocks.size();
    const Quat* const rotations = layer.rotations;
    const Vec3* const positions = layer.positions;
    const Vec3* const scales = layer.scales;
    float* const values = a.values;
    std::int8_t* const slot_priorities = a.priorities;
    std::uint8_t* const flags = a.flags;
    std::uint8_t* const counts = a.counts;
    const std::size_t S = a.stride;
    const int num_joints = a.num_joints;
    const __m512i one = _mm512_set1_epi32(1), six = _mm512_set1_epi32(6);
    const __m512 weight = _mm512_set1_ps(layer.weight);
    const __m512i additive_flag = _mm512_set1_epi32(layer.additive ? 0x80 : 0);
    const bool additive = layer.additive;
    int kept = 0;
    for (std::size_t bi = 0; bi < num_blocks; ++bi) {
        const LayerBlock b = blocks[bi];
        const int j0 = 16 * static_cast<int>(b.block);
        if (j0 >= num_joints) break;  // blocks ascend: the rest lie past the skeleton too
        const __mmask16 m = static_cast<__mmask16>(b.mask & first_floats(num_joints - j0));
        const std::size_t o = static_cast<std::size_t>(j0);
        BlockStates st;
        expand_block(layer, b, m, st);
        const __m512i count = widen_u8(load16(counts + o));
        const __m512i prio = st.prio, usage = st.usage;

        // Insertion point: the number of filled slots whose priority is ≥ the state's.
        __m512i pos = _mm512_setzero_si512();
        for (int s = 0; s < PoseBlender::kSlots; ++s) {
            const __mmask16 filled = m & _mm512_cmpgt_epi32_mask(count, _mm512_set1_epi32(s));
            if (!filled) break;  // slots fill from the first: no lane has more
            const __m512i ps = widen_i8(load16(slot_priorities + static_cast<std::size_t>(s) * S + o));
            pos = _mm512_mask_add_epi32(pos, _mm512_mask_cmpge_epi32_mask(filled, ps, prio), pos, one);
        }
        const __mmask16 keep = m & _mm512_cmplt_epi32_mask(pos, six);
        if (!keep) continue;
        kept += __builtin_popcount(keep);

        // Slots from the insertion point on move down one (lanes with pos < s ≤ count; the
        // sixth state falls out). None when every state is appended.
        if (keep & _mm512_cmplt_epi32_mask(pos, count)) {
            for (int s = PoseBlender::kSlots - 1; s > 0; --s) {
                const __mmask16 mv = keep & _mm512_cmplt_epi32_mask(pos, _mm512_set1_epi32(s)) &
                                     _mm512_cmpge_epi32_mask(count, _mm512_set1_epi32(s));
                if (!mv) continue;
                const std::size_t to = static_cast<std::size_t>(s), from = to - 1;
                for (int f = 0; f < F; ++f) {
                    const std::size_t ff = static_cast<std::size_t>(f);
                    _mm512_mask_storeu_ps(values + (to * F + ff) * S + o, mv, _mm512_loadu_ps(values + (from * F + ff) * S + o));
                }
                _mm_mask_storeu_epi8(slot_priorities + to * S + o, mv, load16(slot_priorities + from * S + o));
                _mm_mask_storeu_epi8(flags + to * S + o, mv, load16(flags + from * S + o));
            }
        }

        // The new states.
        const __m128i prio8 = narrow(prio);
        const __m128i flags8 = narrow(_mm512_or_si512(usage, additive_flag));
        const auto write = [&](int s, __mmask16 wr) {
            float* v = values + static_cast<std::size_t>(s) * F * S + o;
            const auto put = [&](int f, __m512 x) { _mm512_mask_storeu_ps(v + static_cast<std::size_t>(f) * S, wr, x); };
            for (int c = 0; c < 4 && rotations; ++c) put(PoseBlender::kRx + c, st.r[c]);
            for (int c = 0; c < 3 && positions; ++c) put(PoseBlender::kPx + c, st.p[c]);
            for (int c = 0; c < 3 && scales; ++c) put(PoseBlender::kSx + c, st.s[c]);
            _mm512_mask_storeu_ps(v + static_cast<std::size_t>(PoseBlender::kWeight) * S, wr, weight);
            _mm_mask_storeu_epi8(slot_priorities + static_cast<std::size_t>(s) * S + o, wr, prio8);
            _mm_mask_storeu_epi8(flags + static_cast<std::size_t>(s) * S + o, wr, flags8);
        };
        // Usually every lane goes to the same slot (one motion over joints that received the
        // same states so far): one write. Otherwise one per slot used.
        const __m512i pos0 = _mm512_maskz_permutexvar_epi32(0xFFFF, _mm512_set1_epi32(__builtin_ctz(keep)), pos);
        if ((keep & _mm512_cmpeq_epi32_mask(pos, pos0)) == keep) {
            write(_mm512_cvtsi512_si32(pos0), keep);
        } else {
            for (int s = 0; s < PoseBlender::kSlots; ++s) {
                const __mmask16 wr = keep & _mm512_cmpeq_epi32_mask(pos, _mm512_set1_epi32(s));
                if (wr) write(s, wr);
            }
        }
        const __m512i count2 = _mm512_mask_add_epi32(count, keep & _mm512_cmplt_epi32_mask(count, six), count, one);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(counts + o), narrow(count2));
        const __mmask16 to_scalar =
            additive ? keep : static_cast<__mmask16>(keep & _mm512_test_epi32_mask(usage, _mm512_set1_epi32(kUsageScale)));
        if (to_scalar) {
            _mm_mask_storeu_epi8(a.scalar + o, to_scalar, _mm_set1_epi8(1));
            *a.any_scalar = true;
        }
    }
    return kept;
}

// The fold with AVX-512 mask registers: the operations of PoseBlender::blend_one, in the same
// order on the same values (as the AVX2/SSE2 folds of blend_lanes.hpp), with the lane
// conditions kept in k registers and applied by merge-masking. Blocks are swept
// slot by slot (the running blends wait in the fold scratch between sweeps), so the long chain
// of one block's slot overlaps the next block's.
namespace {
struct alignas(64) KBlock {
    __m512 r[4], p[3], sum_pos, sum_rot;  // running blend
    __m512 in_r[4], in_p[3];              // the pose as read
    __m512i count;                        // states per lane (0: not blended here)
    std::size_t j0;
    int lanes, nmax;
    __mmask16 has_pos, has_rot;
};
static_assert(sizeof(KBlock) <= kFoldBlockBytes, "PoseBlender sizes the fold scratch");

// The capacity-limited new sum, `llmin(1, w + sum)` as the scalar code computes it (`ws < 1 ?
// ws : 1`: a NaN gives 1).
inline __m512 capped_sum(__m512 w, __m512 sum) {
    const __m512 one = _mm512_set1_ps(1.f), ws = _mm512_add_ps(w, sum);
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(ws, one, _CMP_LT_OQ), one, ws);
}

// sum / nw on the lanes of `lanes`. Where every such lane has nw = 1 (the capped sum saturated:
// any state after a full-weight one) and a sum that is not NaN, the quotient is the sum itself,
// bit for bit (x / 1 is exact), and the division is skipped.
inline __m512 ratio(__mmask16 lanes, __m512 sum, __m512 nw) {
    const __mmask16 exact = _mm512_cmp_ps_mask(nw, _mm512_set1_ps(1.f), _CMP_EQ_OQ) & _mm512_cmp_ps_mask(sum, sum, _CMP_ORD_Q);
    return (lanes & static_cast<__mmask16>(~exact)) ? _mm512_div_ps(sum, nw) : sum;
}

inline __m512 lerp_keep_order(__m512 t, __m512 a, __m512 inv_t, __m512 b) {  // t·a + inv_t·b
    return _mm512_add_ps(_mm512_mul_ps(t, a), _mm512_mul_ps(inv_t, b));
}

__attribute__((noinline)) void slerp_lanes_k(__mmask16 lanes, __m512 t, const __m512 (&a)[4], const __m512 (&b)[4],
                                             __m512 (&out)[4]) {
    alignas(64) float tf[16], af[4][16], bf[4][16], of[4][16];
    _mm512_store_ps(tf, t);
    for (int c = 0; c < 4; ++c) {
        _mm512_store_ps(af[c], a[c]), _mm512_store_ps(bf[c], b[c]), _mm512_store_ps(of[c], out[c]);
    }
    for (int l = 0; l < 16; ++l) {
        if (!(lanes >> l & 1u)) continue;
        const Quat q = ll_slerp(tf[l], Quat{af[0][l], af[1][l], af[2][l], af[3][l]}, Quat{bf[0][l], bf[1][l], bf[2][l], bf[3][l]});
        of[0][l] = q.x, of[1][l] = q.y, of[2][l] = q.z, of[3][l] = q.w;
    }
    for (int c = 0; c < 4; ++c) out[c] = _mm512_load_ps(of[c]);
}

// Where a slot's states come from: the slot arrays (SlotSource) or a layer's registers
// (fold_layers). has(): lanes with a state in the slot; weight(), usage(); rot(c), pos(c).
struct SlotSource {
    const float* v;  // slot s of the block: field f at v + f·stride
    std::size_t stride;
    const std::uint8_t* flags;
    __mmask16 lanes;
    [[nodiscard]] __mmask16 has() const { return lanes; }
    [[nodiscard]] __m512 weight() const { return _mm512_loadu_ps(v + PoseBlender::kWeight * stride); }
    [[nodiscard]] __m512i usage() const { return widen_u8(load16(flags)); }
    [[nodiscard]] __m512 rot(int c) const { return _mm512_loadu_ps(v + static_cast<std::size_t>(PoseBlender::kRx + c) * stride); }
    [[nodiscard]] __m512 pos(int c) const { return _mm512_loadu_ps(v + static_cast<std::size_t>(PoseBlender::kPx + c) * stride); }
};

// One slot's states folded into the block's running blend (blend_one's loop body, per lane).
template <class Source>
inline void fold_state(KBlock& b, const Source& src) {
    const __m512 one = _mm512_set1_ps(1.f), zero = _mm512_setzero_ps();
    const __m512 w = src.weight();
    const __m512i usage = src.usage();
    // live: a state in this slot whose weight is not 0 (`w == 0.f` skips; NaN does not).
    const __mmask16 live = src.has() & _mm512_cmp_ps_mask(w, zero, _CMP_NEQ_UQ);
    const __mmask16 rmask = live & _mm512_test_epi32_mask(usage, _mm512_set1_epi32(kUsageRot));
    const __mmask16 pmask = live & _mm512_test_epi32_mask(usage, _mm512_set1_epi32(kUsagePos));
    if (pmask) {
        __m512 bp[3];
        for (int c = 0; c < 3; ++c) bp[c] = src.pos(c);
        const __mmask16 first = pmask & static_cast<__mmask16>(~b.has_pos), cont = pmask & b.has_pos;
        if (cont) {
            const __m512 nw = capped_sum(w, b.sum_pos);
            const __m512 u = ratio(cont, b.sum_pos, nw);
            for (int c = 0; c < 3; ++c)  // bp + (p − bp)·u
                b.p[c] = _mm512_mask_add_ps(b.p[c], cont, bp[c], _mm512_mul_ps(_mm512_sub_ps(b.p[c], bp[c]), u));
            b.sum_pos = _mm512_mask_mov_ps(b.sum_pos, cont, nw);
        }
        for (int c = 0; c < 3; ++c) b.p[c] = _mm512_mask_mov_ps(b.p[c], first, bp[c]);
        b.sum_pos = _mm512_mask_mov_ps(b.sum_pos, first, w);
        b.has_pos |= pmask;
    }
    if (rmask) {
        __m512 ar[4];
        for (int c = 0; c < 4; ++c) ar[c] = src.rot(c);
        const __mmask16 first = rmask & static_cast<__mmask16>(~b.has_rot), cont = rmask & b.has_rot;
        if (cont) {
            const __m512 nw = capped_sum(w, b.sum_rot);
            const __m512 t = ratio(cont, b.sum_rot, nw);
            const __m512 inv_t = _mm512_sub_ps(one, t);
            __m512 l[4];
            for (int c = 0; c < 4; ++c) l[c] = lerp_keep_order(t, b.r[c], inv_t, ar[c]);
            const __m512 m2 = _mm512_add_ps(
                _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(l[0], l[0]), _mm512_mul_ps(l[1], l[1])), _mm512_mul_ps(l[2], l[2])),
                _mm512_mul_ps(l[3], l[3]));
            // LLQuaternion::normalize leaves a quaternion whose |1 − |q|| ≤ 1e-6 as it is. When
            // |m2 − 1| ≤ 1e-6 that is certain without the square root: m2 − 1 is exact there
            // (Sterbenz), sqrt(m2) lies within 5.0e-7 of 1 and its rounding within 5.6e-7, below
            // the threshold. So lanes in that band skip the square root and the division (the
            // common case of a state after a full-weight one: t = 1, l = the blend so far).
            const __mmask16 near_unit = _mm512_cmp_ps_mask(
                _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(_mm512_sub_ps(m2, one)), _mm512_set1_epi32(0x7FFFFFFF))),
                _mm512_set1_ps(0.000001f), _CMP_LE_OQ);
            if (cont & static_cast<__mmask16>(~near_unit)) {
                const __m512 mag = _mm512_maskz_sqrt_ps(0xFFFF, m2);
                const __m512 oomag = _mm512_div_ps(one, mag);
                const __m512 dev = _mm512_castsi512_ps(
                    _mm512_and_si512(_mm512_castps_si512(_mm512_sub_ps(one, mag)), _mm512_set1_epi32(0x7FFFFFFF)));
                const __mmask16 big = _mm512_cmp_ps_mask(mag, _mm512_set1_ps(0.0000001f), _CMP_GT_OQ);
                const __mmask16 scale_it = _mm512_cmp_ps_mask(dev, _mm512_set1_ps(0.000001f), _CMP_GT_OQ);
                for (int c = 0; c < 3; ++c) l[c] = _mm512_maskz_mov_ps(big, _mm512_mask_mul_ps(l[c], scale_it, l[c], oomag));
                l[3] = _mm512_mask_blend_ps(big, one, _mm512_mask_mul_ps(l[3], scale_it, l[3], oomag));
            }
            const __m512 d = _mm512_add_ps(
                _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(ar[0], b.r[0]), _mm512_mul_ps(ar[1], b.r[1])), _mm512_mul_ps(ar[2], b.r[2])),
                _mm512_mul_ps(ar[3], b.r[3]));
            const __mmask16 opposite = cont & _mm512_cmp_ps_mask(d, zero, _CMP_LT_OQ);
            if (opposite) slerp_lanes_k(opposite, t, ar, b.r, l);  // ll_nlerp takes ll_slerp there
            for (int c = 0; c < 4; ++c) b.r[c] = _mm512_mask_mov_ps(b.r[c], cont, l[c]);
            b.sum_rot = _mm512_mask_mov_ps(b.sum_rot, cont, nw);
        }
        for (int c = 0; c < 4; ++c) b.r[c] = _mm512_mask_mov_ps(b.r[c], first, ar[c]);
        b.sum_rot = _mm512_mask_mov_ps(b.sum_rot, first, w);
        b.has_rot |= rmask;
    }
}

inline void fold_slot_k(const FoldArgs& a, KBlock& b, int s) {
    const std::size_t S = a.stride;
    SlotSource src;
    src.v = a.values + static_cast<std::size_t>(s) * PoseBlender::kFields * S + b.j0;
    src.stride = S;
    src.flags = a.flags + static_cast<std::size_t>(s) * S + b.j0;
    src.lanes = _mm512_cmpgt_epi32_mask(b.count, _mm512_set1_epi32(s));
    fold_state(b, src);
}

// Starts a block's running blend from its pose (lanes [0, lanes); `count` set by the caller).
// With `read_pose` false the caller knows that every lane gets a first rotation and position
// from its states, so the pose's values cannot reach the output: it is not read (zeros).
inline void start_block(KBlock& b, const Quat* r, const Vec3* p, bool read_pose = true) {
    vf q[4]{}, v[3]{};
    if (read_pose) {
        load_quats(r, b.lanes, q[0], q[1], q[2], q[3]);
        load_vec3s(p, b.lanes, v[0], v[1], v[2]);
    }
    for (int k = 0; k < 4; ++k) b.r[k] = b.in_r[k] = as_m(q[k]);
    for (int k = 0; k < 3; ++k) b.p[k] = b.in_p[k] = as_m(v[k]);
    b.sum_pos = b.sum_rot = _mm512_setzero_ps();
    b.has_pos = b.has_rot = 0;
}

// blend_one's ending: blended + zero added position; ll_mul(identity added rotation, blended)
// with ll_mul's operations (a = identity: b.w·0 + b.x·1 + b.y·0 − b.z·0, ...). Lanes not
// blended here keep their pose's bits.
inline void finish_block(const KBlock& b, Quat* r, Vec3* p) {
    const __m512 one = _mm512_set1_ps(1.f), zero = _mm512_setzero_ps();
    const __mmask16 blended = _mm512_test_epi32_mask(b.count, b.count);
    const __m512 rx = b.r[0], ry = b.r[1], rz = b.r[2], rw = b.r[3];
    __m512 qx = rx, qy = ry, qz = rz, qw = rw;
    // With every component finite and not −0 the product is the quaternion itself, bit for
    // bit (c·1 = c, the other terms ±0, c ± 0 = c for c ≠ 0, and +0 ± 0 stays +0); −0 (which
    // can turn into +0), infinities and NaNs take the operations.
    constexpr int kSpecial = 0x01 | 0x04 | 0x08 | 0x10 | 0x80;  // QNaN, −0, ±inf, SNaN
    if (_mm512_fpclass_ps_mask(rx, kSpecial) | _mm512_fpclass_ps_mask(ry, kSpecial) | _mm512_fpclass_ps_mask(rz, kSpecial) |
        _mm512_fpclass_ps_mask(rw, kSpecial)) {
        const auto mul = [](__m512 x, __m512 y) { return _mm512_mul_ps(x, y); };
        qx = _mm512_sub_ps(_mm512_add_ps(_mm512_add_ps(mul(rw, zero), mul(rx, one)), mul(ry, zero)), mul(rz, zero));
        qy = _mm512_sub_ps(_mm512_add_ps(_mm512_add_ps(mul(rw, zero), mul(ry, one)), mul(rz, zero)), mul(rx, zero));
        qz = _mm512_sub_ps(_mm512_add_ps(_mm512_add_ps(mul(rw, zero), mul(rz, one)), mul(rx, zero)), mul(ry, zero));
        qw = _mm512_sub_ps(_mm512_sub_ps(_mm512_sub_ps(mul(rw, one), mul(rx, zero)), mul(ry, zero)), mul(rz, zero));
    }
    BlockPose out;
    out.rx = as_vf(_mm512_mask_blend_ps(blended, b.in_r[0], qx));
    out.ry = as_vf(_mm512_mask_blend_ps(blended, b.in_r[1], qy));
    out.rz = as_vf(_mm512_mask_blend_ps(blended, b.in_r[2], qz));
    out.rw = as_vf(_mm512_mask_blend_ps(blended, b.in_r[3], qw));
    out.px = as_vf(_mm512_mask_blend_ps(blended, b.in_p[0], _mm512_add_ps(b.p[0], zero)));
    out.py = as_vf(_mm512_mask_blend_ps(blended, b.in_p[1], _mm512_add_ps(b.p[1], zero)));
    out.pz = as_vf(_mm512_mask_blend_ps(blended, b.in_p[2], _mm512_add_ps(b.p[2], zero)));
    store_pose(out, r, p, b.lanes);
}
}  // namespace

void fold_masked(const FoldArgs& a) {
    KBlock* blocks = static_cast<KBlock*>(a.scratch);
    int nb = 0, smax = 0;
    for (std::size_t j0 = 0; j0 < a.joints; j0 += 16) {
        KBlock& b = blocks[nb];
        b.j0 = j0;
        b.lanes = a.joints - j0 < 16 ? static_cast<int>(a.joints - j0) : 16;
        // Lanes blended here: joints with states and no additive or scaled one.
        const __m128i counts = load16(a.counts + j0), scalar = load16(a.scalar + j0);
        const __m128i c = _mm_maskz_mov_epi8(_mm_testn_epi8_mask(scalar, scalar) & first_floats(b.lanes), counts);
        b.nmax = hmax_u8(c);
        if (b.nmax == 0) continue;
        b.count = widen_u8(c);
        start_block(b, a.rotations + j0, a.positions + j0);
        smax = b.nmax > smax ? b.nmax : smax;
        ++nb;
    }
    for (int s = 0; s < smax; ++s)
        for (int i = 0; i < nb; ++i)
            if (s < blocks[i].nmax) fold_slot_k(a, blocks[i], s);
    for (int i = 0; i < nb; ++i) finish_block(blocks[i], a.rotations + blocks[i].j0, a.positions + blocks[i].j0);
}

namespace {
// One recorded layer's states in a block of 16 joints, expanded to their joints' lanes.
struct LayerLanes {
    BlockStates st;  // no scales: recorded layers with scales take the slots
    __m512 w;        // the layer's weight in every lane
    __m512i rank;    // the state's slot at each lane
    __mmask16 m;     // lanes with a state of this layer
};
// The states of one slot rank, gathered from the layers holding that rank at some lane.
struct RankSource {
    __m512 r[4], p[3], w;
    __m512i u;
    __mmask16 lanes;
    [[nodiscard]] __mmask16 has() const { return lanes; }
    [[nodiscard]] __m512 weight() const { return w; }
    [[nodiscard]] __m512i usage() const { return u; }
    [[nodiscard]] __m512 rot(int c) const { return r[c]; }
    [[nodiscard]] __m512 pos(int c) const { return p[c]; }
};
}  // namespace

namespace {
// A layer with tracks in the block being prepared: its block record and the lanes it covers.
struct Present {
    const BlendLayer* layer;
    const LayerBlock* lb;
    __mmask16 m;
};

// One block's recorded layers and its running blend. When every layer present has a single
// priority over its tracks in the block (LayerBlock::priority ≥ 0: the usual motion), each
// lane's slot order is the layers' order by priority (descending), then by offer: `order`
// holds them so and the block is folded layer by layer, each straight from the layer's arrays
// (`uniform`). Otherwise the layers are expanded into `L` and ranked per lane.
struct LayerBlockWork {
    Present order[PoseBlender::kMaxDeferred];
    LayerLanes L[PoseBlender::kMaxDeferred];
    int P = 0;
    bool uniform = false;
    __m512i seen;  // uniform: states folded per lane so far (the first six are kept)
    KBlock b;
};

// Expands the layers present in block j0 (advancing each layer's block cursor), ranks their
// states and starts the block's blend. False when no layer has a state in the block.
bool prepare_layer_block(const LayerFoldArgs& a, std::size_t j0, std::size_t* cursor, LayerBlockWork& w) {
    const __m512i one_i = _mm512_set1_epi32(1);
    const auto block = static_cast<std::uint16_t>(j0 / 16);
    const int lanes = a.joints - j0 < 16 ? static_cast<int>(a.joints - j0) : 16;
    const __mmask16 lane_mask = first_floats(lanes);
    int P = 0;
    __mmask16 any = 0;
    bool uniform = true;
    bool covered = false;  // a live layer gives every lane a rotation and a position
    for (int k = 0; k < a.count; ++k) {
        const BlendLayer& layer = a.layers[k];
        const LayerShape& shape = *layer.shape;
        std::size_t& c = cursor[k];
        while (c < shape.blocks.size() && shape.blocks[c].block < block) ++c;
        if (c == shape.blocks.size() || shape.blocks[c].block != block) continue;
        const LayerBlock& lb = shape.blocks[c];
        const __mmask16 m = static_cast<__mmask16>(lb.mask & lane_mask);
        if (!m) continue;
        w.order[P++] = {&layer, &lb, m};
        any = static_cast<__mmask16>(any | m);
        uniform = uniform && lb.priority >= 0;
        covered = covered || (m == lane_mask && !(layer.weight == 0.f) && layer.rotations && layer.positions &&
                              (lb.usage_all & (kUsageRot | kUsagePos)) == (kUsageRot | kUsagePos));
    }
    w.P = P;
    if (P == 0) return false;
    w.uniform = uniform;
    if (uniform) {
        // Stable insertion sort by priority, descending: equal priorities keep the offer order.
        for (int i = 1; i < P; ++i) {
            const Present x = w.order[i];
            int j = i;
            for (; j > 0 && w.order[j - 1].lb->priority < x.lb->priority; --j) w.order[j] = w.order[j - 1];
            w.order[j] = x;
        }
        w.seen = _mm512_setzero_si512();
    } else {
        LayerLanes* L = w.L;
        for (int i = 0; i < P; ++i) {
            L[i].m = w.order[i].m;
            expand_block(*w.order[i].layer, *w.order[i].lb, L[i].m, L[i].st);
            L[i].w = _mm512_set1_ps(w.order[i].layer->weight);
        }
        // Ranks: states of higher priority, or of equal priority offered earlier, at each lane.
        for (int i = 0; i < P; ++i) {
            __m512i rank = _mm512_setzero_si512();
            for (int j = 0; j < P; ++j) {
                if (j == i) continue;
                const __mmask16 both = L[i].m & L[j].m;
                if (!both) continue;
                const __mmask16 ahead = j < i ? _mm512_mask_cmpge_epi32_mask(both, L[j].st.prio, L[i].st.prio)
                                              : _mm512_mask_cmpgt_epi32_mask(both, L[j].st.prio, L[i].st.prio);
                rank = _mm512_mask_add_epi32(rank, ahead, rank, one_i);
            }
            L[i].rank = rank;
        }
    }
    w.b.j0 = j0;
    w.b.lanes = lanes;
    w.b.count = _mm512_maskz_mov_epi32(any, one_i);  // blended lanes (finish_block)
    w.b.nmax = uniform ? P : P < PoseBlender::kSlots ? P : PoseBlender::kSlots;
    // (With more than six layers the covering one could fall past the sixth slot on a lane.)
    start_block(w.b, a.rotations + j0, a.positions + j0, !(covered && P <= PoseBlender::kSlots));
    return true;
}

// Folds slot rank s of a prepared block: the states ranked s, from whichever layer holds that
// rank at each lane.
inline void fold_layer_rank(LayerBlockWork& w, int s) {
    RankSource src{};  // (zeros: read only once a layer has filled them; GCC cannot tell)
    const __m512i rank_s = _mm512_set1_epi32(s);
    for (int i = 0; i < w.P; ++i) {
        const LayerLanes& x = w.L[i];
        const __mmask16 at = _mm512_mask_cmpeq_epi32_mask(x.m, x.rank, rank_s);
        if (!at) continue;
        if (!src.lanes) {  // the first layer at this rank: its vectors as they are
            for (int c = 0; c < 4; ++c) src.r[c] = x.st.r[c];
            for (int c = 0; c < 3; ++c) src.p[c] = x.st.p[c];
            src.w = x.w, src.u = x.st.usage;
        } else {  // others hold the rank on other lanes
            for (int c = 0; c < 4; ++c) src.r[c] = _mm512_mask_mov_ps(src.r[c], at, x.st.r[c]);
            for (int c = 0; c < 3; ++c) src.p[c] = _mm512_mask_mov_ps(src.p[c], at, x.st.p[c]);
            src.w = _mm512_mask_mov_ps(src.w, at, x.w);
            src.u = _mm512_mask_mov_epi32(src.u, at, x.st.usage);
        }
        src.lanes = static_cast<__mmask16>(src.lanes | at);
    }
    if (src.lanes) fold_state(w.b, src);
}

// Folds the k-th layer in slot order of a uniform block, loaded from the layer's arrays and
// expanded to its lanes (no scales: such layers take the slots). Lanes that already folded six
// states drop the rest, as the slots would.
inline void fold_layer_in_order(LayerBlockWork& w, int k) {
    const Present& x = w.order[k];
    const BlendLayer& layer = *x.layer;
    RankSource src;
    src.lanes = x.m;
    if (w.P > PoseBlender::kSlots) {
        src.lanes = static_cast<__mmask16>(src.lanes & _mm512_cmplt_epi32_mask(w.seen, _mm512_set1_epi32(PoseBlender::kSlots)));
        w.seen = _mm512_mask_add_epi32(w.seen, x.m, w.seen, _mm512_set1_epi32(1));
    }
    load_layer_block(layer, *x.lb, x.m, src.r, src.p, src.u);
    src.w = _mm512_set1_ps(layer.weight);
    if (src.lanes) fold_state(w.b, src);
}
}  // namespace

// The fold straight from recorded layers (PoseBlender::add_layer, blend_and_apply). A joint's
// slots would hold its states sorted by priority, the earlier offered first among equals, the
// first six kept (bounded insertion keeps exactly those): so a state's slot is its rank, the
// number of the joint's states with a higher priority or an equal one offered before it. Slot s
// is then folded from the layers ranked s on each lane, as fold_slot_k folds slot arrays — or,
// in a block where every layer has one priority, layer by layer in that order. Two blocks at a
// time, rank by rank, so one block's dependency chain overlaps the other's.
void fold_layers(const LayerFoldArgs& a) {
    std::size_t cursor[PoseBlender::kMaxDeferred] = {};
    LayerBlockWork w[2];
    std::size_t j0 = 0;
    while (j0 < a.joints) {
        int ready = 0;
        while (ready < 2 && j0 < a.joints) {
            if (prepare_layer_block(a, j0, cursor, w[ready])) ++ready;
            j0 += 16;
        }
        const int n = ready == 2 ? (w[0].b.nmax > w[1].b.nmax ? w[0].b.nmax : w[1].b.nmax) : ready ? w[0].b.nmax : 0;
        for (int s = 0; s < n; ++s)
            for (int k = 0; k < ready; ++k)
                if (s < w[k].b.nmax) {
                    if (w[k].uniform) fold_layer_in_order(w[k], s);
                    else fold_layer_rank(w[k], s);
                }
        for (int k = 0; k < ready; ++k) finish_block(w[k].b, a.rotations + w[k].b.j0, a.positions + w[k].b.j0);
    }
}

}  // namespace slanim::blend_detail::avx512

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
#endif
