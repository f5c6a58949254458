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
}  // namespace

// PoseBlender::add_layer with one block of 16 joints at a time. For every lane (joint) the
// state goes where add() would put it: after the slots of priority ≥ its own (slots are kept in
// descending priority, so that is the count of such slots), the slots from there on move down
// one (the sixth falls out), and a state that would land past the sixth slot is dropped.
int insert_layer(const InsertArgs& a, const BlendLayer& layer) {
    constexpr int F = PoseBlender::kFields;
    const LayerShape& shape = *layer.shape;
    const std::size_t S = a.stride;
    const __m512i one = _mm512_set1_epi32(1), six = _mm512_set1_epi32(6);
    const __m512 weight = _mm512_set1_ps(layer.weight);
    // Components whose array is missing are absent from every track (blend.hpp).
    const std::int32_t usage_bits = (layer.rotations ? kUsageRot : 0) | (layer.positions ? kUsagePos : 0) |
                                    (layer.scales ? kUsageScale : 0);
    const __m512i usage_keep = _mm512_set1_epi32(usage_bits);
    const __m512i additive_flag = _mm512_set1_epi32(layer.additive ? 0x80 : 0);
    int kept = 0;
    for (const LayerBlock& b : shape.blocks) {
        const int j0 = 16 * static_cast<int>(b.block);
        if (j0 >= a.num_joints) break;  // blocks ascend: the rest lie past the skeleton too
        const int n = __builtin_popcount(b.mask);
        const __mmask16 m = static_cast<__mmask16>(b.mask & first_floats(a.num_joints - j0));
        const std::size_t o = static_cast<std::size_t>(j0);

        const __m512i count = widen_u8(load16(a.counts + o));
        const __m512i prio = _mm512_maskz_expand_epi32(
            m, widen_i8(_mm_maskz_loadu_epi8(first_floats(n), shape.priorities.data() + b.first)));
        const __m512i usage = _mm512_and_si512(
            _mm512_maskz_expand_epi32(m, widen_u8(_mm_maskz_loadu_epi8(first_floats(n), shape.usages.data() + b.first))),
            usage_keep);

        // Insertion point: the number of filled slots whose priority is ≥ the state's. (Mask
        // tests, not horizontal reductions: the loops below stop or skip on empty masks.)
        __m512i pos = _mm512_setzero_si512();
        for (int s = 0; s < PoseBlender::kSlots; ++s) {
            const __mmask16 filled = m & _mm512_cmpgt_epi32_mask(count, _mm512_set1_epi32(s));
            if (!filled) break;  // slots fill from the first: no lane has more
            const __m512i ps = widen_i8(load16(a.priorities + static_cast<std::size_t>(s) * S + o));
            pos = _mm512_mask_add_epi32(pos, _mm512_mask_cmpge_epi32_mask(filled, ps, prio), pos, one);
        }
        const __mmask16 keep = m & _mm512_cmplt_epi32_mask(pos, six);
        if (!keep) continue;
        kept += __builtin_popcount(keep);

        // Slots from the insertion point on move down one (lanes with pos < s ≤ count; the
        // sixth state falls out).
        for (int s = PoseBlender::kSlots - 1; s > 0; --s) {
            const __mmask16 mv = keep & _mm512_cmplt_epi32_mask(pos, _mm512_set1_epi32(s)) &
                                 _mm512_cmpge_epi32_mask(count, _mm512_set1_epi32(s));
            if (!mv) continue;
            const std::size_t to = static_cast<std::size_t>(s), from = to - 1;
            for (int f = 0; f < F; ++f) {
                const std::size_t ff = static_cast<std::size_t>(f);
                _mm512_mask_storeu_ps(a.values + (to * F + ff) * S + o, mv, _mm512_loadu_ps(a.values + (from * F + ff) * S + o));
            }
            _mm_mask_storeu_epi8(a.priorities + to * S + o, mv, load16(a.priorities + from * S + o));
            _mm_mask_storeu_epi8(a.flags + to * S + o, mv, load16(a.flags + from * S + o));
        }

        // The new states, expanded from the layer's packed tracks to their joints' lanes.
        vf rx{}, ry{}, rz{}, rw{}, px{}, py{}, pz{}, sx{}, sy{}, sz{};
        if (layer.rotations) {
            load_quats(layer.rotations + b.first, n, rx, ry, rz, rw);
            rx = as_vf(_mm512_maskz_expand_ps(m, as_m(rx))), ry = as_vf(_mm512_maskz_expand_ps(m, as_m(ry)));
            rz = as_vf(_mm512_maskz_expand_ps(m, as_m(rz))), rw = as_vf(_mm512_maskz_expand_ps(m, as_m(rw)));
        }
        if (layer.positions) {
            load_vec3s(layer.positions + b.first, n, px, py, pz);
            px = as_vf(_mm512_maskz_expand_ps(m, as_m(px))), py = as_vf(_mm512_maskz_expand_ps(m, as_m(py)));
            pz = as_vf(_mm512_maskz_expand_ps(m, as_m(pz)));
        }
        if (layer.scales) {
            load_vec3s(layer.scales + b.first, n, sx, sy, sz);
            sx = as_vf(_mm512_maskz_expand_ps(m, as_m(sx))), sy = as_vf(_mm512_maskz_expand_ps(m, as_m(sy)));
            sz = as_vf(_mm512_maskz_expand_ps(m, as_m(sz)));
        }
        const __m128i prio8 = narrow(prio);
        const __m128i flags8 = narrow(_mm512_or_si512(usage, additive_flag));
        for (int s = 0; s < PoseBlender::kSlots; ++s) {
            const __mmask16 wr = keep & _mm512_cmpeq_epi32_mask(pos, _mm512_set1_epi32(s));
            if (!wr) continue;
            float* v = a.values + static_cast<std::size_t>(s) * F * S + o;
            const auto put = [&](int f, vf x) { _mm512_mask_storeu_ps(v + static_cast<std::size_t>(f) * S, wr, as_m(x)); };
            if (layer.rotations) put(PoseBlender::kRx, rx), put(PoseBlender::kRy, ry), put(PoseBlender::kRz, rz), put(PoseBlender::kRw, rw);
            if (layer.positions) put(PoseBlender::kPx, px), put(PoseBlender::kPy, py), put(PoseBlender::kPz, pz);
            if (layer.scales) put(PoseBlender::kSx, sx), put(PoseBlender::kSy, sy), put(PoseBlender::kSz, sz);
            _mm512_mask_storeu_ps(v + static_cast<std::size_t>(PoseBlender::kWeight) * S, wr, weight);
            _mm_mask_storeu_epi8(a.priorities + static_cast<std::size_t>(s) * S + o, wr, prio8);
            _mm_mask_storeu_epi8(a.flags + static_cast<std::size_t>(s) * S + o, wr, flags8);
        }
        const __m512i count2 = _mm512_mask_add_epi32(count, keep & _mm512_cmplt_epi32_mask(count, six), count, one);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(a.counts + o), narrow(count2));
        const __mmask16 to_scalar =
            layer.additive ? keep : static_cast<__mmask16>(keep & _mm512_test_epi32_mask(usage, _mm512_set1_epi32(kUsageScale)));
        if (to_scalar) _mm_mask_storeu_epi8(a.scalar + o, to_scalar, _mm_set1_epi8(1));
    }
    return kept;
}

}  // namespace slanim::blend_detail::avx512

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
#endif
