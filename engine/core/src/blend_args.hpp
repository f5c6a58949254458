// SPDX-License-Identifier: MIT
// What PoseBlender (blend.cpp) hands its vector kernels (private): the AVX-512 fold and layer
// insertion (blend_avx512.cpp), the AVX2 and SSE2 folds (blend_lanes.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "slanim/core/blend.hpp"

namespace slanim::blend_detail {

/// What the folds of the slots read and write (PoseBlender's arrays, blend.cpp).
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
    // Room for the running blend of every block: kFoldBlockBytes per 16 joints, 64-byte aligned
    // (the AVX-512 fold's; the others keep theirs in registers).
    void* scratch = nullptr;
};
/// Bytes of fold scratch per block of 16 joints (static_assert in the kernel).
constexpr std::size_t kFoldBlockBytes = 1280;

/// What PoseBlender::add_layer's vector insertion reads and writes (blend_avx512.cpp).
struct InsertArgs {
    float* values = nullptr;              // kSlots × kFields × stride
    std::int8_t* priorities = nullptr;    // kSlots × stride
    std::uint8_t* flags = nullptr;        // kSlots × stride
    std::uint8_t* counts = nullptr;       // stride
    std::uint8_t* scalar = nullptr;       // stride
    bool* any_scalar = nullptr;           // set when a scalar entry is set
    std::size_t stride = 0;
    int num_joints = 0;
};

/// What the folds straight from recorded layers read and write (fold_layers of every vector
/// instruction set).
struct LayerFoldArgs {
    const BlendLayer* layers = nullptr;  // in the order offered; none additive, none with scales
    int count = 0;
    std::size_t joints = 0;              // joints to visit (≤ the blender's, ≤ pose size)
    Vec3* positions = nullptr;
    Quat* rotations = nullptr;
    // The running blends of the AVX2 and SSE2 folds layer by layer: kFoldBlockBytes per 16
    // joints, 64-byte aligned (FoldArgs::scratch's room).
    void* scratch = nullptr;
};

// The kernels, per instruction set (x86-64 GCC/Clang builds; WebAssembly SIMD: sse2 only;
// blend.cpp picks by active_isa()).
namespace avx512 {                                               // blend_avx512.cpp
int insert_layer(const InsertArgs& a, const BlendLayer& layer);  // add_layer's insertion into the slots
void fold_masked(const FoldArgs& a);                             // the fold of the slots
void fold_layers(const LayerFoldArgs& a);                        // the fold straight from layers
}  // namespace avx512
namespace avx2 {  // blend_avx2.cpp (blend_lanes.hpp)
void fold_slots(const FoldArgs& a);
void fold_layers(const LayerFoldArgs& a);
}  // namespace avx2
namespace sse2 {  // blend_sse2.cpp (blend_lanes.hpp)
void fold_slots(const FoldArgs& a);
void fold_layers(const LayerFoldArgs& a);
}  // namespace sse2

}  // namespace slanim::blend_detail
