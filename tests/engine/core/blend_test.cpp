// SPDX-License-Identifier: MIT
// LLJointStateBlender rules (spec §3.4).
#include <gtest/gtest.h>

#include "slanim/core/blend.hpp"
#include "slanim/core/clip.hpp"
#include "slanim/core/isa.hpp"
#include "test_util.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace slanim;

namespace {

struct Fixture {
    PoseBlender b;
    std::vector<Vec3> pos, scale;
    std::vector<Quat> rot;
    Fixture() : pos(1, Vec3{9.f, 9.f, 9.f}), scale(1, Vec3{1.f, 1.f, 1.f}), rot(1, Quat::identity()) {
        b.resize(1);
    }
    void apply() { b.blend_and_apply({pos, rot, scale}); }
};

JointStateRef state(const Vec3* p, float w, int prio, bool additive = false, const Quat* r = nullptr) {
    JointStateRef s;
    s.position = p;
    s.rotation = r;
    s.weight = w;
    s.priority = static_cast<std::int8_t>(prio);
    s.usage = static_cast<std::uint8_t>((p ? kUsagePos : 0) | (r ? kUsageRot : 0));
    s.additive = additive;
    return s;
}

}  // namespace

TEST(Blend, FirstContributorIsCopiedAtFullStrength) {
    Fixture f;
    const Vec3 a{1.f, 2.f, 3.f};
    f.b.add(0, state(&a, 0.2f, 3));
    f.apply();
    EXPECT_EQ(f.pos[0], a);  // weight 0.2 alone still drives the joint fully
}

TEST(Blend, CapacityLimitedWeightedAverage) {
    Fixture f;
    const Vec3 high{1.f, 0.f, 0.f}, low{0.f, 1.f, 0.f}, lower{0.f, 0.f, 1.f};
    f.b.add(0, state(&low, 1.f, 2));
    f.b.add(0, state(&high, 0.3f, 3));  // sorted before `low`
    f.b.add(0, state(&lower, 1.f, 1));  // capacity already full: contributes nothing
    f.apply();
    // sum 0.3 then min(1, 1.3) = 1: blended = lerp(low, high, 0.3 / 1)
    EXPECT_EQ(f.pos[0], lerp(low, high, 0.3f));
}

TEST(Blend, ZeroWeightStatesAreSkippedAndUntouchedJointsKeepTheirPose) {
    Fixture f;
    const Vec3 a{1.f, 2.f, 3.f};
    f.b.add(0, state(&a, 0.f, 3));
    f.apply();
    EXPECT_EQ(f.pos[0], (Vec3{9.f, 9.f, 9.f}));
    f.apply();  // nothing queued
    EXPECT_EQ(f.pos[0], (Vec3{9.f, 9.f, 9.f}));
}

TEST(Blend, SixSlotsDescendingPriorityNewestFirstOnTies) {
    Fixture f;
    Vec3 v[8];
    for (int i = 0; i < 8; ++i) v[i] = Vec3{static_cast<float>(i), 0.f, 0.f};
    EXPECT_TRUE(f.b.add(0, state(&v[0], 1.f, 2)));  // newest of priority 2
    EXPECT_TRUE(f.b.add(0, state(&v[1], 1.f, 2)));  // older, same priority: goes after
    EXPECT_TRUE(f.b.add(0, state(&v[2], 1.f, 4)));
    EXPECT_TRUE(f.b.add(0, state(&v[3], 1.f, 1)));
    EXPECT_TRUE(f.b.add(0, state(&v[4], 1.f, 3)));
    EXPECT_TRUE(f.b.add(0, state(&v[5], 1.f, 0)));
    EXPECT_EQ(f.b.count(0), 6);
    EXPECT_FALSE(f.b.add(0, state(&v[6], 1.f, 0)));  // all six ≥ 0: dropped
    EXPECT_TRUE(f.b.add(0, state(&v[7], 1.f, 5)));   // pushes the lowest (v5) out
    const int expect[6] = {7, 2, 4, 0, 1, 3};
    for (int s = 0; s < 6; ++s) EXPECT_EQ(f.b.slot(0, s).position, v[expect[s]]) << s;
    f.apply();
    EXPECT_EQ(f.pos[0], v[7]);
}

TEST(Blend, AdditiveAfterAFullOverrideAddsNothingAndRotatesFirst) {
    Fixture f;
    const Vec3 base{1.f, 0.f, 0.f}, add{0.f, 0.f, 5.f};
    f.b.add(0, state(&base, 1.f, 4));
    f.b.add(0, state(&add, 1.f, 2, true));  // after a full-weight state: w' = min(1, 1+1) − 1 = 0
    f.apply();
    EXPECT_EQ(f.pos[0], base);

    Fixture g;
    const Quat base_rot = maya_q(0, 0, 30, EulerOrder::XYZ), add_rot = maya_q(20, 0, 0, EulerOrder::XYZ);
    g.b.add(0, state(nullptr, 1.f, 5, true, &add_rot));  // additive first (higher priority)
    g.b.add(0, state(nullptr, 0.5f, 3, false, &base_rot));
    g.apply();
    const Quat added = ll_mul(ll_nlerp(1.f, Quat::identity(), add_rot), Quat::identity());
    EXPECT_EQ(g.rot[0], ll_mul(added, base_rot));
}

// ---- The vector fold against a plain scalar reference ---------------------------------------
namespace {

// LLJointStateBlender as the viewer writes it (addJointState's sorted insertion into six
// slots, blendJointStates' fold), with pointers to the states, one joint at a time.
struct ReferenceBlender {
    std::vector<std::array<const JointStateRef*, 6>> slots;
    std::vector<int> counts;
    explicit ReferenceBlender(int n) : slots(static_cast<std::size_t>(n)), counts(static_cast<std::size_t>(n), 0) {}
    bool add(int j, const JointStateRef* st) {
        auto& s = slots[static_cast<std::size_t>(j)];
        int& n = counts[static_cast<std::size_t>(j)];
        for (int i = 0; i < 6; ++i) {
            if (i == n) {
                s[static_cast<std::size_t>(i)] = st;
                ++n;
                return true;
            }
            if (st->priority > s[static_cast<std::size_t>(i)]->priority) {
                for (int k = std::min(n, 5); k > i; --k) s[static_cast<std::size_t>(k)] = s[static_cast<std::size_t>(k - 1)];
                s[static_cast<std::size_t>(i)] = st;
                if (n < 6) ++n;
                return true;
            }
        }
        return false;
    }
    void blend(int j, Vec3& pos, Quat& rot, Vec3& scale) const {
        Vec3 bp = pos, bs = scale, ap, as;
        Quat br = rot, ar = Quat::identity();
        float sp = 0.f, sr = 0.f, ss = 0.f;
        std::uint8_t used = 0;
        bool scaled = false;
        for (int i = 0; i < counts[static_cast<std::size_t>(j)]; ++i) {
            const JointStateRef& js = *slots[static_cast<std::size_t>(j)][static_cast<std::size_t>(i)];
            const float w = js.weight;
            if (w == 0.f) continue;
            scaled |= (js.usage & kUsageScale) != 0;
            if (js.additive) {
                if (js.usage & kUsagePos) ap += *js.position * (std::min(1.f, w + sp) - sp);
                if (js.usage & kUsageScale) as += *js.scale * (std::min(1.f, w + ss) - ss);
                if (js.usage & kUsageRot) ar = ll_mul(ll_nlerp(std::min(1.f, w + sr) - sr, ar, *js.rotation), ar);
                continue;
            }
            // Positions and scales: the first contributor copies, later ones lerp toward the blend.
            const auto fold = [&](std::uint8_t bit, Vec3& blended, float& sum, const Vec3& value) {
                if (used & bit) {
                    const float nw = std::min(1.f, w + sum);
                    blended = lerp(value, blended, sum / nw);
                    sum = nw;
                } else {
                    blended = value;
                    sum = w;
                }
            };
            if (js.usage & kUsagePos) fold(kUsagePos, bp, sp, *js.position);
            if (js.usage & kUsageScale) fold(kUsageScale, bs, ss, *js.scale);
            if (js.usage & kUsageRot) {
                if (used & kUsageRot) {
                    const float nw = std::min(1.f, w + sr);
                    br = ll_nlerp(sr / nw, *js.rotation, br);
                    sr = nw;
                } else {
                    br = *js.rotation;
                    sr = w;
                }
            }
            used = static_cast<std::uint8_t>(used | js.usage);
        }
        if (!is_finite(as)) as = Vec3{};
        if (!is_finite(bs)) bs = Vec3{1.f, 1.f, 1.f};
        pos = bp + ap;
        if (scaled) scale = bs + as;
        rot = ll_mul(ar, br);
    }
};

}  // namespace

namespace {
/// Runs `check` once per instruction set this CPU and build have (scalar, SSE2, AVX2, AVX-512:
/// every one up to detected_isa()), restoring the process's choice afterwards.
template <class Check>
void for_each_blend_isa(Check&& check) {
    const test::ActiveIsaGuard guard;
    for (const Isa isa : test::supported_isas()) {
        ASSERT_TRUE(set_active_isa(isa));
        SCOPED_TRACE(isa_name(isa));
        check();
    }
}
}  // namespace

namespace {
void expect_bit_identical_to_the_reference();

// Every joint of a blended pose (p1, r1, s1) bit for bit equal to the reference blender's
// result from the pose before (p0, r0, s0).
void expect_reference_pose(const ReferenceBlender& ref, const std::vector<Vec3>& p0, const std::vector<Quat>& r0,
                           const std::vector<Vec3>& s0, const std::vector<Vec3>& p1, const std::vector<Quat>& r1,
                           const std::vector<Vec3>& s1, int round) {
    for (std::size_t i = 0; i < p0.size(); ++i) {
        Vec3 p = p0[i], s = s0[i];
        Quat r = r0[i];
        if (ref.counts[i]) ref.blend(static_cast<int>(i), p, r, s);
        ASSERT_EQ(std::memcmp(&p, &p1[i], sizeof p), 0) << "round " << round << " joint " << i;
        ASSERT_EQ(std::memcmp(&r, &r1[i], sizeof r), 0) << "round " << round << " joint " << i;
        ASSERT_EQ(std::memcmp(&s, &s1[i], sizeof s), 0) << "round " << round << " joint " << i;
    }
}
}

TEST(Blend, VectorFoldIsBitIdenticalToTheScalarViewerCode) {
    for_each_blend_isa(expect_bit_identical_to_the_reference);
}

namespace {
void expect_bit_identical_to_the_reference() {
    // Random joints of 0..8 offered states: priorities 0..6 (ties, reordering, dropped
    // states), zero, partial and full weights, every usage, some additive or scaled (the
    // scalar path), quaternions in both hemispheres (ll_nlerp's slerp branch), and blocks of
    // 16 where only some lanes have states. 300 rounds over 53 joints (four blocks, one partial).
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.f, 1.f), w01(0.f, 1.f);
    constexpr int kJoints = 53;
    PoseBlender b;
    b.resize(kJoints);
    std::size_t compared = 0, opposite_pairs = 0;
    for (int round = 0; round < 300; ++round) {
        std::vector<JointStateRef> states;
        std::vector<Quat> rots;
        std::vector<Vec3> poss, scales;
        states.reserve(kJoints * 8), rots.reserve(kJoints * 8), poss.reserve(kJoints * 8), scales.reserve(kJoints * 8);
        std::vector<Vec3> p0(kJoints), s0(kJoints, Vec3{1.f, 1.f, 1.f});
        std::vector<Quat> r0(kJoints);
        for (int j = 0; j < kJoints; ++j) {
            p0[static_cast<std::size_t>(j)] = {u(rng), u(rng), u(rng)};
            r0[static_cast<std::size_t>(j)] = ll_normalize(Quat{u(rng), u(rng), u(rng), u(rng)});
        }
        ReferenceBlender ref(kJoints);
        std::vector<std::pair<int, std::size_t>> offers;
        for (int j = 0; j < kJoints; ++j) {
            const int n = (rng() % 3 == 0) ? 0 : static_cast<int>(rng() % 9);
            Quat last = r0[static_cast<std::size_t>(j)];
            for (int k = 0; k < n; ++k) {
                Quat q = ll_normalize(Quat{u(rng), u(rng), u(rng), u(rng)});
                if (dot(q, last) < 0.f) ++opposite_pairs;
                last = q;
                rots.push_back(q);
                poss.push_back({u(rng), u(rng), u(rng)});
                scales.push_back({1.f + 0.1f * u(rng), 1.f, 1.f + 0.1f * u(rng)});
                JointStateRef s;
                s.rotation = &rots.back();
                s.position = &poss.back();
                s.scale = &scales.back();
                const unsigned kind = rng() % 4;
                s.weight = kind == 0 ? 0.f : kind == 1 ? 1.f : w01(rng);
                s.priority = static_cast<std::int8_t>(rng() % 7);
                s.usage = static_cast<std::uint8_t>(1 + rng() % 3);
                if (round % 3 == 0 && rng() % 10 == 0) s.usage |= kUsageScale;
                s.additive = round % 4 == 0 && rng() % 8 == 0;
                states.push_back(s);
                offers.emplace_back(j, states.size() - 1);
            }
        }
        // Offered interleaved across joints, as motions offer their tracks.
        std::shuffle(offers.begin(), offers.end(), rng);
        for (const auto& [j, k] : offers) {
            const bool got = b.add(j, states[k]);
            EXPECT_EQ(got, ref.add(j, &states[k]));
        }
        std::vector<Vec3> p1 = p0, s1 = s0;
        std::vector<Quat> r1 = r0;
        b.blend_and_apply({p1, r1, s1});
        expect_reference_pose(ref, p0, r0, s0, p1, r1, s1, round);
        if (::testing::Test::HasFatalFailure()) return;
        compared += kJoints;
        for (int j = 0; j < kJoints; ++j) EXPECT_EQ(b.count(j), 0);  // cleared for the next frame
    }
    EXPECT_EQ(compared, 300u * kJoints);
    EXPECT_GT(opposite_pairs, 1000u);
}
}  // namespace

TEST(Blend, LayerShapeRejectsWhatAddLayerCannotTake) {
    LayerShape s;
    const std::vector<std::int8_t> p2{1, 1};
    const std::vector<std::uint8_t> u2{kUsageRot, kUsageRot};
    EXPECT_TRUE(s.build(std::vector<std::int16_t>{3, 40}, p2, u2));
    ASSERT_EQ(s.blocks.size(), 2u);
    EXPECT_EQ(s.blocks[0].block, 0);
    EXPECT_EQ(s.blocks[0].mask, 1u << 3);
    EXPECT_EQ(s.blocks[0].first, 0);
    EXPECT_EQ(s.blocks[1].block, 2);
    EXPECT_EQ(s.blocks[1].mask, 1u << 8);
    EXPECT_EQ(s.blocks[1].first, 1);
    EXPECT_FALSE(s.build(std::vector<std::int16_t>{40, 3}, p2, u2));  // not ascending
    EXPECT_TRUE(s.joints.empty() && s.blocks.empty());
    EXPECT_FALSE(s.build(std::vector<std::int16_t>{3, 3}, p2, u2));   // a joint twice
    EXPECT_FALSE(s.build(std::vector<std::int16_t>{-1, 3}, p2, u2));  // negative joint
    EXPECT_FALSE(s.build(std::vector<std::int16_t>{1, 3}, std::vector<std::int8_t>{1, -1}, u2));
    EXPECT_FALSE(s.build(std::vector<std::int16_t>{1}, p2, u2));  // lengths differ
    PoseBlender b;
    b.resize(4);
    b.add_layer(BlendLayer{});  // no shape: nothing
    for (int j = 0; j < 4; ++j) EXPECT_EQ(b.count(j), 0);
}

namespace {
// Frames of random layers (0-9 of them, so some joints get more than six states), each a
// random ascending subset of the joints (some past the blender's joints), with random
// priorities (ties, insertions before earlier states, drops), weights (zero, one, partial),
// usages, scales on some layers, additive layers and loose add() calls between layers. The
// blender fed with add_layer must hold the same slots and produce the same bits as one fed
// with the same states through add(), and as the test's scalar viewer code.
void expect_layers_equal_single_states() {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(-1.f, 1.f), w01(0.f, 1.f);
    constexpr int kJoints = 53;
    // by_layer is inspected (count/slot insert its recorded layers into the slots); folded is
    // not, so with AVX-512 it folds straight from the layers when nothing else was offered.
    PoseBlender by_layer, folded, by_state;
    by_layer.resize(kJoints), folded.resize(kJoints), by_state.resize(kJoints);
    std::size_t kept_total = 0, dropped_total = 0, plain_rounds = 0;
    for (int round = 0; round < 300; ++round) {
        // Up to 9 layers; every 50th round 20 (more than PoseBlender::kMaxDeferred).
        const int layers = round % 50 == 49 ? 20 : static_cast<int>(rng() % 10);
        const bool loose = round % 2 == 0;  // loose add() calls between layers in even rounds
        std::vector<LayerShape> shapes(static_cast<std::size_t>(layers));
        std::vector<std::vector<Quat>> rots(shapes.size());
        std::vector<std::vector<Vec3>> poss(shapes.size()), scales(shapes.size());
        std::vector<BlendLayer> ls(shapes.size());
        for (std::size_t l = 0; l < shapes.size(); ++l) {
            std::vector<std::int16_t> joints;
            std::vector<std::int8_t> prios;
            std::vector<std::uint8_t> usages;
            const unsigned density = 1 + rng() % 4;  // 1: every joint .. 4: about one in four
            // One priority for the whole layer in half the layers, and in every layer of every
            // tenth round (blocks where all layers are uniform fold layer by layer, up to 9 of
            // them: past the six slots).
            const bool uniform = round % 10 == 5 || rng() % 2 == 0;
            const auto prio = static_cast<std::int8_t>(rng() % 7);
            // Some layers have rotation tracks only, some positions only (whole blocks without
            // the other component), the rest a random usage per track.
            const auto usage_kind = static_cast<unsigned>(rng() % 6);
            for (std::int16_t j = 0; j < kJoints + 12; ++j) {
                if (rng() % density != 0) continue;
                joints.push_back(j);
                prios.push_back(uniform ? prio : static_cast<std::int8_t>(rng() % 7));
                // kUsageRot only, kUsagePos only, both (a dense such layer covers whole blocks).
                const auto base = static_cast<unsigned>(usage_kind == 0 ? 2u : usage_kind == 1 ? 1u : usage_kind == 2 ? 3u : 1 + rng() % 3);
                usages.push_back(static_cast<std::uint8_t>(base | (rng() % 6 == 0 ? kUsageScale : 0)));
            }
            ASSERT_TRUE(shapes[l].build(joints, prios, usages));
            for (std::size_t k = 0; k < joints.size(); ++k) {
                rots[l].push_back(ll_normalize(Quat{u(rng), u(rng), u(rng), u(rng)}));
                poss[l].push_back({u(rng), u(rng), u(rng)});
                scales[l].push_back({1.f + 0.1f * u(rng), 1.f, 1.f + 0.1f * u(rng)});
            }
            BlendLayer& bl = ls[l];
            bl.shape = &shapes[l];
            bl.rotations = rng() % 8 == 0 ? nullptr : rots[l].data();
            bl.positions = rng() % 4 == 0 ? nullptr : poss[l].data();
            bl.scales = round % 3 == 0 && rng() % 2 == 0 ? scales[l].data() : nullptr;
            const unsigned kind = rng() % 4;
            bl.weight = kind == 0 ? 0.f : kind == 1 ? 1.f : w01(rng);
            bl.additive = round % 4 == 0 && rng() % 4 == 0;
        }
        std::vector<Vec3> p0(kJoints), s0(kJoints, Vec3{1.f, 1.f, 1.f});
        std::vector<Quat> r0(kJoints);
        for (std::size_t j = 0; j < p0.size(); ++j) {
            p0[j] = {u(rng), u(rng), u(rng)};
            r0[j] = ll_normalize(Quat{u(rng), u(rng), u(rng), u(rng)});
        }
        ReferenceBlender ref(kJoints);
        std::vector<JointStateRef> refs;  // every state offered, for the reference
        refs.reserve(4096);
        const Quat loose_rot = ll_normalize(Quat{0.1f, 0.2f, 0.3f, 0.9f});
        const Vec3 loose_pos{0.5f, -0.5f, 0.25f};
        for (std::size_t l = 0; l < ls.size(); ++l) {
            if (loose && rng() % 3 == 0) {  // a loose state between layers (puppetry, custom motions)
                JointStateRef s;
                s.rotation = &loose_rot, s.position = &loose_pos;
                s.weight = 0.5f, s.priority = static_cast<std::int8_t>(rng() % 7), s.usage = kUsageRot | kUsagePos;
                const int j = static_cast<int>(rng() % kJoints);
                by_layer.add(j, s), folded.add(j, s), by_state.add(j, s);
                refs.push_back(s);
                ref.add(j, &refs.back());
            }
            by_layer.add_layer(ls[l]);
            folded.add_layer(ls[l]);
            int kept_states = 0;
            const LayerShape& sh = shapes[l];
            const std::uint8_t bits = static_cast<std::uint8_t>((ls[l].rotations ? kUsageRot : 0) |
                                                                (ls[l].positions ? kUsagePos : 0) |
                                                                (ls[l].scales ? kUsageScale : 0));
            for (std::size_t k = 0; k < sh.size(); ++k) {
                JointStateRef s;
                s.rotation = ls[l].rotations ? ls[l].rotations + k : nullptr;
                s.position = ls[l].positions ? ls[l].positions + k : nullptr;
                s.scale = ls[l].scales ? ls[l].scales + k : nullptr;
                s.weight = ls[l].weight, s.priority = sh.priorities[k];
                s.usage = static_cast<std::uint8_t>(sh.usages[k] & bits), s.additive = ls[l].additive;
                const bool got = by_state.add(sh.joints[k], s);
                kept_states += got ? 1 : 0;
                dropped_total += got ? 0 : 1;
                refs.push_back(s);
                EXPECT_EQ(sh.joints[k] < kJoints && ref.add(sh.joints[k], &refs.back()), got);
            }
            kept_total += static_cast<std::size_t>(kept_states);
        }
        for (int j = 0; j < kJoints; ++j) {
            ASSERT_EQ(by_layer.count(j), by_state.count(j)) << "round " << round << " joint " << j;
            for (int s = 0; s < by_layer.count(j); ++s) {
                const QueuedJointState a = by_layer.slot(j, s), e = by_state.slot(j, s);
                ASSERT_EQ(a.priority, e.priority);
                ASSERT_EQ(a.usage, e.usage);
                ASSERT_EQ(a.additive, e.additive);
                ASSERT_EQ(std::memcmp(&a.weight, &e.weight, sizeof a.weight), 0);
                if (a.usage & kUsageRot) {
                    ASSERT_EQ(std::memcmp(&a.rotation, &e.rotation, sizeof a.rotation), 0);
                }
                if (a.usage & kUsagePos) {
                    ASSERT_EQ(std::memcmp(&a.position, &e.position, sizeof a.position), 0);
                }
                if (a.usage & kUsageScale) {
                    ASSERT_EQ(std::memcmp(&a.scale, &e.scale, sizeof a.scale), 0);
                }
            }
        }
        bool plain = !loose && layers <= PoseBlender::kMaxDeferred;
        for (const BlendLayer& bl : ls) plain = plain && !bl.additive && !bl.scales;
        plain_rounds += plain ? 1 : 0;
        std::vector<Vec3> pa = p0, sa = s0, pb = p0, sb = s0, pc = p0, sc = s0;
        std::vector<Quat> ra = r0, rb = r0, rc = r0;
        folded.blend_and_apply({pc, rc, sc});
        expect_reference_pose(ref, p0, r0, s0, pc, rc, sc, round);
        if (::testing::Test::HasFatalFailure()) return;
        by_layer.blend_and_apply({pa, ra, sa});
        by_state.blend_and_apply({pb, rb, sb});
        expect_reference_pose(ref, p0, r0, s0, pa, ra, sa, round);
        if (::testing::Test::HasFatalFailure()) return;
        expect_reference_pose(ref, p0, r0, s0, pb, rb, sb, round);
        if (::testing::Test::HasFatalFailure()) return;
    }
    EXPECT_GT(kept_total, 10000u);
    EXPECT_GT(plain_rounds, 80u);  // rounds whose layers alone make the frame
    EXPECT_GT(dropped_total, 100u);  // some joints had more than six states
}
}  // namespace

TEST(Blend, LayersBlendLikeTheirStatesOfferedOneByOne) {
    for_each_blend_isa(expect_layers_equal_single_states);
}

namespace {
// States after a full-weight one blend with t = 1 (the capped sum saturates), so the nlerp's
// result is the blend so far and LLQuaternion::normalize decides whether to rescale it: only
// when |1 − |q|| > 1e-6. Blends of quaternions whose squared length is 1 + d for d across that
// threshold (both sides, fine steps), as a pose rotation and as offered states, in layers and
// state by state, must keep the scalar viewer code's bits.
void expect_near_unit_blends_like_the_viewer() {
    constexpr int kJoints = 48;
    std::vector<Quat> first(kJoints), second(kJoints);
    std::vector<Vec3> pos(kJoints, Vec3{0.1f, 0.2f, 0.3f});
    for (int j = 0; j < kJoints; ++j) {
        const float d = 1e-7f * static_cast<float>(j - kJoints / 2) * 2.5f;  // -6e-6 .. 5.75e-6
        const Quat unit = ll_normalize(Quat{0.1f * static_cast<float>(j % 5), 0.3f, -0.2f, 0.9f});
        const float s = std::sqrt(1.f + d);
        first[static_cast<std::size_t>(j)] = Quat{unit.x * s, unit.y * s, unit.z * s, unit.w * s};
        second[static_cast<std::size_t>(j)] = ll_normalize(Quat{0.2f, -0.1f, 0.4f, 0.8f});
    }
    std::vector<std::int16_t> joints(kJoints);
    for (int j = 0; j < kJoints; ++j) joints[static_cast<std::size_t>(j)] = static_cast<std::int16_t>(j);
    const std::vector<std::uint8_t> usages(kJoints, kUsageRot | kUsagePos);
    for (const float w2 : {1.f, 0.5f, 0.f}) {
        LayerShape a, b;
        ASSERT_TRUE(a.build(joints, std::vector<std::int8_t>(kJoints, 3), usages));
        ASSERT_TRUE(b.build(joints, std::vector<std::int8_t>(kJoints, 2), usages));
        BlendLayer la{&a, first.data(), pos.data(), nullptr, 1.f, false};
        BlendLayer lb{&b, second.data(), pos.data(), nullptr, w2, false};
        PoseBlender layered, single;
        layered.resize(kJoints), single.resize(kJoints);
        ReferenceBlender ref(kJoints);
        std::vector<JointStateRef> refs;
        refs.reserve(2 * kJoints);
        for (const BlendLayer* l : {&la, &lb}) {
            layered.add_layer(*l);
            for (int j = 0; j < kJoints; ++j) {
                JointStateRef st;
                st.rotation = l->rotations + j, st.position = l->positions + j;
                st.weight = l->weight, st.priority = l->shape->priorities[static_cast<std::size_t>(j)];
                st.usage = kUsageRot | kUsagePos;
                single.add(j, st);
                refs.push_back(st);
                ref.add(j, &refs.back());
            }
        }
        // The pose's rotations are the near-unit ones too (untouched lanes keep them).
        std::vector<Vec3> p0(kJoints), s0(kJoints, Vec3{1.f, 1.f, 1.f});
        std::vector<Quat> r0 = first;
        std::vector<Vec3> pa = p0, sa = s0, pb = p0, sb = s0;
        std::vector<Quat> ra = r0, rb = r0;
        layered.blend_and_apply({pa, ra, sa});
        single.blend_and_apply({pb, rb, sb});
        expect_reference_pose(ref, p0, r0, s0, pa, ra, sa, static_cast<int>(w2 * 10));
        if (::testing::Test::HasFatalFailure()) return;
        expect_reference_pose(ref, p0, r0, s0, pb, rb, sb, static_cast<int>(w2 * 10));
        if (::testing::Test::HasFatalFailure()) return;
    }
    // The threshold was crossed: some results were rescaled, some kept as offered.
    int rescaled = 0;
    for (int j = 0; j < kJoints; ++j) {
        Vec3 p{}, s{1.f, 1.f, 1.f};
        Quat r = first[static_cast<std::size_t>(j)];
        ReferenceBlender ref(1);
        JointStateRef a, b;
        a.rotation = &first[static_cast<std::size_t>(j)], a.weight = 1.f, a.priority = 3, a.usage = kUsageRot;
        b.rotation = &second[static_cast<std::size_t>(j)], b.weight = 1.f, b.priority = 2, b.usage = kUsageRot;
        ref.add(0, &a), ref.add(0, &b);
        ref.blend(0, p, r, s);
        rescaled += std::memcmp(&r, &first[static_cast<std::size_t>(j)], sizeof r) != 0;
    }
    EXPECT_GT(rescaled, 4);
    EXPECT_LT(rescaled, kJoints - 4);
}
}  // namespace

TEST(Blend, NearUnitQuaternionsKeepTheViewersNormalisation) {
    for_each_blend_isa(expect_near_unit_blends_like_the_viewer);
}

namespace {
// Rotations with signed zeros, denormals and infinities in their components: the fold's ending
// (ll_mul by the identity added rotation) can turn a −0 component into +0 and an infinity into
// NaN, so the vector code must keep the viewer's operations there, and may skip them only where
// no component is −0, infinite or NaN.
void expect_special_components_like_the_viewer() {
    constexpr int kJoints = 128;  // 8 blocks of 16: one kind of special value per block, the last plain
    const float specials[] = {0.f, -0.f, 1e-40f, -1e-40f, std::numeric_limits<float>::infinity(), 0.5f, -0.5f};
    std::vector<Quat> rots(kJoints);
    std::vector<Vec3> pos(kJoints, Vec3{0.f, -0.f, 1.f});
    for (int j = 0; j < kJoints; ++j) {
        Quat q = ll_normalize(Quat{0.3f, -0.2f, 0.1f, 0.9f});
        // Block k < 7: specials[k] in one component of each joint (the component cycling).
        if (j < 112) (&q.x)[j % 4] = specials[j / 16];
        rots[static_cast<std::size_t>(j)] = q;
    }
    std::vector<std::int16_t> joints(kJoints);
    for (int j = 0; j < kJoints; ++j) joints[static_cast<std::size_t>(j)] = static_cast<std::int16_t>(j);
    LayerShape shape;
    ASSERT_TRUE(shape.build(joints, std::vector<std::int8_t>(kJoints, 1), std::vector<std::uint8_t>(kJoints, kUsageRot | kUsagePos)));
    for (const float w : {1.f, 0.7f}) {
        PoseBlender layered;
        layered.resize(kJoints);
        layered.add_layer(BlendLayer{&shape, rots.data(), pos.data(), nullptr, w, false});
        ReferenceBlender ref(kJoints);
        std::vector<JointStateRef> refs(kJoints);
        for (int j = 0; j < kJoints; ++j) {
            JointStateRef& st = refs[static_cast<std::size_t>(j)];
            st.rotation = &rots[static_cast<std::size_t>(j)], st.position = &pos[static_cast<std::size_t>(j)];
            st.weight = w, st.priority = 1, st.usage = kUsageRot | kUsagePos;
            ref.add(j, &st);
        }
        std::vector<Vec3> p0(kJoints), s0(kJoints, Vec3{1.f, 1.f, 1.f}), p1 = p0, s1 = s0;
        std::vector<Quat> r0(kJoints, Quat::identity()), r1 = r0;
        layered.blend_and_apply({p1, r1, s1});
        expect_reference_pose(ref, p0, r0, s0, p1, r1, s1, static_cast<int>(w * 10));
        if (::testing::Test::HasFatalFailure()) return;
    }
}
}  // namespace

TEST(Blend, SignedZerosAndInfinitiesKeepTheViewersBits) {
    for_each_blend_isa(expect_special_components_like_the_viewer);
}

namespace {
// Six weightless layers ahead of a layer that covers every joint with rotations and positions:
// the covering layer falls past the sixth slot, nothing is blended, and every joint keeps the
// pose it had (through the fold's ending, as the viewer's code).
void expect_a_dropped_covering_layer_to_leave_the_pose() {
    constexpr int kJoints = 20;
    std::vector<std::int16_t> joints(kJoints);
    for (int j = 0; j < kJoints; ++j) joints[static_cast<std::size_t>(j)] = static_cast<std::int16_t>(j);
    const std::vector<std::uint8_t> usages(kJoints, kUsageRot | kUsagePos);
    LayerShape ahead, cover;
    ASSERT_TRUE(ahead.build(joints, std::vector<std::int8_t>(kJoints, 5), usages));
    ASSERT_TRUE(cover.build(joints, std::vector<std::int8_t>(kJoints, 1), usages));
    const std::vector<Quat> rots(kJoints, ll_normalize(Quat{0.2f, 0.1f, -0.3f, 0.9f}));
    const std::vector<Vec3> pos(kJoints, Vec3{0.5f, 0.25f, -0.125f});
    PoseBlender b;
    b.resize(kJoints);
    ReferenceBlender ref(kJoints);
    std::vector<JointStateRef> refs;
    refs.reserve(7 * kJoints);
    for (int l = 0; l < 7; ++l) {
        const bool covering = l == 6;
        b.add_layer(BlendLayer{covering ? &cover : &ahead, rots.data(), pos.data(), nullptr, covering ? 1.f : 0.f, false});
        for (int j = 0; j < kJoints; ++j) {
            JointStateRef st;
            st.rotation = &rots[static_cast<std::size_t>(j)], st.position = &pos[static_cast<std::size_t>(j)];
            st.weight = covering ? 1.f : 0.f, st.priority = covering ? 1 : 5, st.usage = kUsageRot | kUsagePos;
            refs.push_back(st);
            ref.add(j, &refs.back());
        }
    }
    std::vector<Vec3> p0(kJoints), s0(kJoints, Vec3{1.f, 1.f, 1.f});
    std::vector<Quat> r0(kJoints);
    for (int j = 0; j < kJoints; ++j) {
        p0[static_cast<std::size_t>(j)] = {0.01f * static_cast<float>(j), 1.f, 2.f};
        r0[static_cast<std::size_t>(j)] = ll_normalize(Quat{0.1f, 0.01f * static_cast<float>(j), 0.3f, 0.8f});
    }
    std::vector<Vec3> p1 = p0, s1 = s0;
    std::vector<Quat> r1 = r0;
    b.blend_and_apply({p1, r1, s1});
    expect_reference_pose(ref, p0, r0, s0, p1, r1, s1, 0);
}
}  // namespace

TEST(Blend, ACoveringLayerPastTheSixthSlotLeavesThePose) {
    for_each_blend_isa(expect_a_dropped_covering_layer_to_leave_the_pose);
}

namespace {
// Frames whose layers each have one priority over all their tracks, at most six of them, and
// nothing else offered: the vector folds take them layer by layer in one slot order
// (blend_lanes.hpp, fold_by_layer). Dense layers (a rotation and a position on every joint),
// sparse ones, rotation-only and position-only ones, priority ties, zero, partial and full
// weights (a zero-weight layer first too), quaternions in both hemispheres, over 53 joints and
// over 214 (the default skeleton: a partial last chunk on every instruction set); the pose must
// be the scalar viewer code's, bit for bit.
/// Offers `ls` to `blender` as layers and to `ref` as the same states one by one (`refs` holds
/// them: reserved for every state), blends both onto one random pose of `joints` joints and
/// compares them (expect_reference_pose).
void blend_layers_like_the_reference(PoseBlender& blender, const std::vector<BlendLayer>& ls, ReferenceBlender& ref,
                                     std::vector<JointStateRef>& refs, int joints, std::mt19937& rng, int round) {
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (const BlendLayer& l : ls) {
        blender.add_layer(l);
        for (std::size_t k = 0; k < l.shape->size(); ++k) {
            JointStateRef s;
            s.rotation = l.rotations + k, s.position = l.positions + k;
            s.weight = l.weight, s.priority = l.shape->priorities[k], s.usage = l.shape->usages[k];
            refs.push_back(s);
            ref.add(l.shape->joints[k], &refs.back());
        }
    }
    std::vector<Vec3> p0(static_cast<std::size_t>(joints)), s0(p0.size(), Vec3{1.f, 1.f, 1.f});
    std::vector<Quat> r0(p0.size());
    for (std::size_t j = 0; j < p0.size(); ++j) {
        p0[j] = {u(rng), u(rng), u(rng)};
        r0[j] = ll_normalize(Quat{u(rng), u(rng), u(rng), u(rng)});
    }
    std::vector<Vec3> p1 = p0, s1 = s0;
    std::vector<Quat> r1 = r0;
    blender.blend_and_apply({p1, r1, s1});
    expect_reference_pose(ref, p0, r0, s0, p1, r1, s1, round);
}

void expect_layers_of_one_priority_like_the_viewer() {
    std::mt19937 rng(23);
    std::uniform_real_distribution<float> u(-1.f, 1.f), w01(0.f, 1.f);
    int dense_layers = 0, zero_first = 0;
    for (const int joints : {53, 214}) {
        PoseBlender blender;
        blender.resize(joints);
        for (int round = 0; round < 150; ++round) {
            const int layers = 1 + static_cast<int>(rng() % PoseBlender::kSlots);
            std::vector<LayerShape> shapes(static_cast<std::size_t>(layers));
            std::vector<std::vector<Quat>> rots(shapes.size());
            std::vector<std::vector<Vec3>> poss(shapes.size());
            std::vector<BlendLayer> ls(shapes.size());
            for (std::size_t l = 0; l < shapes.size(); ++l) {
                const bool dense = rng() % 2 == 0;
                const unsigned density = dense ? 1u : 1u + static_cast<unsigned>(rng() % 3);
                const unsigned usage_kind = dense ? 2 : static_cast<unsigned>(rng() % 4);
                const auto prio = static_cast<std::int8_t>(rng() % 4);  // ties are common
                std::vector<std::int16_t> js;
                std::vector<std::uint8_t> usages;
                for (int j = 0; j < joints; ++j) {
                    if (rng() % density != 0) continue;
                    js.push_back(static_cast<std::int16_t>(j));
                    const unsigned both = kUsageRot | kUsagePos;
                    const unsigned usage = usage_kind == 0   ? unsigned{kUsageRot}
                                           : usage_kind == 1 ? unsigned{kUsagePos}
                                           : usage_kind == 2 ? both
                                                             : 1u + static_cast<unsigned>(rng() % 3);
                    usages.push_back(static_cast<std::uint8_t>(usage));
                }
                ASSERT_TRUE(shapes[l].build(js, std::vector<std::int8_t>(js.size(), prio), usages));
                for (std::size_t k = 0; k < js.size(); ++k) {
                    rots[l].push_back(ll_normalize(Quat{u(rng), u(rng), u(rng), u(rng)}));
                    poss[l].push_back({u(rng), u(rng), u(rng)});
                }
                const unsigned kind = rng() % 4;
                const float w = (l == 0 && round % 7 == 3) ? 0.f : kind == 0 ? 0.f : kind == 1 ? 1.f : w01(rng);
                ls[l] = BlendLayer{&shapes[l], rots[l].data(), poss[l].data(), nullptr, w, false};
                dense_layers += dense ? 1 : 0;
                zero_first += l == 0 && w == 0.f ? 1 : 0;
            }
            ReferenceBlender ref(joints);
            std::vector<JointStateRef> refs;
            refs.reserve(static_cast<std::size_t>(layers * joints));
            blend_layers_like_the_reference(blender, ls, ref, refs, joints, rng, round);
            if (::testing::Test::HasFatalFailure()) return;
        }
    }
    EXPECT_GT(dense_layers, 300);
    EXPECT_GT(zero_first, 20);
}
}  // namespace

TEST(Blend, LayersOfOnePriorityEachBlendLikeTheViewer) {
    for_each_blend_isa(expect_layers_of_one_priority_like_the_viewer);
}

namespace {
// Two to six live layers with rotations and positions on the same joints (a dense run: the
// vector folds take every full chunk's layers at once in registers, two chunks side by side,
// and the other chunks layer after layer): every joint against the viewer's code. The joints
// are all of the skeleton's or all but a few (chunks with holes), some layers share one shape,
// the weights saturate or not (a few are NaN: the capped sum of a NaN is 1), priorities tie,
// rotations lie in both hemispheres, and a few components are −0, infinite or NaN.
void expect_dense_runs_like_the_viewer() {
    std::mt19937 rng(31);
    std::uniform_real_distribution<float> u(-1.f, 1.f), w01(0.001f, 1.f);
    const float specials[] = {-0.f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()};
    for (const int joints : {40, 53, 214}) {
        PoseBlender blender;
        blender.resize(joints);
        for (int round = 0; round < 60; ++round) {
            const int layers = 2 + static_cast<int>(rng() % (PoseBlender::kSlots - 1));
            std::vector<std::int16_t> js;
            const bool holes = round % 3 == 2;
            for (int j = 0; j < joints; ++j)
                if (!holes || rng() % 16 != 0) js.push_back(static_cast<std::int16_t>(j));
            const std::vector<std::uint8_t> usages(js.size(), kUsageRot | kUsagePos);
            std::vector<LayerShape> shapes(static_cast<std::size_t>(layers));
            std::vector<std::vector<Quat>> rots(shapes.size());
            std::vector<std::vector<Vec3>> poss(shapes.size());
            std::vector<BlendLayer> ls(shapes.size());
            for (std::size_t l = 0; l < shapes.size(); ++l) {
                const auto prio = static_cast<std::int8_t>(rng() % 3);  // ties are common
                ASSERT_TRUE(shapes[l].build(js, std::vector<std::int8_t>(js.size(), prio), usages));
                for (std::size_t k = 0; k < js.size(); ++k) {
                    Quat q = ll_normalize(Quat{u(rng), u(rng), u(rng), u(rng)});
                    if (rng() % 64 == 0) (&q.x)[rng() % 4] = specials[rng() % 3];
                    rots[l].push_back(q);
                    poss[l].push_back({u(rng), u(rng), u(rng)});
                }
                const auto kind = static_cast<unsigned>(rng() % 32);
                const float nan = std::numeric_limits<float>::quiet_NaN();
                const float w = kind < 10 ? 1.f : kind < 20 ? 0.5f : kind < 31 ? w01(rng) : nan;
                // Every third layer after the first on the first's shape object.
                const LayerShape* shape = (l > 0 && l % 3 == 0) ? &shapes[0] : &shapes[l];
                ls[l] = BlendLayer{shape, rots[l].data(), poss[l].data(), nullptr, w, false};
            }
            ReferenceBlender ref(joints);
            std::vector<JointStateRef> refs;
            refs.reserve(static_cast<std::size_t>(layers) * js.size());
            blend_layers_like_the_reference(blender, ls, ref, refs, joints, rng, round);
            if (::testing::Test::HasFatalFailure()) return;
        }
    }
}
}  // namespace

TEST(Blend, DenseLayersOnTheSameJointsBlendLikeTheViewer) {
    for_each_blend_isa(expect_dense_runs_like_the_viewer);
}
