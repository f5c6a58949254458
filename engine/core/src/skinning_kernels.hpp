// SPDX-License-Identifier: MIT
// Private interface between skinning.cpp (dispatch) and the per-ISA kernel files. The AVX files
// are compiled with -mavx2/-mavx512* flags, so this header and those files must not pull in any
// inline function that other translation units also instantiate (the linker could keep the
// AVX copy and run it on a CPU without AVX): only <cstddef>/<cstdint> and plain data here.
#pragma once

#include <cstddef>
#include <cstdint>

namespace slanim::skin_detail {

/// Raw view of a skinning job. Matrices: 16 floats each (SkinMatrix), 64-byte aligned.
/// Normals are skipped when nx is null. Vertices [begin, end).
struct KernelArgs {
    const float* matrices = nullptr;
    std::uint32_t num_matrices = 0;
    const std::uint16_t* indices = nullptr;  // 4 per vertex (SkinningJob)
    const float* weights4 = nullptr;         // 4 per vertex (SkinningJob)
    int influences = 4;                      // slots used, 1..4 (SkinningJob)
    const float* sl_weights = nullptr;       // 1 per vertex (SlSkinningJob)
    // PackedSkinInfluences (PackedSkinningJob): block headers (base | spread << 16) and data
    // (influences rows of 16 weights — float, or u16 when unorm16 — then influences rows of 16
    // u8 relative indices), block b at packed + b · block_floats. Vertex indices (begin, end,
    // streams) are absolute.
    const std::uint32_t* headers = nullptr;
    const float* packed = nullptr;
    std::size_t block_floats = 0;
    bool unorm16 = false;
    bool streaming_stores = false;
    const float *px = nullptr, *py = nullptr, *pz = nullptr;
    const float *nx = nullptr, *ny = nullptr, *nz = nullptr;
    float *opx = nullptr, *opy = nullptr, *opz = nullptr;
    float *onx = nullptr, *ony = nullptr, *onz = nullptr;
    std::size_t begin = 0, end = 0;
};

/// Squared normal length below which a skinned normal is left unscaled (a zero normal stays
/// zero instead of becoming NaN). Same threshold in every kernel.
inline constexpr float kMinNormalLength2 = 1e-30f;
/// Unorm16 weight decoding: float(q) · kUnorm16Scale, the same two roundings in every kernel.
inline constexpr float kUnorm16Scale = 1.f / 65535.f;

// Scalar kernels: process [begin, end) completely.
void skin4_scalar(const KernelArgs& a);
void skin_sl_scalar(const KernelArgs& a);
void skin_packed_scalar(const KernelArgs& a);

// SIMD kernels: process whole blocks of 4 (SSE2), 8 (AVX2) or 16 (AVX-512) vertices from
// `begin` and return the first vertex not processed; the caller finishes with the scalar kernel
// (the AVX2 and AVX-512 SL kernels run their last partial block themselves, padded, and return
// `end`; the AVX-512 one for lists of ≤ 32 entries). Only defined when SLANIM_SKINNING_X86 is
// set by the build.
std::size_t skin4_sse2(const KernelArgs& a);
std::size_t skin_sl_sse2(const KernelArgs& a);
std::size_t skin4_avx2(const KernelArgs& a);
std::size_t skin_sl_avx2(const KernelArgs& a);
std::size_t skin4_avx512(const KernelArgs& a);
std::size_t skin_sl_avx512(const KernelArgs& a);
// Packed kernels: begin is a multiple of 16; process whole groups of 4 (SSE2), 8 (AVX2) or 16
// (AVX-512) vertices from begin and return the first vertex not processed.
std::size_t skin_packed_sse2(const KernelArgs& a);
std::size_t skin_packed_avx2(const KernelArgs& a);
std::size_t skin_packed_avx512(const KernelArgs& a);

namespace {  // internal linkage: each ISA file keeps its own copy

/// Every output stream of `a` (normals only when given) aligned to `bytes` (a power of two) at
/// vertex v: the condition for a kernel's non-temporal stores.
inline bool outputs_aligned(const KernelArgs& a, std::size_t v, std::uintptr_t bytes) {
    const auto at = [&](const float* p) { return (reinterpret_cast<std::uintptr_t>(p + v) & (bytes - 1)) == 0; };
    bool ok = at(a.opx) && at(a.opy) && at(a.opz);
    if (a.nx) ok = ok && at(a.onx) && at(a.ony) && at(a.onz);
    return ok;
}

/// A job's last partial block [v, end) as one whole block of W vertices: the inputs copied into
/// local arrays padded with zeros, the outputs written there (`args`), then the real vertices'
/// outputs copied back (`copy_out`). The SL kernels run it so every vertex gets the SIMD
/// arithmetic.
template <std::size_t W>
struct PaddedBlock {
    alignas(64) float in[7][W] = {};
    alignas(64) float out[6][W];
    std::size_t v, r;
    PaddedBlock(const KernelArgs& a, std::size_t first) : v(first), r(a.end - first) {
        const float* src[7] = {a.sl_weights, a.px, a.py, a.pz, a.nx, a.ny, a.nz};
        for (std::size_t s = 0; s < 7; ++s)
            if (src[s]) __builtin_memcpy(in[s], src[s] + v, r * sizeof(float));
    }
    /// `a` reading and writing the local block, vertices [0, W), ordinary stores.
    [[nodiscard]] KernelArgs args(const KernelArgs& a) {
        KernelArgs t = a;
        t.sl_weights = in[0];
        t.px = in[1], t.py = in[2], t.pz = in[3];
        if (a.nx) t.nx = in[4], t.ny = in[5], t.nz = in[6];
        t.opx = out[0], t.opy = out[1], t.opz = out[2], t.onx = out[3], t.ony = out[4], t.onz = out[5];
        t.begin = 0;
        t.end = W;
        t.streaming_stores = false;
        return t;
    }
    void copy_out(const KernelArgs& a) const {
        float* dst[6] = {a.opx, a.opy, a.opz, a.onx, a.ony, a.onz};
        for (std::size_t s = 0; s < (a.nx ? 6u : 3u); ++s) __builtin_memcpy(dst[s] + v, out[s], r * sizeof(float));
    }
};

}  // namespace

}  // namespace slanim::skin_detail
