// SPDX-License-Identifier: MIT
// The animated layer of the visual params (visual_params.hpp, AnimatedMorphSet): hand-pose,
// emote and blink morphs evaluated from the current weights on the real character's meshes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "slanim/appearance/visual_params.hpp"
#include "slanim/formats/skeleton_xml.hpp"
#include "test_util.hpp"

using namespace slanim;

namespace {

std::shared_ptr<const AppearanceModel> real_model() {
    const std::filesystem::path dir = std::filesystem::path(SLANIM_SHARED_DIR) / "sl-character";
    if (!std::filesystem::exists(dir / "avatar_lad.xml")) return nullptr;
    auto skel = load_skeleton(dir);
    if (!skel) return nullptr;
    auto model = load_appearance_model(dir, *skel);
    return model ? *model : nullptr;
}

void update(AppearanceState& s, bool defer = false) {
    VisualParamUpdateJob job;
    job.state = &s;
    job.defer_animated = defer;
    ASSERT_TRUE(job.run());
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

/// Every buffer of every mesh bit for bit.
void expect_same_meshes(const AppearanceState& a, const AppearanceState& b) {
    for (std::size_t k = 0; k < a.meshes().size(); ++k) {
        const MeshBuffers &x = a.meshes()[k], &y = b.meshes()[k];
        const std::string& type = a.model().meshes()[k].type;
        EXPECT_TRUE(same_bits(x.coords, y.coords)) << type;
        EXPECT_TRUE(same_bits(x.normals, y.normals)) << type;
        EXPECT_TRUE(same_bits(x.binormals, y.binormals)) << type;
        EXPECT_TRUE(same_bits(x.texcoords, y.texcoords)) << type;
        EXPECT_TRUE(same_bits(x.scaled_normals, y.scaled_normals)) << type;
        EXPECT_TRUE(same_bits(x.scaled_binormals, y.scaled_binormals)) << type;
    }
}

/// The params a gesture crowd fades: hand poses, an emote and the closed mouth.
struct Faded {
    std::vector<ParamIndex> params;
    explicit Faded(const AppearanceModel& m) {
        for (const char* n : {"Hands_Relaxed", "Hands_Salute_R", "Hands_Point", "Express_Kiss",
                              "Express_Closed_Mouth", "Express_Smile", "Blink_Left"})
            params.push_back(m.find(n));
    }
};

/// A few hundred frames of overlapping fades, updated every frame, ending at `last`.
void fade_sequence(AppearanceState& s, const Faded& f, std::span<const float> last) {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    for (int frame = 0; frame < 300; ++frame) {
        for (ParamIndex p : f.params)
            if (rng() % 3 == 0) s.set_weight(p, u(rng));
        update(s);
    }
    for (std::size_t i = 0; i < f.params.size(); ++i) s.set_weight(f.params[i], last[i]);
    update(s);
}

}  // namespace

TEST(AnimatedMorphs, HandsEmotesAndBlinksFormTheAnimatedLayer) {
    const auto model = real_model();
    if (!model) GTEST_SKIP() << "reference data not found under " << SLANIM_SHARED_DIR;
    const AppearanceModel& m = *model;
    for (const AppearanceParam& p : m.params())
        EXPECT_EQ(p.animated, p.kind == VisualParamKind::Morph && is_animated_morph_name(p.name)) << p.name;
    EXPECT_TRUE(m.param(m.find("Hands_Salute_R")).animated);
    EXPECT_TRUE(m.param(m.find("express_kiss")).animated);
    EXPECT_FALSE(m.param(m.find("Breast_Physics_UpDown_Driven")).animated);
    const AppearanceMesh& upper = m.meshes()[static_cast<std::size_t>(m.find_mesh("upperBodyMesh"))];
    const AppearanceMesh& head = m.meshes()[static_cast<std::size_t>(m.find_mesh("headMesh"))];
    const AppearanceMesh& lower = m.meshes()[static_cast<std::size_t>(m.find_mesh("lowerBodyMesh"))];
    EXPECT_TRUE(lower.animated.empty());
    // Only the hands of the upper body are in its layer; the head's emotes cover most of it.
    EXPECT_EQ(upper.animated.morphs.size(), 13u);
    EXPECT_LT(upper.animated.vertices.size(), upper.num_vertices() / 2);
    EXPECT_GT(head.animated.vertices.size(), head.num_vertices() / 2);
    for (const AppearanceMesh* mesh : {&upper, &head}) {
        const AnimatedMorphSet& set = mesh->animated;
        EXPECT_EQ(set.stride % 16, 0u);
        EXPECT_GE(set.stride, set.vertices.size());
        for (std::size_t j = 0; j < set.vertices.size(); ++j)
            EXPECT_EQ(set.slot_of[set.vertices[j]], static_cast<std::int32_t>(j));
        for (std::size_t k = 1; k < set.morphs.size(); ++k) EXPECT_LT(set.morphs[k - 1].param, set.morphs[k].param);
    }
}

// The fades leave no residue: after any sequence of hand-pose, emote and blink weights, the
// meshes equal (bit for bit) those of a fresh avatar given the final weights at once, mid-fade
// weights as well as the rest pose; so avatars of one shape morph to the same bits.
TEST(AnimatedMorphs, AfterAnySequenceOfFadesTheMeshesEqualAFreshEvaluation) {
    const auto model = real_model();
    if (!model) GTEST_SKIP() << "reference data not found under " << SLANIM_SHARED_DIR;
    const Faded f(*model);
    const std::vector<std::vector<float>> finals = {
        {1.f, 0.f, 0.f, 0.f, 1.f, 0.f, 0.f},          // relaxed hands, closed mouth: the rest pose
        {0.35f, 0.65f, 0.f, 0.8f, 0.2f, 0.1f, 0.5f},  // mid-fade
    };
    for (const auto& last : finals) {
        AppearanceState a(model);
        update(a);
        fade_sequence(a, f, last);
        AppearanceState b(model);
        for (std::size_t i = 0; i < f.params.size(); ++i) b.set_weight(f.params[i], last[i]);
        update(b);
        expect_same_meshes(a, b);
    }
}

// The layer's result against the viewer's morph formula in double precision: coords = shape +
// Σ Δ·w, normal = normalize(scaled normal), with the shape taken from the same avatar with every
// animated weight 0. Float rounding of a few additions of centimetre deltas: 1e-6 m; unit normals
// from accumulators of length ~1: 1e-5.
TEST(AnimatedMorphs, LayerFollowsTheMorphFormula) {
    const auto model = real_model();
    if (!model) GTEST_SKIP() << "reference data not found under " << SLANIM_SHARED_DIR;
    const AppearanceModel& m = *model;
    const Faded f(m);
    AppearanceState rest(model);
    for (ParamIndex p : f.params) rest.set_weight(p, 0.f);
    update(rest);
    AppearanceState s(model);
    const float w[] = {0.3f, 0.7f, 0.f, 0.9f, 0.4f, 0.25f, 1.f};
    for (std::size_t i = 0; i < f.params.size(); ++i) s.set_weight(f.params[i], w[i]);
    update(s);
    for (std::size_t k = 0; k < m.meshes().size(); ++k) {
        const AppearanceMesh& mesh = m.meshes()[k];
        std::vector<std::array<double, 3>> c(mesh.num_vertices()), sn(mesh.num_vertices());
        for (std::size_t v = 0; v < mesh.num_vertices(); ++v) {
            const Vec3 a = rest.meshes()[k].coords[v], n = rest.meshes()[k].scaled_normals[v];
            c[v] = {a.x, a.y, a.z};
            sn[v] = {n.x, n.y, n.z};
        }
        for (std::size_t i = 0; i < f.params.size(); ++i) {
            const AppearanceParam& p = m.param(f.params[i]);
            for (const MorphBinding& b : m.morph_bindings().subspan(p.morphs_first, p.morphs_count)) {
                if (b.mesh != k) continue;
                const MorphTarget& t = mesh.morphs[b.morph];
                for (std::size_t e = 0; e < t.vertices.size(); ++e) {
                    const std::uint32_t v = t.vertices[e];
                    const double d = w[i], soft = static_cast<double>(w[i] * kNormalSoftenFactor);
                    c[v][0] += t.coords[e].x * d, c[v][1] += t.coords[e].y * d, c[v][2] += t.coords[e].z * d;
                    sn[v][0] += t.normals[e].x * soft, sn[v][1] += t.normals[e].y * soft, sn[v][2] += t.normals[e].z * soft;
                }
            }
        }
        for (std::size_t v = 0; v < mesh.num_vertices(); ++v) {
            const Vec3 got = s.meshes()[k].coords[v], n = s.meshes()[k].normals[v];
            EXPECT_NEAR(got.x, c[v][0], 1e-6) << mesh.type << " vertex " << v;
            EXPECT_NEAR(got.y, c[v][1], 1e-6) << mesh.type << " vertex " << v;
            EXPECT_NEAR(got.z, c[v][2], 1e-6) << mesh.type << " vertex " << v;
            if (mesh.animated.empty() || mesh.animated.slot_of[v] < 0) continue;
            const double len = std::sqrt(sn[v][0] * sn[v][0] + sn[v][1] * sn[v][1] + sn[v][2] * sn[v][2]);
            EXPECT_NEAR(n.x, sn[v][0] / len, 1e-5) << mesh.type << " vertex " << v;
            EXPECT_NEAR(n.y, sn[v][1] / len, 1e-5) << mesh.type << " vertex " << v;
            EXPECT_NEAR(n.z, sn[v][2] / len, 1e-5) << mesh.type << " vertex " << v;
        }
    }
}

// Scalar, SSE2 and AVX2 evaluate the layer to the same bits.
TEST(AnimatedMorphs, EveryInstructionSetGivesTheSameBits) {
    const auto model = real_model();
    if (!model) GTEST_SKIP() << "reference data not found under " << SLANIM_SHARED_DIR;
    const Faded f(*model);
    const std::vector<float> last = {0.35f, 0.65f, 0.1f, 0.8f, 0.2f, 0.1f, 0.5f};
    test::ActiveIsaGuard guard;
    ASSERT_TRUE(set_active_isa(Isa::Scalar));
    AppearanceState ref(model);
    update(ref);
    fade_sequence(ref, f, last);
    for (Isa isa : test::supported_isas()) {
        ASSERT_TRUE(set_active_isa(isa));
        AppearanceState s(model);
        update(s);
        fade_sequence(s, f, last);
        SCOPED_TRACE(isa_name(isa));
        expect_same_meshes(ref, s);
    }
}

// A shape param changed while an animated morph is on: the layer's vertices move with the shape
// and stay equal to a fresh avatar's.
TEST(AnimatedMorphs, ShapeChangesUnderAnimatedMorphsStayExact) {
    const auto model = real_model();
    if (!model) GTEST_SKIP() << "reference data not found under " << SLANIM_SHARED_DIR;
    const AppearanceModel& m = *model;
    const ParamIndex kiss = m.find("Express_Kiss");
    const auto head = static_cast<std::uint32_t>(m.find_mesh("headMesh"));
    // A shape morph on the head that moves vertices of the emote layer.
    ParamIndex lips = kNoParam;
    for (ParamIndex p = 0; p < m.num_params() && lips == kNoParam; ++p) {
        const AppearanceParam& info = m.param(p);
        if (info.kind != VisualParamKind::Morph || info.animated || info.max == m.initial_weights()[p]) continue;
        for (const MorphBinding& b : m.morph_bindings().subspan(info.morphs_first, info.morphs_count))
            if (b.mesh == head && !m.meshes()[head].morphs[b.morph].vertices.empty() &&
                m.meshes()[head].animated.slot_of[m.meshes()[head].morphs[b.morph].vertices[0]] >= 0)
                lips = p;
    }
    ASSERT_NE(lips, kNoParam);
    AppearanceState a(model);
    a.set_weight(kiss, 0.6f);
    update(a);
    const std::vector<Vec3> before = a.meshes()[static_cast<std::size_t>(m.find_mesh("headMesh"))].coords;
    a.set_weight(lips, m.param(lips).max);
    update(a);
    const std::vector<Vec3>& after = a.meshes()[static_cast<std::size_t>(m.find_mesh("headMesh"))].coords;
    EXPECT_FALSE(same_bits(before, after));
    AppearanceState b(model);
    b.set_weight(kiss, 0.6f);
    b.set_weight(lips, m.param(lips).max);
    update(b);
    expect_same_meshes(a, b);
}

namespace {

/// The layer's vertices of mesh k: evaluate_animated_into over a NaN-filled SoA pair equals the
/// eagerly evaluated meshes() bit for bit at the slots and leaves every other vertex alone.
void expect_into_equals_buffers(AppearanceState& deferred, const AppearanceState& eager, std::size_t k) {
    const AppearanceMesh& mesh = eager.model().meshes()[k];
    const std::size_t n = mesh.num_vertices();
    SoaVec3Buffer p(n), nrm(n);
    for (SoaVec3Out o : {p.out(), nrm.out()})
        for (auto s : {o.x, o.y, o.z}) std::fill(s.begin(), s.end(), std::nanf(""));
    EXPECT_EQ(deferred.evaluate_animated_into(k, p.out(), nrm.out()), mesh.animated.vertices.size()) << mesh.type;
    const MeshBuffers& want = eager.meshes()[k];
    std::size_t slot = 0, differ = 0, touched = 0;
    for (std::size_t v = 0; v < n; ++v) {
        const bool in_layer = slot < mesh.animated.vertices.size() && mesh.animated.vertices[slot] == v;
        const Vec3 got_p = p.get(v), got_n = nrm.get(v);
        if (!in_layer) {
            touched += !std::isnan(got_p.x) || !std::isnan(got_n.z);
            continue;
        }
        ++slot;
        differ += std::memcmp(&got_p, &want.coords[v], sizeof(Vec3)) != 0 ||
                  std::memcmp(&got_n, &want.normals[v], sizeof(Vec3)) != 0;
    }
    EXPECT_EQ(differ, 0u) << mesh.type << ": slots whose coordinates or normals differ";
    EXPECT_EQ(touched, 0u) << mesh.type << ": vertices outside the layer written";
}

}  // namespace

// A deferred update (VisualParamUpdateJob::defer_animated, the skinned runtime's): the layer stays
// pending, evaluate_animated_into gives the coordinates and normals the eager update writes, on
// every instruction set, and meshes() evaluates the pending layer on first use: every buffer then
// equals the eager state's, with the revision bumped once.
TEST(AnimatedMorphs, DeferredLayersEvaluateIntoSoaAndOnFirstUseWithTheSameBits) {
    const auto model = real_model();
    if (!model) GTEST_SKIP() << "reference data not found under " << SLANIM_SHARED_DIR;
    const AppearanceModel& m = *model;
    const Faded f(m);
    const std::vector<float> last = {0.35f, 0.65f, 0.1f, 0.8f, 0.2f, 0.1f, 0.5f};
    test::ActiveIsaGuard guard;
    ASSERT_TRUE(set_active_isa(Isa::Scalar));
    AppearanceState eager(model);
    update(eager);
    fade_sequence(eager, f, last);
    const auto head = static_cast<std::size_t>(m.find_mesh("headMesh"));
    const auto lower = static_cast<std::size_t>(m.find_mesh("lowerBodyMesh"));
    for (Isa isa : test::supported_isas()) {
        ASSERT_TRUE(set_active_isa(isa));
        SCOPED_TRACE(isa_name(isa));
        AppearanceState s(model);
        update(s);
        EXPECT_FALSE(s.animated_pending(head));
        const std::uint64_t serial = s.animated_serial(head);
        for (std::size_t i = 0; i < f.params.size(); ++i) s.set_weight(f.params[i], last[i]);
        update(s, /*defer=*/true);
        EXPECT_TRUE(s.animated_pending(head));
        EXPECT_FALSE(s.animated_pending(lower));
        EXPECT_GT(s.animated_serial(head), serial);
        const std::uint64_t stored = s.meshes_as_stored()[head].revision;
        for (std::size_t k = 0; k < m.meshes().size(); ++k)
            if (!m.meshes()[k].animated.empty()) expect_into_equals_buffers(s, eager, k);
        EXPECT_TRUE(s.animated_pending(head));  // evaluate_animated_into changes nothing
        EXPECT_EQ(s.meshes_as_stored()[head].revision, stored);
        expect_same_meshes(eager, s);  // meshes() evaluates the pending layers
        EXPECT_FALSE(s.animated_pending(head));
        EXPECT_EQ(s.meshes_as_stored()[head].revision, stored + 1);
    }
}

// An eager update after a deferred one evaluates the layers left pending, and a deferred update
// that changes nothing leaves nothing pending.
TEST(AnimatedMorphs, AnEagerUpdateEvaluatesWhatADeferredOneLeft) {
    const auto model = real_model();
    if (!model) GTEST_SKIP() << "reference data not found under " << SLANIM_SHARED_DIR;
    const AppearanceModel& m = *model;
    const auto head = static_cast<std::size_t>(m.find_mesh("headMesh"));
    AppearanceState a(model), b(model);
    update(a);
    update(b, true);
    a.set_weight(m.find("Express_Kiss"), 0.4f);
    b.set_weight(m.find("Express_Kiss"), 0.4f);
    update(a);
    update(b, true);
    EXPECT_TRUE(b.animated_pending(head));
    update(b);  // nothing changed, but the pending layer is evaluated
    EXPECT_FALSE(b.animated_pending(head));
    expect_same_meshes(a, b);
    const std::uint64_t serial = b.animated_serial(head);
    update(b, true);
    EXPECT_FALSE(b.animated_pending(head));
    EXPECT_EQ(b.animated_serial(head), serial);
}
