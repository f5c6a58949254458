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
    // Locals, so the stores into the slot arrays cannot be taken to change them.
    const LayerBlock* const blocks = layer.shape->blocks.data();
    const std::size_t num_blocks = layer.shape->blocks.size();
    const std::int8_t* const priorities = layer.shape->priorities.data();
    const std::uint8_t* const usages = layer.shape->usages.data();
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
    // Components whose array is missing are absent from every track (blend.hpp).
    const std::int32_t usage_bits = (rotations ? kUsageRot : 0) | (positions ? kUsagePos : 0) | (scales ? kUsageScale : 0);
    const __m512i usage_keep = _mm512_set1_epi32(usage_bits);
    const __m512i additive_flag = _mm512_set1_epi32(layer.additive ? 0x80 : 0);
    const bool additive = layer.additive;
    int kept = 0;
    for (std::size_t bi = 0; bi < num_blocks; ++bi) {
        const LayerBlock b = blocks[bi];
        const int j0 = 16 * static_cast<int>(b.block);
        if (j0 >= num_joints) break;  // blocks ascend: the rest lie past the skeleton too
        const int n = __builtin_popcount(b.mask);
        const __mmask16 m = static_cast<__mmask16>(b.mask & first_floats(num_joints - j0));
        const bool full = m == 0xFFFF;  // every lane has a track, in order: no expansion
        const auto expand_i = [&](__m512i x) { return full ? x : _mm512_maskz_expand_epi32(m, x); };
        const auto expand_f = [&](vf x) { return full ? x : as_vf(_mm512_maskz_expand_ps(m, as_m(x))); };
        const std::size_t o = static_cast<std::size_t>(j0);

        const __m512i count = widen_u8(load16(counts + o));
        const __m512i prio = expand_i(widen_i8(_mm_maskz_loadu_epi8(first_floats(n), priorities + b.first)));
        const __m512i usage =
            _mm512_and_si512(expand_i(widen_u8(_mm_maskz_loadu_epi8(first_floats(n), usages + b.first))), usage_keep);

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

        // The new states, expanded from the layer's packed tracks to their joints' lanes.
        vf rx{}, ry{}, rz{}, rw{}, px{}, py{}, pz{}, sx{}, sy{}, sz{};
        if (rotations) {
            load_quats(rotations + b.first, n, rx, ry, rz, rw);
            rx = expand_f(rx), ry = expand_f(ry), rz = expand_f(rz), rw = expand_f(rw);
        }
        if (positions) {
            load_vec3s(positions + b.first, n, px, py, pz);
            px = expand_f(px), py = expand_f(py), pz = expand_f(pz);
        }
        if (scales) {
            load_vec3s(scales + b.first, n, sx, sy, sz);
            sx = expand_f(sx), sy = expand_f(sy), sz = expand_f(sz);
        }
        const __m128i prio8 = narrow(prio);
        const __m128i flags8 = narrow(_mm512_or_si512(usage, additive_flag));
        const auto write = [&](int s, __mmask16 wr) {
            float* v = values + static_cast<std::size_t>(s) * F * S + o;
            const auto put = [&](int f, vf x) { _mm512_mask_storeu_ps(v + static_cast<std::size_t>(f) * S, wr, as_m(x)); };
            if (rotations) put(PoseBlender::kRx, rx), put(PoseBlender::kRy, ry), put(PoseBlender::kRz, rz), put(PoseBlender::kRw, rw);
            if (positions) put(PoseBlender::kPx, px), put(PoseBlender::kPy, py), put(PoseBlender::kPz, pz);
            if (scales) put(PoseBlender::kSx, sx), put(PoseBlender::kSy, sy), put(PoseBlender::kSz, sz);
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
        if (to_scalar) _mm_mask_storeu_epi8(a.scalar + o, to_scalar, _mm_set1_epi8(1));
    }
    return kept;
}

}  // namespace slanim::blend_detail::avx512

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
#endif
