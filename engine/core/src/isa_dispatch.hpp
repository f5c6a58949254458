// SPDX-License-Identifier: MIT
// A hot function compiled twice, for the x86-64 baseline (SSE2) and for AVX2 + FMA, with the copy
// chosen at each call by active_isa() (slanim/core/isa.hpp). Private to slanim::core. For SSE2 or scalar kernels whose
// AVX2 gain is the VEX encoding (three-operand instructions, fewer register copies): today
// local-to-model. Kernels with their own vector code per instruction set (skinning, the
// blender's fold) dispatch on active_isa() themselves. Measure before adding a copy: the IK
// solvers' AVX2 copies (GCC target_clones until 2026-11) ran 2–9 % slower than their baseline
// code on this project's AVX-512 Intel Xeon test VM (docs/runtime-threading.md, "Instruction
// sets"), so IK has none.
//
// Both copies perform the same float operations in the same order: the project builds with
// -ffp-contract=off, which the target attribute keeps, so no a·b + c becomes an FMA and the
// results are bit-identical on every instruction set (the core and IK tests run each kernel on
// every set the CPU has and compare the bits). The attribute applies to the marked function only:
// inline functions it calls are inlined into the AVX2 copy or called in their baseline form,
// never emitted as AVX2 code another caller could pick up. Being ordinary functions, not ifuncs
// (GCC's target_clones), the copies also work under ThreadSanitizer, whose runtime is not ready
// when ifunc resolvers run.
//
// Pattern (engine/core/src/local_to_model.cpp):
//     SLANIM_ALWAYS_INLINE void body(const Job& job) { ... }
//     void run_baseline(const Job& job) { body(job); }
//     SLANIM_TARGET_AVX2 void run_avx2(const Job& job) { body(job); }
//     ... use_avx2_copy() ? run_avx2(job) : run_baseline(job);
#pragma once

#include "slanim/core/isa.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/// 1 where SLANIM_TARGET_AVX2 makes a distinct AVX2 copy (x86-64 with GCC or Clang).
#define SLANIM_HAS_AVX2_COPIES 1
/// Compiles the marked function for AVX2 + FMA (Isa::Avx2); call it only when use_avx2_copy().
#define SLANIM_TARGET_AVX2 __attribute__((target("avx2,fma")))
#else
#define SLANIM_HAS_AVX2_COPIES 0
#define SLANIM_TARGET_AVX2
#endif

#if defined(__GNUC__) || defined(__clang__)
#define SLANIM_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define SLANIM_ALWAYS_INLINE inline
#endif

namespace slanim {

/// True when the AVX2 copies run: an x86-64 GCC/Clang build and active_isa() ≥ Isa::Avx2.
[[nodiscard]] inline bool use_avx2_copy() { return SLANIM_HAS_AVX2_COPIES && active_isa() >= Isa::Avx2; }

}  // namespace slanim
