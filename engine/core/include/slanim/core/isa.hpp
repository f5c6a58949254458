// SPDX-License-Identifier: MIT
// The instruction set the vector kernels run on: one CPU probe and one choice for the process.
//
// Every kernel with several instruction-set paths (the blender's fold, local-to-model, skinning)
// asks active_isa() which one to run. The blender's and local-to-model's paths give the same bits
// (the project builds with -ffp-contract=off, so no FMA is formed where the scalar viewer code
// rounds twice) and differ in speed only; skinning's SSE2 kernels give the scalar bits too, its
// AVX2/AVX-512 kernels use FMA and an approximate reciprocal square root, within ~1e-6 of the
// scalar kernel (docs/skinning.md). The choice
// starts as the best the CPU has and can be lowered, never raised past the CPU:
//   - by the environment: SLANIM_ISA=avx512|avx2|sse2|scalar read once, at the first call of
//     active_isa(). An unknown name, or one the CPU or the build lacks, prints one warning
//     line on stderr and keeps the best available path (never an illegal instruction);
//   - by the API: set_active_isa(), for tests and benchmarks that compare paths in one process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace slanim {

/// Instruction sets, ordered: each includes the ones before it.
enum class Isa : std::uint8_t {
    Scalar,  ///< the plain C++ code only (any CPU; non-x86 builds)
    Sse2,    ///< x86-64 baseline
    Avx2,    ///< AVX2 + FMA (FMA only where the scalar code has no separate rounding)
    Avx512,  ///< AVX-512 F, DQ, VL, BW
};

/// "scalar", "sse2", "avx2", "avx512".
[[nodiscard]] const char* isa_name(Isa isa);
/// The inverse of isa_name (exact lower-case names); nullopt for anything else.
[[nodiscard]] std::optional<Isa> parse_isa(std::string_view name);

/// What SLANIM_ISA=`name` selects where `best` is the best set available: the named set when
/// `name` is one of isa_name()'s and ≤ `best`; else `best`, with `warning` set to the one line
/// (no newline) active_isa() prints on stderr. An empty `name` selects `best` silently. Pure.
[[nodiscard]] Isa choose_isa(std::string_view name, Isa best, std::string& warning);

/// The best instruction set this CPU and this build support (probed once, thread-safe).
[[nodiscard]] Isa detected_isa();

/// The instruction set the kernels use now: detected_isa(), or lower when SLANIM_ISA or
/// set_active_isa() asked for less. Thread-safe to read.
[[nodiscard]] Isa active_isa();

/// Makes every kernel of the process use `isa`. Returns false, changing nothing, when `isa` is
/// above detected_isa(). Not thread-safe against running kernels: call while none runs.
bool set_active_isa(Isa isa);

/// True when `isa` ≤ detected_isa().
[[nodiscard]] inline bool isa_supported(Isa isa) { return static_cast<int>(isa) <= static_cast<int>(detected_isa()); }

}  // namespace slanim
