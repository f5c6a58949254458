// SPDX-License-Identifier: MIT
#include "slanim/core/isa.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>

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
#else
    return Isa::Scalar;
#endif
}

/// The start value: detected, lowered by SLANIM_ISA when it names a supported set.
Isa initial() {
    const Isa best = detected_isa();
    const char* env = std::getenv("SLANIM_ISA");
    if (env == nullptr || *env == '\0') return best;
    const std::optional<Isa> asked = parse_isa(env);
    if (!asked) {
        std::fprintf(stderr, "slanim: warning: SLANIM_ISA=%s is not one of avx512, avx2, sse2, scalar; using %s\n",
                     env, isa_name(best));
        return best;
    }
    if (static_cast<int>(*asked) > static_cast<int>(best)) {
        std::fprintf(stderr, "slanim: warning: SLANIM_ISA=%s: this CPU or build lacks it; using %s\n", env,
                     isa_name(best));
        return best;
    }
    return *asked;
}

std::atomic<Isa>& current() {
    static std::atomic<Isa> isa{initial()};
    return isa;
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

Isa detected_isa() {
    static const Isa best = probe();
    return best;
}

Isa active_isa() { return current().load(std::memory_order_relaxed); }

bool set_active_isa(Isa isa) {
    if (!isa_supported(isa)) return false;
    current().store(isa, std::memory_order_relaxed);
    return true;
}

}  // namespace slanim
