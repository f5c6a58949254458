// SPDX-License-Identifier: MIT
// The PoseBlender's vector fold compiled for AVX-512 (one 16-float register per component);
// chosen at run time by blend.cpp when the CPU has AVX-512F.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SLANIM_BLEND_KERNEL_NS avx512
#include "blend_kernel.hpp"
#endif
