// SPDX-License-Identifier: MIT
// The instruction-set choice (slanim/core/isa.hpp): names, SLANIM_ISA's rules, the override, and
// local-to-model giving the same bits on every instruction set the CPU has.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <vector>

#include "slanim/core/isa.hpp"
#include "slanim/core/local_to_model.hpp"
#include "slanim/core/skeleton.hpp"
#include "test_util.hpp"

namespace slanim {
namespace {

constexpr Isa kAll[] = {Isa::Scalar, Isa::Sse2, Isa::Avx2, Isa::Avx512};

TEST(IsaChoice, NamesRoundTripAndOthersAreRejected) {
    for (Isa isa : kAll) EXPECT_EQ(parse_isa(isa_name(isa)), isa) << isa_name(isa);
    for (const char* bad : {"", "AVX2", "avx", "avx-512", "sse4.1", "avx2 "})
        EXPECT_FALSE(parse_isa(bad).has_value()) << '"' << bad << '"';
}

TEST(IsaChoice, ASupportedNameSelectsItSilently) {
    std::string warning = "stale";
    EXPECT_EQ(choose_isa("sse2", Isa::Avx2, warning), Isa::Sse2);
    EXPECT_EQ(warning, "");
    EXPECT_EQ(choose_isa("avx2", Isa::Avx2, warning), Isa::Avx2);
    EXPECT_EQ(choose_isa("scalar", Isa::Avx512, warning), Isa::Scalar);
    EXPECT_EQ(choose_isa("", Isa::Avx512, warning), Isa::Avx512);  // unset: the best
    EXPECT_EQ(warning, "");
}

TEST(IsaChoice, AnUnknownNameWarnsOnceAndKeepsTheBest) {
    std::string warning;
    EXPECT_EQ(choose_isa("avx3", Isa::Avx2, warning), Isa::Avx2);
    EXPECT_EQ(warning, "slanim: warning: SLANIM_ISA=avx3 is not one of avx512, avx2, sse2, scalar; using avx2");
    EXPECT_EQ(warning.find('\n'), std::string::npos);
}

TEST(IsaChoice, ASetTheCpuLacksWarnsAndKeepsTheBest) {
    std::string warning;
    EXPECT_EQ(choose_isa("avx512", Isa::Avx2, warning), Isa::Avx2);
    EXPECT_EQ(warning, "slanim: warning: SLANIM_ISA=avx512: this CPU or build lacks it; using avx2");
    EXPECT_EQ(choose_isa("avx2", Isa::Sse2, warning), Isa::Sse2);
    EXPECT_NE(warning.find("lacks it; using sse2"), std::string::npos);
}

TEST(IsaChoice, TheOverrideNeverGoesAboveTheCpu) {
    const test::ActiveIsaGuard guard;
    EXPECT_LE(static_cast<int>(active_isa()), static_cast<int>(detected_isa()));
    for (Isa isa : kAll) {
        const Isa before = active_isa();
        EXPECT_EQ(set_active_isa(isa), isa_supported(isa)) << isa_name(isa);
        EXPECT_EQ(active_isa(), isa_supported(isa) ? isa : before) << isa_name(isa);
    }
}

// The process-wide choice follows SLANIM_ISA (tests/CMakeLists.txt runs the core and IK suites
// with SLANIM_ISA=avx2, sse2 and scalar, and an unknown name, whose warning ctest checks).
TEST(IsaEnv, ActiveIsaIsWhatSlanimIsaAsksWithinTheCpu) {
    const char* env = std::getenv("SLANIM_ISA");
    std::string warning;
    const Isa want = choose_isa(env ? env : "", detected_isa(), warning);
    std::cout << "[   INFO   ] detected " << isa_name(detected_isa()) << ", SLANIM_ISA="
              << (env ? env : "(unset)") << ", active " << isa_name(active_isa()) << "\n";
    EXPECT_EQ(active_isa(), want);
}

// LocalToModelJob's four-joint SSE2 lanes (also as an AVX2 copy) and its one-joint scalar loop
// give the viewer formula's bits, computed here in joint order, on every instruction set.
TEST(LocalToModelIsa, EveryInstructionSetGivesTheJointOrderLoopsBits) {
    const test::ActiveIsaGuard guard;
    const auto s = Skeleton::default_skeleton();
    const auto n = static_cast<std::size_t>(s->num_joints());
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (int trial = 0; trial < 10; ++trial) {
        std::vector<Vec3> lp(n), ls(n), rp(n);
        std::vector<Quat> lr(n), rr(n);
        for (std::size_t j = 0; j < n; ++j) {
            lp[j] = {u(rng), u(rng), u(rng)};
            ls[j] = {1.f + 0.3f * u(rng), 1.f + 0.3f * u(rng), 1.f + 0.3f * u(rng)};
            lr[j] = quat_from_axis_angle(3.f * u(rng), {u(rng), u(rng), u(rng) + 0.1f});
        }
        const Vec3 root_position{u(rng), u(rng), u(rng)};
        const Quat root_rotation = quat_from_axis_angle(u(rng), {0.f, 0.f, 1.f});
        for (std::size_t j = 0; j < n; ++j) {
            const int p = s->parent(static_cast<int>(j));
            const auto pi = static_cast<std::size_t>(p);
            const Vec3 ppos = p >= 0 ? rp[pi] : root_position;
            const Quat prot = p >= 0 ? rr[pi] : root_rotation;
            const Vec3 pscale = p >= 0 ? ls[pi] : Vec3{1.f, 1.f, 1.f};
            rp[j] = rotate(scaled(lp[j], pscale), prot) + ppos;
            rr[j] = ll_mul(lr[j], prot);
        }
        for (Isa isa : test::supported_isas()) {
            ASSERT_TRUE(set_active_isa(isa));
            std::vector<Vec3> mp(n);
            std::vector<Quat> mr(n);
            const LocalToModelJob job{s.get(), lp, lr, ls, root_position, root_rotation, mp, mr};
            ASSERT_TRUE(job.run());
            EXPECT_EQ(std::memcmp(mp.data(), rp.data(), n * sizeof(Vec3)), 0) << isa_name(isa) << " trial " << trial;
            EXPECT_EQ(std::memcmp(mr.data(), rr.data(), n * sizeof(Quat)), 0) << isa_name(isa) << " trial " << trial;
        }
    }
}

}  // namespace
}  // namespace slanim
