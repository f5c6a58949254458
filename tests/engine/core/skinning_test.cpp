// SPDX-License-Identifier: MIT
// Skinning: the SL expanded joint list against spec §6.6, skinning matrices, and every vertex of
// every kernel (scalar, AVX2, AVX-512, auto) against a plain double-precision reference, on
// random meshes and on the SL encoding, plus the real base meshes of SLANIM_SHARED_DIR when
// present (skipped otherwise).
//
// Tolerance: the reference is computed in double; the float kernels round each of ~20
// operations (and the SIMD ones fuse multiply-adds and use rsqrt + one Newton step), so for
// coordinates up to ~3 m and unit normals the error stays at a few float ulps of the magnitude,
// ≤ ~1e-6; 1e-5 (metres, or unit-normal components) leaves margin without hiding a wrong entry
// or weight (those move vertices by centimetres at least).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "slanim/appearance/llm.hpp"
#include "slanim/core/isa.hpp"
#include "slanim/core/local_to_model.hpp"
#include "slanim/core/math.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/core/skinning.hpp"
#include "slanim/formats/skeleton_xml.hpp"
#include "test_util.hpp"

#ifndef SLANIM_SHARED_DIR
#error "SLANIM_SHARED_DIR must name the shared data folder"
#endif

namespace slanim {
namespace {

constexpr double kTol = 1e-5;

const Skeleton& skel() { return *Skeleton::default_skeleton(); }

// ---------------------------------------------------------------------------------------------
// Expanded joint lists (spec §6.6)
// ---------------------------------------------------------------------------------------------

struct MeshCase {
    const char* mesh;
    std::vector<std::string> skin_joints;  // file order does not change the list
    std::vector<std::string> expected;     // "name" or "name(anc)"
};

const std::vector<MeshCase>& mesh_cases() {
    static const std::vector<MeshCase> cases = {
        {"upper_body",
         {"mChest", "mCollarLeft", "mCollarRight", "mElbowLeft", "mElbowRight", "mNeck", "mPelvis",
          "mShoulderLeft", "mShoulderRight", "mTorso", "mWristLeft", "mWristRight"},
         {"mRoot(anc)", "mPelvis", "mTorso", "mChest", "mNeck", "mChest(anc)", "mCollarLeft",
          "mShoulderLeft", "mElbowLeft", "mWristLeft", "mChest(anc)", "mCollarRight", "mShoulderRight",
          "mElbowRight", "mWristRight"}},
        {"lower_body",
         {"mAnkleLeft", "mAnkleRight", "mHipLeft", "mHipRight", "mKneeLeft", "mKneeRight", "mPelvis"},
         {"mRoot(anc)", "mPelvis", "mHipRight", "mKneeRight", "mAnkleRight", "mPelvis(anc)", "mHipLeft",
          "mKneeLeft", "mAnkleLeft"}},
        {"head", {"mHead", "mNeck"}, {"mChest(anc)", "mNeck", "mHead"}},
        {"hair", {"mHead", "mNeck"}, {"mChest(anc)", "mNeck", "mHead"}},
        {"eyelashes", {"mHead"}, {"mNeck(anc)", "mHead"}},
        {"skirt",
         {"mHipLeft", "mHipRight", "mKneeLeft", "mKneeRight", "mPelvis", "mTorso"},
         {"mRoot(anc)", "mPelvis", "mTorso", "mPelvis(anc)", "mHipRight", "mKneeRight", "mPelvis(anc)",
          "mHipLeft", "mKneeLeft"}},
    };
    return cases;
}

std::vector<std::string> describe(const SkinJointList& list) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < list.entries.size(); ++i) {
        out.push_back(list.names[i] + (list.entries[i].skin_joint < 0 ? "(anc)" : ""));
    }
    return out;
}

/// totalSkinOffset written out: pivots of the joint and its base ancestors, summed upwards.
Vec3 expected_offset(const Skeleton& s, int joint) {
    Vec3 t;
    for (int j = joint; j >= 0; j = s.parent(j)) {
        if (!s.desc(j).extended) t += s.pivot(j);
    }
    return t;
}

TEST(SkinJointList, ShippedMeshesMatchTheSpec) {
    for (const auto& c : mesh_cases()) {
        auto list = build_skin_joint_list(skel(), c.skin_joints);
        ASSERT_TRUE(list.ok()) << c.mesh << ": " << list.error().describe();
        EXPECT_EQ(describe(*list), c.expected) << c.mesh;
        EXPECT_LE(list->entries.size(), static_cast<std::size_t>(kMaxSlSkinEntries)) << c.mesh;
        for (std::size_t i = 0; i < list->entries.size(); ++i) {
            const auto& e = list->entries[i];
            if (e.skin_joint >= 0) {
                EXPECT_EQ(c.skin_joints[static_cast<std::size_t>(e.skin_joint)], list->names[i]);
            } else {
                // Ancestor-only: the base ancestor of the next (skin) entry, with its offset.
                ASSERT_LT(i + 1, list->entries.size());
                EXPECT_GE(list->entries[i + 1].skin_joint, 0);
            }
            const Vec3 want = e.joint >= 0 ? expected_offset(skel(), e.joint) : Vec3{};
            EXPECT_EQ(e.bind_offset, want) << c.mesh << " entry " << i;
        }
    }
}

TEST(SkinJointList, BindOffsetsSkipExtendedJoints) {
    const std::vector<std::string> names = {"mPelvis", "mTorso", "mChest"};
    auto list = build_skin_joint_list(skel(), names);
    ASSERT_TRUE(list.ok());
    const Skeleton& s = skel();
    const Vec3 pelvis = s.pivot(s.find("mPelvis"));
    EXPECT_EQ(pelvis, (Vec3{0.f, 0.f, 1.067015f}));  // pivot, not pos (1.067)
    // mChest's chain passes mSpine4, mSpine3 (extended, pivots ±0.2 m that cancel) and mTorso,
    // mSpine2, mSpine1: only the base joints count, summed from the joint upwards.
    Vec3 chest = s.pivot(s.find("mChest"));
    chest += s.pivot(s.find("mTorso"));
    chest += pelvis;
    ASSERT_EQ(list->entries.size(), 4u);
    EXPECT_EQ(list->entries[0].joint, -1);
    EXPECT_EQ(list->entries[0].bind_offset, Vec3{});
    EXPECT_EQ(list->entries[3].bind_offset, chest);
    // An extended skin joint: its own pivot does not count (totalSkinOffset skips it), its base
    // ancestor is mPelvis.
    const std::vector<std::string> ext = {"mSpine2"};
    auto l2 = build_skin_joint_list(skel(), ext);
    ASSERT_TRUE(l2.ok());
    EXPECT_EQ(describe(*l2), (std::vector<std::string>{"mPelvis(anc)", "mSpine2"}));
    EXPECT_EQ(l2->entries[1].bind_offset, pelvis);
}

TEST(SkinJointList, DuplicatesAndErrors) {
    const std::vector<std::string> dup = {"mHead", "mHead"};
    auto l = build_skin_joint_list(skel(), dup);
    ASSERT_TRUE(l.ok());
    // The second occurrence's ancestor is not the last entry (the first mHead is): the viewer
    // appends the ancestor again.
    EXPECT_EQ(describe(*l), (std::vector<std::string>{"mNeck(anc)", "mHead", "mNeck(anc)", "mHead"}));
    EXPECT_EQ(l->entries[1].skin_joint, 0);
    EXPECT_EQ(l->entries[3].skin_joint, 1);

    const std::vector<std::string> bad = {"mHead", "mNoSuchBone"};
    auto e = build_skin_joint_list(skel(), bad);
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.error().message.find("'mNoSuchBone'"), std::string::npos) << e.error().message;
    // Aliases and collision volumes are not bone names for findJoint.
    const std::vector<std::string> alias = {"chest"};
    EXPECT_FALSE(build_skin_joint_list(skel(), alias).ok());
    EXPECT_FALSE(build_skin_joint_list(skel(), std::span<const std::string>{}).ok());
}

TEST(SkinWeights, CheckSlWeights) {
    const std::vector<float> ok = {0.f, 1.5f, 13.999f, 14.f};
    EXPECT_TRUE(check_sl_weights(ok, 15).ok());
    for (float bad : {14.5f, -0.25f, NAN, INFINITY, 15.f}) {
        const std::vector<float> w = {1.f, bad};
        auto r = check_sl_weights(w, 15);
        ASSERT_FALSE(r.ok()) << bad;
        EXPECT_NE(r.error().message.find("vertex 1"), std::string::npos) << r.error().message;
    }
    EXPECT_FALSE(check_sl_weights(ok, 0).ok());
}

TEST(SkinWeights, DecodeRiggedLikeLlSkinningUtil) {
    const std::vector<std::array<float, 4>> packed = {
        {2.5f, 0.f, 0.f, 0.f},      // one influence
        {1.25f, 3.75f, 0.f, 0.f},   // two, already normalised
        {0.2f, 1.2f, 2.4f, 3.2f},   // sum 1.0 → scaled
        {1.f, 2.f, 3.f, 4.f},       // all fractions zero → (1, 0, 0, 0)
        {200.5f, -3.5f, 0.f, 0.f},  // clamped indices
    };
    std::vector<SkinIndices4> idx(packed.size());
    std::vector<SkinWeights4> w(packed.size());
    EXPECT_EQ(decode_rigged_weights(packed, 10, idx, w), 1u);
    EXPECT_EQ(idx[0], (SkinIndices4{2, 0, 0, 0}));
    EXPECT_EQ(w[0], (SkinWeights4{1.f, 0.f, 0.f, 0.f}));
    EXPECT_EQ(idx[1], (SkinIndices4{1, 3, 0, 0}));
    EXPECT_FLOAT_EQ(w[1][0], 0.25f);
    EXPECT_FLOAT_EQ(w[1][1], 0.75f);
    EXPECT_EQ(idx[2], (SkinIndices4{0, 1, 2, 3}));
    EXPECT_NEAR(w[2][0] + w[2][1] + w[2][2] + w[2][3], 1.f, 1e-6f);
    EXPECT_NEAR(w[2][2], 0.4f / 1.f, 1e-6f);
    EXPECT_EQ(idx[3], (SkinIndices4{1, 2, 3, 4}));
    EXPECT_EQ(w[3], (SkinWeights4{1.f, 0.f, 0.f, 0.f}));
    EXPECT_EQ(idx[4][0], 9);  // floor(200.5) clamped to 9
    EXPECT_EQ(idx[4][1], 0);  // floor(−3.5) = −4 clamped to 0
    EXPECT_FLOAT_EQ(w[4][0], 0.5f);
    EXPECT_FLOAT_EQ(w[4][1], 0.5f);
}

// ---------------------------------------------------------------------------------------------
// Matrices
// ---------------------------------------------------------------------------------------------

Quat random_quat(std::mt19937& rng) {
    std::normal_distribution<float> n(0.f, 1.f);
    Quat q{n(rng), n(rng), n(rng), n(rng)};
    const float l = std::sqrt(dot(q, q));
    return {q.x / l, q.y / l, q.z / l, q.w / l};
}

Vec3 random_vec(std::mt19937& rng, float lo, float hi) {
    std::uniform_real_distribution<float> u(lo, hi);
    return {u(rng), u(rng), u(rng)};
}

TEST(SkinMatrix, MatchesRotateScaleTranslate) {
    std::mt19937 rng(7);
    for (int t = 0; t < 200; ++t) {
        const Vec3 pos = random_vec(rng, -2.f, 2.f), s = random_vec(rng, 0.5f, 1.5f);
        const Vec3 bind = random_vec(rng, -1.f, 1.f), p = random_vec(rng, -1.f, 1.f);
        const Quat q = random_quat(rng);
        const SkinMatrix m = make_skin_matrix(pos, q, s, bind);
        const Vec3 want = rotate(scaled(p - bind, s), q) + pos;
        const Vec3 got = m.transform_point(p);
        EXPECT_NEAR(got.x, want.x, kTol);
        EXPECT_NEAR(got.y, want.y, kTol);
        EXPECT_NEAR(got.z, want.z, kTol);
        EXPECT_EQ(m.m[12], 0.f);
        EXPECT_EQ(m.m[15], 0.f);
    }
}

TEST(SkinMatrix, SlMatricesAtRestPutEachBindPointOnItsJoint) {
    const Skeleton& s = skel();
    const auto n = static_cast<std::size_t>(s.num_joints());
    std::vector<Vec3> mp(n);
    std::vector<Quat> mr(n);
    LocalToModelJob l2m;
    l2m.skeleton = &s;
    l2m.local_positions = s.rest_positions();
    l2m.local_rotations = s.rest_rotations();
    l2m.local_scales = s.rest_scales();
    l2m.model_positions = mp;
    l2m.model_rotations = mr;
    ASSERT_TRUE(l2m.run());
    auto list = build_skin_joint_list(s, mesh_cases()[0].skin_joints);
    ASSERT_TRUE(list.ok());
    std::vector<SkinMatrix> mats(list->entries.size());
    SlSkinMatricesJob job;
    job.joints = &*list;
    job.model_positions = mp;
    job.model_rotations = mr;
    job.matrices = mats;
    ASSERT_TRUE(job.run());
    for (std::size_t i = 0; i < mats.size(); ++i) {
        const auto& e = list->entries[i];
        const Vec3 joint = e.joint >= 0 ? mp[static_cast<std::size_t>(e.joint)] : Vec3{};
        const Vec3 got = mats[i].transform_point(e.bind_offset);
        EXPECT_NEAR(got.x, joint.x, 1e-6) << list->names[i];
        EXPECT_NEAR(got.y, joint.y, 1e-6) << list->names[i];
        EXPECT_NEAR(got.z, joint.z, 1e-6) << list->names[i];
    }
    // Too short a pose or output fails validation.
    job.matrices = std::span<SkinMatrix>(mats).first(3);
    EXPECT_FALSE(job.run());
    job.matrices = mats;
    job.model_positions = std::span<const Vec3>(mp).first(5);
    EXPECT_FALSE(job.validate());
}

// ---------------------------------------------------------------------------------------------
// Kernels against the reference
// ---------------------------------------------------------------------------------------------

struct Mesh {
    std::vector<Vec3> pos, nrm;
    SoaVec3Buffer in_p, in_n;
};

Mesh random_mesh(std::mt19937& rng, std::size_t n) {
    Mesh m;
    std::normal_distribution<float> g(0.f, 1.f);
    for (std::size_t i = 0; i < n; ++i) {
        m.pos.push_back(random_vec(rng, -1.f, 1.f) + Vec3{0.f, 0.f, 1.f});
        Vec3 d{g(rng), g(rng), g(rng)};
        const float l = length(d);
        m.nrm.push_back(i % 97 == 5 ? Vec3{} : d * (1.f / l));  // a few zero normals
    }
    m.in_p = SoaVec3Buffer(m.pos);
    m.in_n = SoaVec3Buffer(m.nrm);
    return m;
}

std::vector<SkinMatrix> random_matrices(std::mt19937& rng, std::size_t count) {
    std::vector<SkinMatrix> mats;
    for (std::size_t i = 0; i < count; ++i) {
        mats.push_back(make_skin_matrix(random_vec(rng, -1.f, 1.f), random_quat(rng),
                                        random_vec(rng, 0.8f, 1.25f), random_vec(rng, -1.f, 1.f)));
    }
    return mats;
}

/// The plain reference: blended matrix in double, then transform and normalise.
struct Ref {
    std::array<double, 3> p, n;
};
Ref reference(const std::array<double, 12>& m, Vec3 p, Vec3 nr) {
    Ref r{};
    for (int row = 0; row < 3; ++row) {
        const double* e = &m[static_cast<std::size_t>(4 * row)];
        r.p[static_cast<std::size_t>(row)] = e[0] * p.x + e[1] * p.y + e[2] * p.z + e[3];
        r.n[static_cast<std::size_t>(row)] = e[0] * nr.x + e[1] * nr.y + e[2] * nr.z;
    }
    const double l = std::sqrt(r.n[0] * r.n[0] + r.n[1] * r.n[1] + r.n[2] * r.n[2]);
    if (l > 0) {
        for (auto& x : r.n) x /= l;
    }
    return r;
}

std::vector<SkinningIsa> all_isas() {
    return {SkinningIsa::Scalar, SkinningIsa::Sse2, SkinningIsa::Avx2, SkinningIsa::Avx512, SkinningIsa::Auto};
}

void expect_matches(const std::vector<Ref>& want, const SoaVec3Buffer& p, const SoaVec3Buffer* n,
                    SkinningIsa isa, const char* what) {
    std::size_t bad = 0;
    for (std::size_t v = 0; v < want.size(); ++v) {
        const Vec3 gp = p.get(v);
        const double dp = std::max({std::abs(gp.x - want[v].p[0]), std::abs(gp.y - want[v].p[1]),
                                    std::abs(gp.z - want[v].p[2])});
        double dn = 0;
        if (n) {
            const Vec3 gn = n->get(v);
            dn = std::max({std::abs(gn.x - want[v].n[0]), std::abs(gn.y - want[v].n[1]),
                           std::abs(gn.z - want[v].n[2])});
        }
        if (!(dp <= kTol) || !(dn <= kTol)) {
            if (++bad <= 5) {
                ADD_FAILURE() << what << " isa " << to_string(isa) << " vertex " << v << " of "
                              << want.size() << ": position error " << dp << ", normal error " << dn;
            }
        }
    }
    EXPECT_EQ(bad, 0u) << what << " " << to_string(isa);
}

TEST(SkinningJob, EveryVertexOfEveryIsaMatchesTheReference) {
    std::mt19937 rng(42);
    // Sizes cover empty, shorter than a block, exact blocks and ragged tails.
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{16},
                          std::size_t{37}, std::size_t{1000}, std::size_t{4099}}) {
        Mesh mesh = random_mesh(rng, n);
        const auto mats = random_matrices(rng, 20);
        std::vector<SkinIndices4> idx(n);
        std::vector<SkinWeights4> w(n);
        std::uniform_int_distribution<int> pick(0, 19);
        std::uniform_real_distribution<float> u(0.f, 1.f);
        for (std::size_t v = 0; v < n; ++v) {
            const int used = 1 + static_cast<int>(v % 4);  // 1 to 4 influences
            float sum = 0.f;
            for (int k = 0; k < 4; ++k) {
                idx[v][static_cast<std::size_t>(k)] = static_cast<std::uint16_t>(pick(rng));
                w[v][static_cast<std::size_t>(k)] = k < used ? u(rng) + 0.01f : 0.f;
                sum += w[v][static_cast<std::size_t>(k)];
            }
            for (auto& x : w[v]) x /= sum;
        }
        // A few out-of-range indices: clamped to the last matrix.
        if (n > 40) {
            idx[3][1] = 20;
            idx[n - 2][0] = 65535;
        }
        std::vector<Ref> want(n);
        for (std::size_t v = 0; v < n; ++v) {
            std::array<double, 12> m{};
            for (std::size_t k = 0; k < 4; ++k) {
                const auto& mk = mats[std::min<std::size_t>(idx[v][k], mats.size() - 1)];
                for (std::size_t e = 0; e < 12; ++e) m[e] += static_cast<double>(w[v][k]) * mk.m[e];
            }
            want[v] = reference(m, mesh.pos[v], mesh.nrm[v]);
        }
        for (SkinningIsa isa : all_isas()) {
            if (!skinning_isa_supported(isa)) {
                std::cout << "[ SKIPPED  ] " << to_string(isa) << " not supported by this CPU\n";
                continue;
            }
            SoaVec3Buffer op(n), on(n);
            SkinningJob job;
            job.matrices = mats;
            job.indices = idx;
            job.weights = w;
            job.in_positions = mesh.in_p.in();
            job.in_normals = mesh.in_n.in();
            job.out_positions = op.out();
            job.out_normals = on.out();
            job.isa = isa;
            ASSERT_TRUE(job.run()) << to_string(isa);
            expect_matches(want, op, &on, isa, "random 4-influence mesh");

            // In place, and split into two slices at an odd vertex.
            SoaVec3Buffer ip = mesh.in_p, in = mesh.in_n;
            job.in_positions = ip.in();
            job.out_positions = ip.out();
            job.in_normals = in.in();
            job.out_normals = in.out();
            ASSERT_TRUE(job.slice(0, n / 3).run());
            ASSERT_TRUE(job.slice(n / 3, n).run());
            expect_matches(want, ip, &in, isa, "in place, two slices");

            // Positions only: the normal streams are not touched.
            SoaVec3Buffer pp(n);
            job.in_positions = mesh.in_p.in();
            job.out_positions = pp.out();
            job.in_normals = {};
            job.out_normals = {};
            ASSERT_TRUE(job.run());
            expect_matches(want, pp, nullptr, isa, "positions only");
        }
    }
}

TEST(SkinningJob, FewerInfluencesIgnoreTheOtherSlots) {
    std::mt19937 rng(9);
    const std::size_t n = 203;
    Mesh mesh = random_mesh(rng, n);
    const auto mats = random_matrices(rng, 12);
    std::uniform_int_distribution<int> pick(0, 11);
    std::uniform_real_distribution<float> u(0.05f, 1.f);
    for (int influences = 1; influences <= 3; ++influences) {
        std::vector<SkinIndices4> idx(n);
        std::vector<SkinWeights4> w(n);
        std::vector<Ref> want(n);
        for (std::size_t v = 0; v < n; ++v) {
            float sum = 0.f;
            for (std::size_t k = 0; k < 4; ++k) {
                const bool used = k < static_cast<std::size_t>(influences);
                idx[v][k] = used ? static_cast<std::uint16_t>(pick(rng)) : std::uint16_t{60000};
                w[v][k] = used ? u(rng) : 1e30f;  // garbage in the unused slots
                if (used) sum += w[v][k];
            }
            std::array<double, 12> m{};
            for (std::size_t k = 0; k < static_cast<std::size_t>(influences); ++k) {
                w[v][k] /= sum;
                for (std::size_t e = 0; e < 12; ++e) m[e] += static_cast<double>(w[v][k]) * mats[idx[v][k]].m[e];
            }
            want[v] = reference(m, mesh.pos[v], mesh.nrm[v]);
        }
        for (SkinningIsa isa : all_isas()) {
            if (!skinning_isa_supported(isa)) continue;
            SoaVec3Buffer op(n), on(n);
            SkinningJob job;
            job.matrices = mats;
            job.indices = idx;
            job.weights = w;
            job.influences = influences;
            job.in_positions = mesh.in_p.in();
            job.in_normals = mesh.in_n.in();
            job.out_positions = op.out();
            job.out_normals = on.out();
            job.isa = isa;
            ASSERT_TRUE(job.run());
            expect_matches(want, op, &on, isa, "fewer influences");
        }
    }
    SkinningJob bad;
    bad.matrices = mats;
    bad.influences = 5;
    EXPECT_FALSE(bad.validate());
}

/// SlSkinningJob on every supported ISA against the double-precision reference of the SL
/// weight encoding (entry floor(w) blended element-wise with the next by fract(w)).
void expect_sl_skinning_matches(const std::vector<SkinMatrix>& mats, const std::vector<float>& w,
                                const Mesh& mesh, const std::string& label) {
    const std::size_t n = w.size(), entries = mats.size();
    std::vector<Ref> want(n);
    for (std::size_t v = 0; v < n; ++v) {
        const double wd = w[v];
        const auto i = static_cast<std::size_t>(std::floor(wd));
        const std::size_t j = std::min(i + 1, entries - 1);
        const double f = wd - std::floor(wd);
        std::array<double, 12> m{};
        for (std::size_t e = 0; e < 12; ++e) m[e] = (1.0 - f) * mats[i].m[e] + f * mats[j].m[e];
        want[v] = reference(m, mesh.pos[v], mesh.nrm[v]);
    }
    for (SkinningIsa isa : all_isas()) {
        if (!skinning_isa_supported(isa)) continue;
        SoaVec3Buffer op(n), on(n);
        SlSkinningJob job;
        job.matrices = mats;
        job.weights = w;
        job.in_positions = mesh.in_p.in();
        job.in_normals = mesh.in_n.in();
        job.out_positions = op.out();
        job.out_normals = on.out();
        job.isa = isa;
        ASSERT_TRUE(job.run());
        expect_matches(want, op, &on, isa, label.c_str());
    }
}

TEST(SlSkinningJob, EveryVertexOfEveryIsaMatchesTheReference) {
    std::mt19937 rng(3);
    const std::size_t entries = 15;
    const auto mats = random_matrices(rng, entries);
    for (std::size_t n : {std::size_t{5}, std::size_t{64}, std::size_t{2213}}) {
        Mesh mesh = random_mesh(rng, n);
        std::vector<float> w(n);
        std::uniform_real_distribution<float> u(0.f, static_cast<float>(entries - 1));
        std::uniform_int_distribution<int> whole(0, static_cast<int>(entries - 1));
        for (std::size_t v = 0; v < n; ++v) {
            switch (v % 5) {
                case 0: w[v] = u(rng); break;                                   // fractional
                case 1: w[v] = static_cast<float>(whole(rng)); break;           // exact integer
                case 2: w[v] = static_cast<float>(entries - 1); break;          // last entry alone
                case 3: w[v] = std::nextafter(static_cast<float>(whole(rng) % 14 + 1), 0.f); break;
                default: w[v] = static_cast<float>(whole(rng) % 14) + 0.5f; break;
            }
        }
        w[0] = 0.f;
        ASSERT_TRUE(check_sl_weights(w, entries).ok());
        expect_sl_skinning_matches(mats, w, mesh, "SL encoding");
    }
}

/// An SlSkinningJob of `mesh` (positions and normals) on `isa`, writing nowhere yet.
SlSkinningJob sl_job(const std::vector<SkinMatrix>& mats, const std::vector<float>& w, const Mesh& mesh,
                     SkinningIsa isa) {
    SlSkinningJob job;
    job.matrices = mats;
    job.weights = w;
    job.in_positions = mesh.in_p.in();
    job.in_normals = mesh.in_n.in();
    job.isa = isa;
    return job;
}

/// Every vertex v in [begin, end) of the two outputs has the same bits.
void expect_same_bits(const SoaVec3Buffer& p0, const SoaVec3Buffer& n0, const SoaVec3Buffer& p1,
                      const SoaVec3Buffer& n1, std::size_t begin, std::size_t end, SkinningIsa isa) {
    for (std::size_t v = begin; v < end; ++v) {
        const Vec3 a = p0.get(v), b = p1.get(v), c = n0.get(v), d = n1.get(v);
        ASSERT_EQ(std::memcmp(&a, &b, sizeof a), 0) << to_string(isa) << " " << v;
        ASSERT_EQ(std::memcmp(&c, &d, sizeof c), 0) << to_string(isa) << " " << v;
    }
}

/// `job` run whole into p0/n0, then pointed at p1/n1 (zeros) for the caller's slices, whose
/// bits it compares with the whole run's.
struct WholeAndSlices {
    SoaVec3Buffer p0, n0, p1, n1;
    SlSkinningJob job;
    WholeAndSlices(const SlSkinningJob& j, std::size_t n) : p0(n), n0(n), p1(n), n1(n), job(j) {
        job.out_positions = p0.out();
        job.out_normals = n0.out();
        EXPECT_TRUE(job.run());
        job.out_positions = p1.out();
        job.out_normals = n1.out();
    }
    void expect_same(std::size_t begin, std::size_t end) const {
        expect_same_bits(p0, n0, p1, n1, begin, end, job.isa);
    }
};

TEST(SlSkinningJob, StreamingStoresWriteTheSameBits) {
    // Non-temporal stores (aligned SoA buffers, blocks of 16) must not change a value; a slice
    // starting off a block boundary falls back to ordinary stores.
    std::mt19937 rng(17);
    const std::size_t entries = 15, n = 16 * 40 + 7;
    const auto mats = random_matrices(rng, entries);
    Mesh mesh = random_mesh(rng, n);
    std::vector<float> w(n);
    std::uniform_real_distribution<float> u(0.f, static_cast<float>(entries - 1));
    for (float& x : w) x = u(rng);
    for (SkinningIsa isa : all_isas()) {
        if (!skinning_isa_supported(isa)) continue;
        SoaVec3Buffer p0(n), n0(n), p1(n), n1(n);
        SlSkinningJob job = sl_job(mats, w, mesh, isa);
        job.out_positions = p0.out();
        job.out_normals = n0.out();
        ASSERT_TRUE(job.run());
        ASSERT_TRUE(job.slice(5, 200).run());
        job.streaming_stores = true;
        job.out_positions = p1.out();
        job.out_normals = n1.out();
        ASSERT_TRUE(job.run());
        ASSERT_TRUE(job.slice(5, 200).run());  // unaligned start: ordinary stores
        expect_same_bits(p0, n0, p1, n1, 0, n, isa);
        // Starts on a 32-byte but not a 64-byte boundary (AVX2: one block of 8, then whole
        // lines) and short runs.
        for (const auto& [begin, count] : {std::pair<std::size_t, std::size_t>{8, 300}, {24, 33}, {40, 16}, {72, 9}}) {
            job.out_positions = p1.out();
            job.out_normals = n1.out();
            ASSERT_TRUE(job.slice(begin, count).run());
            expect_same_bits(p0, n0, p1, n1, 0, n, isa);
        }
    }
}

TEST(SlSkinningJob, InvalidWeightsStayInsideThePalette) {
    // Out-of-range weights are a data error (check_sl_weights) but must never read outside the
    // matrices: every kernel clamps the entry to the list and agrees with the scalar kernel.
    std::mt19937 rng(11);
    const auto mats = random_matrices(rng, 3);
    const std::size_t n = 48;
    Mesh mesh = random_mesh(rng, n);
    std::vector<float> w(n);
    for (std::size_t v = 0; v < n; ++v) {
        const float vals[] = {-5.f, 1e9f, 7.5f, 2.5f, -0.5f, 3.f};
        w[v] = vals[v % 6];
    }
    SoaVec3Buffer ref_p(n);
    SlSkinningJob job;
    job.matrices = mats;
    job.weights = w;
    job.in_positions = mesh.in_p.in();
    job.out_positions = ref_p.out();
    job.isa = SkinningIsa::Scalar;
    ASSERT_TRUE(job.run());
    for (SkinningIsa isa : all_isas()) {
        if (!skinning_isa_supported(isa)) continue;
        SoaVec3Buffer op(n);
        job.out_positions = op.out();
        job.isa = isa;
        ASSERT_TRUE(job.run());
        for (std::size_t v = 0; v < n; ++v) {
            const Vec3 a = op.get(v), b = ref_p.get(v);
            ASSERT_TRUE(is_finite(a)) << v;
            EXPECT_NEAR(a.x, b.x, kTol) << to_string(isa) << " " << v;
            EXPECT_NEAR(a.y, b.y, kTol) << to_string(isa) << " " << v;
            EXPECT_NEAR(a.z, b.z, kTol) << to_string(isa) << " " << v;
        }
    }
}

TEST(SkinningJob, ValidationRejectsBadSpans) {
    std::mt19937 rng(5);
    const auto mats = random_matrices(rng, 2);
    Mesh mesh = random_mesh(rng, 10);
    std::vector<SkinIndices4> idx(10);
    std::vector<SkinWeights4> w(10, SkinWeights4{1.f, 0.f, 0.f, 0.f});
    SoaVec3Buffer op(10), on(10), shortp(9);
    SkinningJob job;
    job.matrices = mats;
    job.indices = idx;
    job.weights = w;
    job.in_positions = mesh.in_p.in();
    job.out_positions = op.out();
    EXPECT_TRUE(job.validate());
    auto bad = job;
    bad.out_positions = shortp.out();
    EXPECT_FALSE(bad.run());
    bad = job;
    bad.matrices = {};
    EXPECT_FALSE(bad.validate());
    bad = job;
    bad.weights = std::span<const SkinWeights4>(w).first(9);
    EXPECT_FALSE(bad.validate());
    bad = job;
    bad.in_normals = mesh.in_n.in();  // normals on one side only
    EXPECT_FALSE(bad.validate());
    bad.out_normals = on.out();
    EXPECT_TRUE(bad.validate());

    SlSkinningJob sl;
    const std::vector<float> sw(10, 0.f);
    sl.matrices = mats;
    sl.weights = sw;
    sl.in_positions = mesh.in_p.in();
    sl.out_positions = shortp.out();
    EXPECT_FALSE(sl.run());
    for (std::size_t v = 0; v < 9; ++v) EXPECT_EQ(shortp.get(v), Vec3{}) << "untouched";
}

TEST(SoaVec3, RoundTripAndAlignment) {
    std::mt19937 rng(1);
    std::vector<Vec3> a;
    for (int i = 0; i < 37; ++i) a.push_back(random_vec(rng, -1.f, 1.f));
    SoaVec3Buffer b(a);
    EXPECT_EQ(b.size(), 37u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.in().x.data()) % 64, 0u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.in().y.data()) % 64, 0u);
    std::vector<Vec3> back(a.size());
    soa_to_aos(b.in(), back);
    EXPECT_EQ(back, a);
    SoaVec3Buffer c = b;
    EXPECT_EQ(c.get(36), a[36]);
}


// ---------------------------------------------------------------------------------------------
// Large palettes (the AVX-512 window and gather paths) and packed influences
// ---------------------------------------------------------------------------------------------

/// Influences of n vertices over a palette: most blocks of 16 vertices stay within `spread`
/// consecutive matrices (like a real mesh), every 5th block is spread over the whole palette,
/// slots k ≥ used hold garbage (index 60000, weight 1e30) that must be ignored, and a few indices
/// are past the palette (clamped to the last matrix).
struct Influences {
    std::vector<SkinIndices4> idx;
    std::vector<SkinWeights4> w;
};
Influences coherent_influences(std::mt19937& rng, std::size_t n, std::size_t palette, int used, int spread) {
    Influences in{std::vector<SkinIndices4>(n), std::vector<SkinWeights4>(n)};
    std::uniform_real_distribution<float> u(0.05f, 1.f);
    for (std::size_t v = 0; v < n; ++v) {
        const std::size_t block = v / 16;
        const bool wide = block % 5 == 4;
        const int range = wide ? static_cast<int>(std::min<std::size_t>(palette, 256))
                               : std::min(spread, static_cast<int>(palette));
        const int base = static_cast<int>((block * 37) % (palette - static_cast<std::size_t>(range) + 1));
        std::uniform_int_distribution<int> pick(base, base + range - 1);
        float sum = 0.f;
        for (std::size_t k = 0; k < 4; ++k) {
            const bool on = k < static_cast<std::size_t>(used);
            in.idx[v][k] = on ? static_cast<std::uint16_t>(pick(rng)) : std::uint16_t{60000};
            in.w[v][k] = on ? u(rng) : 1e30f;
            if (on) sum += in.w[v][k];
        }
        for (std::size_t k = 0; k < static_cast<std::size_t>(used); ++k) in.w[v][k] /= sum;
    }
    if (n > 100) in.idx[n - 3][0] = static_cast<std::uint16_t>(palette + 7);  // clamped
    return in;
}

std::vector<Ref> reference_lbs(const Influences& in, int used, const std::vector<SkinMatrix>& mats, const Mesh& mesh) {
    std::vector<Ref> want(in.idx.size());
    for (std::size_t v = 0; v < want.size(); ++v) {
        std::array<double, 12> m{};
        for (std::size_t k = 0; k < static_cast<std::size_t>(used); ++k) {
            const auto& mk = mats[std::min<std::size_t>(in.idx[v][k], mats.size() - 1)];
            for (std::size_t e = 0; e < 12; ++e) m[e] += static_cast<double>(in.w[v][k]) * mk.m[e];
        }
        want[v] = reference(m, mesh.pos[v], mesh.nrm[v]);
    }
    return want;
}

bool same_bits(const SoaVec3Buffer& a, const SoaVec3Buffer& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t v = 0; v < a.size(); ++v) {
        const Vec3 x = a.get(v), y = b.get(v);
        if (std::memcmp(&x, &y, sizeof(Vec3)) != 0) return false;
    }
    return true;
}

TEST(SkinningJob, LargePalettesTakeEveryPathAndMatchTheReference) {
    // 110 matrices (windows of 16 and 32 and the gather fallback per block) and 200 (more than
    // the transposed palette holds: gather only).
    std::mt19937 rng(77);
    for (std::size_t palette : {std::size_t{110}, std::size_t{200}}) {
        const auto mats = random_matrices(rng, palette);
        for (int spread : {6, 24}) {
            for (int used = 1; used <= 4; ++used) {
                const std::size_t n = 1203;
                Mesh mesh = random_mesh(rng, n);
                const Influences in = coherent_influences(rng, n, palette, used, spread);
                const auto want = reference_lbs(in, used, mats, mesh);
                for (SkinningIsa isa : all_isas()) {
                    if (!skinning_isa_supported(isa)) continue;
                    SoaVec3Buffer op(n), on(n);
                    SkinningJob job;
                    job.matrices = mats;
                    job.indices = in.idx;
                    job.weights = in.w;
                    job.influences = used;
                    job.in_positions = mesh.in_p.in();
                    job.in_normals = mesh.in_n.in();
                    job.out_positions = op.out();
                    job.out_normals = on.out();
                    job.isa = isa;
                    ASSERT_TRUE(job.run());
                    expect_matches(want, op, &on, isa, "large palette");
                }
            }
        }
    }
}

TEST(PackedSkinInfluences, BuildsBlocksAndRejectsBadInput) {
    std::mt19937 rng(21);
    const std::size_t n = 37;
    Influences in = coherent_influences(rng, n, 40, 3, 10);
    in.idx[1][2] = 45;  // past the palette: clamped to 39 at build time
    auto p = PackedSkinInfluences::build(in.idx, in.w, 3, 40);
    ASSERT_TRUE(p.ok()) << p.error().describe();
    EXPECT_EQ(p->size(), n);
    EXPECT_EQ(p->num_blocks(), 3u);
    EXPECT_EQ(p->influences(), 3);
    EXPECT_EQ(p->num_matrices(), 40u);
    for (std::size_t v = 0; v < n; ++v) {
        for (int k = 0; k < 3; ++k) {
            EXPECT_EQ(p->index(v, k), std::min<std::uint16_t>(in.idx[v][static_cast<std::size_t>(k)], 39)) << v;
            EXPECT_EQ(p->weight(v, k), in.w[v][static_cast<std::size_t>(k)]) << v;
        }
    }
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p->data()) % 64, 0u);
    EXPECT_EQ(p->block_floats() % 16, 0u);
    // Spread per block: within 16, within 32, wider.
    std::vector<SkinIndices4> idx(48, SkinIndices4{100, 100, 100, 100});
    std::vector<SkinWeights4> w(48, SkinWeights4{1.f, 0.f, 0.f, 0.f});
    idx[3][1] = 115;   // block 0: span 15
    idx[20][0] = 131;  // block 1: span 31
    idx[40][1] = 355;  // block 2: span 255
    auto s = PackedSkinInfluences::build(idx, w, 2, 400);
    ASSERT_TRUE(s.ok()) << s.error().describe();
    EXPECT_EQ(s->spread(0), PackedSkinInfluences::Spread::Window16);
    EXPECT_EQ(s->spread(1), PackedSkinInfluences::Spread::Window32);
    EXPECT_EQ(s->spread(2), PackedSkinInfluences::Spread::Wide);
    EXPECT_EQ(s->index(40, 1), 355);
    // A block spanning more than 256 matrices, bad counts.
    idx[40][1] = 356;
    auto wide = PackedSkinInfluences::build(idx, w, 2, 400);
    ASSERT_FALSE(wide.ok());
    EXPECT_NE(wide.error().message.find("vertices 32 to 47 use matrices 100 to 356"), std::string::npos)
        << wide.error().message;
    EXPECT_TRUE(PackedSkinInfluences::build(idx, w, 1, 400).ok()) << "slot 1 is not used";
    EXPECT_FALSE(PackedSkinInfluences::build(idx, w, 0, 400).ok());
    EXPECT_FALSE(PackedSkinInfluences::build(idx, w, 5, 400).ok());
    EXPECT_FALSE(PackedSkinInfluences::build(idx, w, 2, 0).ok());
    EXPECT_FALSE(PackedSkinInfluences::build(idx, w, 2, 65537).ok());
    EXPECT_FALSE(PackedSkinInfluences::build(idx, std::span<const SkinWeights4>(w).first(47), 2, 400).ok());
    auto empty = PackedSkinInfluences::build({}, {}, 4, 1);
    ASSERT_TRUE(empty.ok());
    EXPECT_EQ(empty->num_blocks(), 0u);
    // Copies are deep.
    PackedSkinInfluences copy = *s;
    EXPECT_NE(copy.data(), s->data());
    EXPECT_EQ(copy.index(40, 1), 355);
    EXPECT_EQ(copy.spread(1), PackedSkinInfluences::Spread::Window32);
    copy = *empty;
    EXPECT_EQ(copy.size(), 0u);
}

TEST(PackedSkinningJob, EveryVertexOfEveryIsaMatchesTheReferenceAndSkinningJob) {
    std::mt19937 rng(99);
    struct Case {
        std::size_t palette;
        int spread;
    };
    // 12 matrices (one 16-entry window), 110 with narrow and wider blocks (windows of 16 and 32,
    // gather blocks), 300 (gather only).
    for (const Case c : {Case{12, 12}, Case{110, 6}, Case{110, 24}, Case{300, 12}}) {
        const auto mats = random_matrices(rng, c.palette);
        for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{16}, std::size_t{37}, std::size_t{1000}}) {
            for (int used = 1; used <= 4; ++used) {
                Mesh mesh = random_mesh(rng, n);
                const Influences given = coherent_influences(rng, n, c.palette, used, c.spread);
                for (auto format : {PackedSkinInfluences::Weights::Float32, PackedSkinInfluences::Weights::Unorm16}) {
                    auto packed = PackedSkinInfluences::build(given.idx, given.w, used, c.palette, format);
                    ASSERT_TRUE(packed.ok()) << packed.error().describe();
                    // The weights the kernels use: as given (Float32) or decoded (Unorm16).
                    Influences in = given;
                    for (std::size_t v = 0; v < n; ++v) {
                        for (int k = 0; k < used; ++k) in.w[v][static_cast<std::size_t>(k)] = packed->weight(v, k);
                    }
                    const auto want = reference_lbs(in, used, mats, mesh);
                    for (SkinningIsa isa : all_isas()) {
                        if (!skinning_isa_supported(isa)) continue;
                        SCOPED_TRACE(::testing::Message() << "palette " << c.palette << " spread " << c.spread
                                                          << " n " << n << " influences " << used << " isa "
                                                          << to_string(isa) << " unorm16 "
                                                          << (format == PackedSkinInfluences::Weights::Unorm16));
                        // The unpacked job on the same data: the packed one must agree bit for bit.
                        SoaVec3Buffer sp(n), sn(n);
                        SkinningJob plain;
                        plain.matrices = mats;
                        plain.indices = in.idx;
                        plain.weights = in.w;
                        plain.influences = used;
                        plain.in_positions = mesh.in_p.in();
                        plain.in_normals = mesh.in_n.in();
                        plain.out_positions = sp.out();
                        plain.out_normals = sn.out();
                        plain.isa = isa;
                        ASSERT_TRUE(plain.run());

                        for (bool streaming : {false, true}) {
                            SoaVec3Buffer op(n), on(n);
                            PackedSkinningJob job;
                            job.matrices = mats;
                            job.influences = &*packed;
                            job.in_positions = mesh.in_p.in();
                            job.in_normals = mesh.in_n.in();
                            job.out_positions = op.out();
                            job.out_normals = on.out();
                            job.isa = isa;
                            job.streaming_stores = streaming;
                            ASSERT_TRUE(job.run());
                            expect_matches(want, op, &on, isa, "packed");
                            EXPECT_TRUE(same_bits(op, sp)) << "positions differ from SkinningJob";
                            EXPECT_TRUE(same_bits(on, sn)) << "normals differ from SkinningJob";
                        }

                        // In place, in three slices with ragged edges (scalar heads and tails).
                        SoaVec3Buffer ip = mesh.in_p, inn = mesh.in_n;
                        PackedSkinningJob job;
                        job.matrices = mats;
                        job.influences = &*packed;
                        job.in_positions = ip.in();
                        job.out_positions = ip.out();
                        job.in_normals = inn.in();
                        job.out_normals = inn.out();
                        job.isa = isa;
                        ASSERT_TRUE(job.slice(0, n / 3).run());
                        ASSERT_TRUE(job.slice(n / 3, 21).run());
                        ASSERT_TRUE(job.slice(n / 3 + 21, n).run());
                        expect_matches(want, ip, &inn, isa, "packed in place, three slices");

                        // Positions only.
                        SoaVec3Buffer pp(n);
                        job.in_positions = mesh.in_p.in();
                        job.out_positions = pp.out();
                        job.in_normals = {};
                        job.out_normals = {};
                        ASSERT_TRUE(job.run());
                        expect_matches(want, pp, nullptr, isa, "packed positions only");
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The SSE2 kernels: the scalar kernels' operations in the scalar order, so the scalar bits
// ---------------------------------------------------------------------------------------------

TEST(SlSkinningJob, Sse2GivesTheScalarBits) {
    // Every path of the SSE2 SL kernel (rigid, one entry, mixed entries; with and without the
    // per-run table; streaming or not; odd slices), −0 matrix elements, vertices at the origin,
    // weights of −0, out of the list or negative: bit for bit the scalar kernel.
    if (!skinning_isa_supported(SkinningIsa::Sse2)) GTEST_SKIP() << "no SSE2 kernel in this build";
    std::mt19937 rng(61);
    for (std::size_t entries : {std::size_t{1}, std::size_t{2}, std::size_t{15}, std::size_t{64}, std::size_t{65}}) {
        auto mats = random_matrices(rng, entries);
        // Row 0 of the even entries all −0, of the odd ones positive: rigid vertices with positive
        // coordinates come out at x = −0 unless the blend at f = 0 (−0 + 0·D = +0) is done.
        for (std::size_t k = 0; k < entries; ++k) {
            for (int e = 0; e < 4; ++e) mats[k].m[e] = k % 2 == 0 ? -0.f : std::abs(mats[k].m[e]) + 0.1f;
        }
        mats[entries / 2].m[7] = -0.f;
        const std::size_t n = 16 * 21 + 5;
        Mesh mesh = random_mesh(rng, n);
        for (std::size_t v = 0; v < n; v += 9) mesh.pos[v] = Vec3{};
        mesh.in_p = SoaVec3Buffer(mesh.pos);
        std::vector<float> w(n);
        std::uniform_real_distribution<float> frac(0.f, 1.f);
        const float top = static_cast<float>(entries - 1);
        for (std::size_t v = 0; v < n; ++v) {
            const float run = static_cast<float>((v / 12 * 3) % entries);
            switch (v % 11) {
                case 3: w[v] = top; break;
                case 5: w[v] = run + frac(rng); break;
                case 7: w[v] = v % 3 == 0 ? -0.f : v % 3 == 1 ? -2.5f : top + 3.25f; break;  // −0, invalid
                case 9: w[v] = 1e9f; break;
                default: w[v] = v % 24 < 12 ? run : run + frac(rng) * 0.999f; break;
            }
        }
        for (bool streaming : {false, true}) {
            SoaVec3Buffer sp(n), sn(n), ep(n), en(n);
            SlSkinningJob job = sl_job(mats, w, mesh, SkinningIsa::Scalar);
            job.streaming_stores = streaming;
            job.out_positions = sp.out();
            job.out_normals = sn.out();
            ASSERT_TRUE(job.run());
            job.isa = SkinningIsa::Sse2;
            job.out_positions = ep.out();
            job.out_normals = en.out();
            ASSERT_TRUE(job.slice(0, 3).run());
            ASSERT_TRUE(job.slice(3, 40).run());  // under 32 vertices of blocks: no table
            ASSERT_TRUE(job.slice(43, n).run());
            SCOPED_TRACE(::testing::Message() << entries << " entries, streaming " << streaming);
            EXPECT_TRUE(same_bits(sp, ep)) << "positions";
            EXPECT_TRUE(same_bits(sn, en)) << "normals";
            SoaVec3Buffer wp(n), wn(n);
            job.out_positions = wp.out();
            job.out_normals = wn.out();
            ASSERT_TRUE(job.run());  // whole, aligned: streams when asked
            EXPECT_TRUE(same_bits(sp, wp)) << "positions, one job";
            EXPECT_TRUE(same_bits(sn, wn)) << "normals, one job";
        }
    }
}

TEST(SkinningJob, Sse2GivesTheScalarBits) {
    // SkinningJob and PackedSkinningJob (float and Unorm16 weights, streaming or not) with 1 to 4
    // influences, clamped indices and garbage in unused slots: the scalar kernel's bits.
    if (!skinning_isa_supported(SkinningIsa::Sse2)) GTEST_SKIP() << "no SSE2 kernel in this build";
    std::mt19937 rng(62);
    const std::size_t palette = 40, n = 16 * 13 + 9;
    const auto mats = random_matrices(rng, palette);
    Mesh mesh = random_mesh(rng, n);
    for (int used = 1; used <= 4; ++used) {
        const Influences in = coherent_influences(rng, n, palette, used, 12);
        const auto run = [&](SkinningIsa isa, SoaVec3Buffer& op, SoaVec3Buffer& on) {
            SkinningJob job;
            job.matrices = mats;
            job.indices = in.idx;
            job.weights = in.w;
            job.influences = used;
            job.in_positions = mesh.in_p.in();
            job.in_normals = mesh.in_n.in();
            job.out_positions = op.out();
            job.out_normals = on.out();
            job.isa = isa;
            return job.slice(0, 7).run() && job.slice(7, n).run();
        };
        SoaVec3Buffer sp(n), sn(n), ep(n), en(n);
        ASSERT_TRUE(run(SkinningIsa::Scalar, sp, sn));
        ASSERT_TRUE(run(SkinningIsa::Sse2, ep, en));
        EXPECT_TRUE(same_bits(sp, ep)) << used << " influences: positions";
        EXPECT_TRUE(same_bits(sn, en)) << used << " influences: normals";
        for (auto format : {PackedSkinInfluences::Weights::Float32, PackedSkinInfluences::Weights::Unorm16}) {
            auto packed = PackedSkinInfluences::build(in.idx, in.w, used, palette, format);
            ASSERT_TRUE(packed.ok()) << packed.error().describe();
            for (bool streaming : {false, true}) {
                SoaVec3Buffer pp[2] = {SoaVec3Buffer(n), SoaVec3Buffer(n)}, pn[2] = {SoaVec3Buffer(n), SoaVec3Buffer(n)};
                for (int k = 0; k < 2; ++k) {
                    PackedSkinningJob job;
                    job.matrices = mats;
                    job.influences = &*packed;
                    job.in_positions = mesh.in_p.in();
                    job.in_normals = mesh.in_n.in();
                    job.out_positions = pp[k].out();
                    job.out_normals = pn[k].out();
                    job.isa = k == 0 ? SkinningIsa::Scalar : SkinningIsa::Sse2;
                    job.streaming_stores = streaming;
                    ASSERT_TRUE(job.slice(0, 21).run() && job.slice(21, n).run());
                }
                SCOPED_TRACE(::testing::Message() << used << " influences, unorm16 "
                                                  << (format == PackedSkinInfluences::Weights::Unorm16)
                                                  << ", streaming " << streaming);
                EXPECT_TRUE(same_bits(pp[0], pp[1])) << "packed positions";
                EXPECT_TRUE(same_bits(pn[0], pn[1])) << "packed normals";
            }
        }
    }
}

TEST(PackedSkinInfluences, Unorm16WeightsAreRoundedAndChecked) {
    std::mt19937 rng(8);
    const std::size_t n = 300;
    const Influences in = coherent_influences(rng, n, 50, 4, 10);
    auto f = PackedSkinInfluences::build(in.idx, in.w, 4, 50);
    auto q = PackedSkinInfluences::build(in.idx, in.w, 4, 50, PackedSkinInfluences::Weights::Unorm16);
    ASSERT_TRUE(f.ok() && q.ok());
    EXPECT_EQ(f->bytes(), f->num_blocks() * (4 + 320));  // 20 bytes per vertex + a header
    EXPECT_EQ(q->bytes(), q->num_blocks() * (4 + 192));  // 12 bytes per vertex + a header
    double worst = 0;
    for (std::size_t v = 0; v < n; ++v) {
        for (int k = 0; k < 4; ++k) {
            const double w = in.w[v][static_cast<std::size_t>(k)];
            EXPECT_EQ(q->index(v, k), f->index(v, k));
            worst = std::max(worst, std::abs(q->weight(v, k) - w));
        }
    }
    EXPECT_LE(worst, 0.5 / 65535 + 1e-9);
    EXPECT_GT(worst, 0.0) << "the weights were rounded";
    // Exact ends; weights outside [0, 1] are errors for Unorm16 only.
    std::vector<SkinIndices4> idx(2, SkinIndices4{0, 1, 0, 0});
    std::vector<SkinWeights4> w = {{1.f, 0.f, 0.f, 0.f}, {0.f, 1.f, 0.f, 0.f}};
    auto ends = PackedSkinInfluences::build(idx, w, 2, 2, PackedSkinInfluences::Weights::Unorm16);
    ASSERT_TRUE(ends.ok());
    EXPECT_EQ(ends->weight(0, 0), 1.f);
    EXPECT_EQ(ends->weight(0, 1), 0.f);
    w[1][1] = 1.5f;
    auto bad = PackedSkinInfluences::build(idx, w, 2, 2, PackedSkinInfluences::Weights::Unorm16);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("vertex 1 slot 1"), std::string::npos) << bad.error().message;
    EXPECT_TRUE(PackedSkinInfluences::build(idx, w, 2, 2).ok()) << "Float32 takes any weight";
    w[1][1] = NAN;
    EXPECT_FALSE(PackedSkinInfluences::build(idx, w, 2, 2, PackedSkinInfluences::Weights::Unorm16).ok());
}

TEST(PackedSkinningJob, ValidationAndSlices) {
    std::mt19937 rng(4);
    const auto mats = random_matrices(rng, 8);
    Mesh mesh = random_mesh(rng, 40);
    const Influences in = coherent_influences(rng, 40, 8, 2, 8);
    auto packed = PackedSkinInfluences::build(in.idx, in.w, 2, 8);
    ASSERT_TRUE(packed.ok());
    SoaVec3Buffer op(40), on(40), shortp(39);
    PackedSkinningJob job;
    job.matrices = mats;
    job.influences = &*packed;
    job.in_positions = mesh.in_p.in();
    job.out_positions = op.out();
    EXPECT_TRUE(job.validate());
    auto bad = job;
    bad.influences = nullptr;
    EXPECT_FALSE(bad.run());
    bad = job;
    bad.matrices = std::span<const SkinMatrix>(mats).first(7);
    EXPECT_FALSE(bad.validate());
    bad = job;
    bad.out_positions = shortp.out();
    EXPECT_FALSE(bad.run());
    for (std::size_t v = 0; v < 39; ++v) EXPECT_EQ(shortp.get(v), Vec3{}) << "untouched";
    bad = job;
    bad.in_normals = mesh.in_n.in();
    EXPECT_FALSE(bad.validate());
    bad.out_normals = on.out();
    EXPECT_TRUE(bad.validate());
    // Slices are relative to the job's range and clamped to it.
    const auto s = job.slice(10, 100);
    EXPECT_EQ(s.begin, 10u);
    EXPECT_EQ(s.count, 30u);
    const auto t = s.slice(5, 3);
    EXPECT_EQ(t.begin, 15u);
    EXPECT_EQ(t.count, 3u);
    EXPECT_EQ(s.slice(50, 3).count, 0u);
    // A slice writes only its own vertices.
    ASSERT_TRUE(t.run());
    for (std::size_t v = 0; v < 40; ++v) {
        if (v < 15 || v >= 18) EXPECT_EQ(op.get(v), Vec3{}) << v;
        else EXPECT_NE(op.get(v), Vec3{}) << v;
    }
}

TEST(SlSkinningJob, BlocksOfOneEntryGiveTheSameBitsAsMixedBlocks) {
    // Most blocks of the SL meshes bind all their vertices to one entry; the SIMD kernels take
    // a shortcut there (broadcast elements). The same vertices skinned in blocks that straddle
    // two entries (a slice starting one vertex later) must come out with the same bits.
    std::mt19937 rng(29);
    const std::size_t entries = 15, n = 16 * 24;
    auto mats = random_matrices(rng, entries);
    for (std::size_t k = 0; k < entries; k += 3) mats[k].m[3] = mats[k].m[7] = -0.f;  // −0 translations
    Mesh mesh = random_mesh(rng, n);
    for (std::size_t v = 0; v < n; v += 7) mesh.pos[v] = Vec3{};  // the sign of a zero shows at the origin
    mesh.in_p = SoaVec3Buffer(mesh.pos);
    std::vector<float> w(n);
    std::uniform_real_distribution<float> frac(0.f, 1.f);
    for (std::size_t v = 0; v < n; ++v) {
        const auto entry = static_cast<float>((v / 16 * 5) % (entries - 1));  // runs of 16
        w[v] = entry + (v % 16 < 8 || v % 5 == 0 ? 0.f : frac(rng));          // rigid blocks, rigid vertices
    }
    ASSERT_TRUE(check_sl_weights(w, entries).ok());
    expect_sl_skinning_matches(mats, w, mesh, "runs of one entry");
    for (SkinningIsa isa : all_isas()) {
        if (!skinning_isa_supported(isa)) continue;
        WholeAndSlices t(sl_job(mats, w, mesh, isa), n);
        ASSERT_TRUE(t.job.slice(0, 1).run());
        ASSERT_TRUE(t.job.slice(1, n - 1).run());
        // Vertices 1 .. n − 16 run in whole blocks both times (the last ones of the slice in a
        // padded block of their own).
        t.expect_same(1, n - 15);
    }
}

TEST(SlSkinningJob, TheLastPartialBlockGetsTheBlockArithmetic) {
    // The SIMD kernels run a job's last partial block (1..7 vertices with AVX2, 1..15 with
    // AVX-512) padded, not on the scalar kernel (whose additions and products round where the
    // SIMD kernels fuse them): the vertices come out with the bits they get inside a block.
    std::mt19937 rng(31);
    const std::size_t entries = 15, n = 64;
    const auto mats = random_matrices(rng, entries);
    Mesh mesh = random_mesh(rng, n);
    std::vector<float> w(n);
    std::uniform_real_distribution<float> u(0.f, static_cast<float>(entries - 1));
    for (float& x : w) x = u(rng);
    for (SkinningIsa isa : {SkinningIsa::Avx2, SkinningIsa::Avx512}) {
        if (!skinning_isa_supported(isa)) continue;
        const std::size_t block = isa == SkinningIsa::Avx2 ? 8 : 16;
        WholeAndSlices t(sl_job(mats, w, mesh, isa), n);
        for (std::size_t r = 1; r < block; ++r) {
            ASSERT_TRUE(t.job.slice(0, block + r).run());  // a block and r vertices
            t.expect_same(0, block + r);
            ASSERT_TRUE(t.job.slice(48, r).run());  // r vertices alone, from a block's start
            t.expect_same(48, 48 + r);
        }
        EXPECT_EQ(t.p1.get(40), Vec3{}) << to_string(isa);  // nothing past a slice written
    }
}

TEST(SlSkinningJob, LongListsTakeEveryPath) {
    // ≤ 16 entries (one permute table), 17..32 (two) and more (gather): the same results.
    std::mt19937 rng(13);
    for (std::size_t entries : {std::size_t{1}, std::size_t{2}, std::size_t{16}, std::size_t{17}, std::size_t{32},
                                std::size_t{33}, std::size_t{70}}) {
        const auto mats = random_matrices(rng, entries);
        const std::size_t n = 333;
        Mesh mesh = random_mesh(rng, n);
        std::vector<float> w(n);
        std::uniform_real_distribution<float> u(0.f, static_cast<float>(entries - 1));
        for (std::size_t v = 0; v < n; ++v) w[v] = v % 7 == 3 ? static_cast<float>(entries - 1) : u(rng);
        expect_sl_skinning_matches(mats, w, mesh, "SL list of " + std::to_string(entries));
    }
}

// ---------------------------------------------------------------------------------------------
// Real base meshes
// ---------------------------------------------------------------------------------------------

TEST(SkinningRealData, BaseMeshesBuildTheSpecListsAndSkinAtRest) {
    const std::filesystem::path dir = std::filesystem::path(SLANIM_SHARED_DIR) / "sl-character";
    if (!std::filesystem::exists(dir / "avatar_upper_body.llm")) {
        GTEST_SKIP() << "../shared/sl-character is absent (" << dir << ")";
    }
    auto sk = load_skeleton(dir);
    ASSERT_TRUE(sk.ok()) << sk.error().describe();
    const Skeleton& s = **sk;
    const auto nj = static_cast<std::size_t>(s.num_joints());
    std::vector<Vec3> mp(nj);
    std::vector<Quat> mr(nj);
    LocalToModelJob l2m;
    l2m.skeleton = &s;
    l2m.local_positions = s.rest_positions();
    l2m.local_rotations = s.rest_rotations();
    l2m.local_scales = s.rest_scales();
    l2m.model_positions = mp;
    l2m.model_rotations = mr;
    ASSERT_TRUE(l2m.run());
    const Vec3 pelvis_pivot = s.pivot(s.find("mPelvis"));

    for (const auto& c : mesh_cases()) {
        const auto path = dir / (std::string("avatar_") + c.mesh + ".llm");
        auto mesh = load_llm(path, LlmFileKind::Base);
        ASSERT_TRUE(mesh.ok()) << mesh.error().describe();
        ASSERT_TRUE(mesh->has_weights) << c.mesh;
        auto list = build_skin_joint_list(s, mesh->skin_joints);
        ASSERT_TRUE(list.ok()) << c.mesh << ": " << list.error().describe();
        EXPECT_EQ(describe(*list), c.expected) << c.mesh;
        ASSERT_TRUE(check_sl_weights(mesh->weights, list->entries.size()).ok()) << c.mesh;

        // At rest every joint sits at its `pos` chain while the mesh is bound at the `pivot`
        // chain; they differ by millimetres, so a rest-skinned vertex is its bind position
        // moved down by the pelvis pivot, within a few millimetres. A wrong entry or a wrong
        // offset moves it by centimetres or more.
        std::vector<SkinMatrix> mats(list->entries.size());
        SlSkinMatricesJob mj;
        mj.joints = &*list;
        mj.model_positions = mp;
        mj.model_rotations = mr;
        mj.matrices = mats;
        ASSERT_TRUE(mj.run());
        const std::size_t n = mesh->coords.size();
        SoaVec3Buffer ip(mesh->coords), in(mesh->normals), op(n), on(n);
        SlSkinningJob job;
        job.matrices = mats;
        job.weights = mesh->weights;
        job.in_positions = ip.in();
        job.in_normals = in.in();
        job.out_positions = op.out();
        job.out_normals = on.out();
        ASSERT_TRUE(job.run());
        double worst = 0;
        std::size_t below_one = 0;
        for (std::size_t v = 0; v < n; ++v) {
            if (mesh->weights[v] < 1.f) {
                ++below_one;  // blends toward mRoot's identity: not shifted by the pelvis pivot
                continue;
            }
            const Vec3 d = op.get(v) - (mesh->coords[v] - pelvis_pivot);
            worst = std::max(worst, static_cast<double>(length(d)));
        }
        EXPECT_LT(worst, 0.005) << c.mesh;
        EXPECT_LT(below_one, n / 100 + 1) << c.mesh;
    }
}

// SkinningIsa::Auto follows the process's instruction set (active_isa(): SLANIM_ISA or
// set_active_isa), bit for bit the kernel it names; a forced kernel stays available above it.
TEST(SkinningJob, AutoRunsTheKernelOfTheActiveInstructionSet) {
    const test::ActiveIsaGuard guard;
    std::mt19937 rng(7);
    const std::size_t n = 1000;
    Mesh mesh = random_mesh(rng, n);
    const auto mats = random_matrices(rng, 20);
    std::vector<SkinIndices4> idx(n);
    std::vector<SkinWeights4> w(n);
    for (std::size_t v = 0; v < n; ++v) {
        idx[v] = {static_cast<std::uint16_t>(v % 20), static_cast<std::uint16_t>((v * 7) % 20), 3, 11};
        w[v] = {0.4f, 0.3f, 0.2f, 0.1f};
    }
    const auto run = [&](SkinningIsa isa, SoaVec3Buffer& op, SoaVec3Buffer& on) {
        SkinningJob job;
        job.matrices = mats;
        job.indices = idx;
        job.weights = w;
        job.in_positions = mesh.in_p.in();
        job.in_normals = mesh.in_n.in();
        job.out_positions = op.out();
        job.out_normals = on.out();
        job.isa = isa;
        return job.run();
    };
    const auto bits = [&](const SoaVec3Buffer& b) {
        std::vector<Vec3> out(n);
        for (std::size_t v = 0; v < n; ++v) out[v] = b.get(v);
        return out;
    };
    for (Isa isa : test::supported_isas()) {
        ASSERT_TRUE(set_active_isa(isa));
        const SkinningIsa want = isa == Isa::Avx512 ? SkinningIsa::Avx512
                                 : isa == Isa::Avx2 ? SkinningIsa::Avx2
                                 : isa == Isa::Sse2 ? SkinningIsa::Sse2
                                                    : SkinningIsa::Scalar;
        EXPECT_EQ(resolve_skinning_isa(SkinningIsa::Auto), want) << isa_name(isa);
        SoaVec3Buffer ap(n), an(n), fp(n), fn(n);
        ASSERT_TRUE(run(SkinningIsa::Auto, ap, an));
        ASSERT_TRUE(run(want, fp, fn));
        EXPECT_EQ(std::memcmp(bits(ap).data(), bits(fp).data(), n * sizeof(Vec3)), 0) << isa_name(isa);
        EXPECT_EQ(std::memcmp(bits(an).data(), bits(fn).data(), n * sizeof(Vec3)), 0) << isa_name(isa);
        // Forcing the CPU's best kernel under a lower active set still works.
        const SkinningIsa best = isa_supported(Isa::Avx512) ? SkinningIsa::Avx512
                                 : isa_supported(Isa::Avx2) ? SkinningIsa::Avx2
                                 : isa_supported(Isa::Sse2) ? SkinningIsa::Sse2
                                                            : SkinningIsa::Scalar;
        EXPECT_TRUE(skinning_isa_supported(best));
        EXPECT_TRUE(run(best, fp, fn)) << isa_name(isa);
    }
    EXPECT_EQ(skinning_isa_supported(SkinningIsa::Sse2), isa_supported(Isa::Sse2));
    EXPECT_EQ(skinning_isa_supported(SkinningIsa::Avx2), isa_supported(Isa::Avx2));
    EXPECT_EQ(skinning_isa_supported(SkinningIsa::Avx512), isa_supported(Isa::Avx512));
}

}  // namespace
}  // namespace slanim
