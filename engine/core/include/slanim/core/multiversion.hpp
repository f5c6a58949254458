// SPDX-License-Identifier: MIT
// SLANIM_AVX2_CLONES: function multiversioning for hot scalar code. On x86-64 with GCC or Clang
// the marked function is compiled twice, for the baseline and for AVX2, and the dynamic loader
// picks one at start (an ifunc). The float operations are the same (the project builds with
// -ffp-contract=off, so no FMA is formed), hence the same bits; the AVX2 copy runs faster
// (three-operand VEX encoding, wider moves). Empty elsewhere, and under ThreadSanitizer: an
// ifunc resolver runs during relocation, before TSan's shadow memory exists, and crashes the
// program at start.
#pragma once

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SLANIM_NO_MULTIVERSION 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define SLANIM_NO_MULTIVERSION 1
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(SLANIM_NO_MULTIVERSION)
#define SLANIM_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define SLANIM_AVX2_CLONES
#endif
