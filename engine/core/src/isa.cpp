// SPDX-License-Identifier: MIT
#include "slanim/core/isa.hpp"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace slanim {

namespace {

Isa probe() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
    if (avx512) return Isa::Avx512;
    if (avx2) return Isa::Avx2;
    return Isa::Sse2;
#elif defined(__wasm_simd128__) && defined(__SSE2__)
    // WebAssembly with 128-bit SIMD (cmake/SlanimWasm.cmake: -msimd128 -msse2): the SSE2 paths
    // compile to wasm SIMD through Emscripten's <emmintrin.h>, same operations, same bits.
    return Isa::Sse2;
#else
    return Isa::Scalar;
#endif
}

/// The start value: detected, lowered by SLANIM_ISA when it names a supported set.
Isa initial() {
    const char* env = std::getenv("SLANIM_ISA");
    std::string warning;
    const Isa isa = choose_isa(env != nullptr ? env : "", detected_isa(), warning);
    if (!warning.empty()) std::fprintf(stderr, "%s\n", warning.c_str());
    return isa;
}

/// The choice; kUnset until the first active_isa() or set_active_isa(). Constant-initialised,
/// so reading it never waits on a guard and is safe from any static initialiser.
constexpr std::uint8_t kUnset = 0xFF;
constinit std::atomic<std::uint8_t> g_active{kUnset};

/// The first read: SLANIM_ISA applied (and its warning printed) once, whichever thread comes first.
Isa first_active() {
    static const Isa start = initial();
    std::uint8_t expected = kUnset;
    g_active.compare_exchange_strong(expected, static_cast<std::uint8_t>(start), std::memory_order_relaxed);
    return static_cast<Isa>(g_active.load(std::memory_order_relaxed));
}

}  // namespace

const char* isa_name(Isa isa) {
    switch (isa) {
        case Isa::Scalar: return "scalar";
        case Isa::Sse2: return "sse2";
        case Isa::Avx2: return "avx2";
        case Isa::Avx512: return "avx512";
    }
    return "?";
}

std::optional<Isa> parse_isa(std::string_view name) {
    for (Isa isa : {Isa::Scalar, Isa::Sse2, Isa::Avx2, Isa::Avx512})
        if (name == isa_name(isa)) return isa;
    return std::nullopt;
}

Isa choose_isa(std::string_view name, Isa best, std::string& warning) {
    warning.clear();
    if (name.empty()) return best;
    const std::optional<Isa> asked = parse_isa(name);
    const auto note = [&](const char* why) {
        warning = "slanim: warning: SLANIM_ISA=" + std::string(name) + why + isa_name(best);
    };
    if (!asked) {
        note(" is not one of avx512, avx2, sse2, scalar; using ");
        return best;
    }
    if (static_cast<int>(*asked) > static_cast<int>(best)) {
        note(": this CPU or build lacks it; using ");
        return best;
    }
    return *asked;
}

Isa detected_isa() {
    static const Isa best = probe();
    return best;
}

Isa active_isa() {
    const std::uint8_t isa = g_active.load(std::memory_order_relaxed);
    return isa != kUnset ? static_cast<Isa>(isa) : first_active();
}

bool set_active_isa(Isa isa) {
    if (!isa_supported(isa)) return false;
    (void)first_active();  // SLANIM_ISA's warning, if any, still printed once
    g_active.store(static_cast<std::uint8_t>(isa), std::memory_order_relaxed);
    return true;
}

}  // namespace slanim
