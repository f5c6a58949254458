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
// `begin` and return the first vertex not processed; the caller finishes with the scalar kernel.
// Only defined when SLANIM_SKINNING_X86 is set by the build.
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

}  // namespace slanim::skin_detail
