// SPDX-License-Identifier: MIT
// Visual params at run time: morphs, drivers, skeletal params, wearables (spec §6.1–§6.3).
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>

#include "slanim/appearance/visual_params.hpp"
#include "slanim/formats/skeleton_xml.hpp"

using namespace slanim;

namespace {

constexpr float kEps = 1e-6f;

void expect_vec(Vec3 a, Vec3 b, float eps = kEps) {
    EXPECT_NEAR(a.x, b.x, eps);
    EXPECT_NEAR(a.y, b.y, eps);
    EXPECT_NEAR(a.z, b.z, eps);
}

Vec3 normalize(Vec3 v) { return v * (1.f / length(v)); }

LlmMorph morph(std::string name, std::vector<std::uint32_t> v, std::vector<Vec3> c,
               std::vector<Vec3> n, std::vector<Vec3> b, std::vector<Vec2> uv) {
    LlmMorph m;
    m.name = std::move(name);
    m.vertices = std::move(v);
    m.coords = std::move(c);
    m.normals = std::move(n);
    m.binormals = std::move(b);
    m.texcoords = std::move(uv);
    return m;
}

/// A 4-vertex quad with a few morphs, as a base `.llm` mesh.
LlmMesh quad() {
    LlmMesh m;
    m.kind = LlmFileKind::Base;
    m.has_weights = true;
    m.coords = {{0.f, 0.f, 1.f}, {0.1f, 0.f, 1.f}, {0.1f, -0.1f, 1.f}, {0.f, 0.1f, 1.f}};
    m.normals.assign(4, Vec3{0.f, 0.f, 1.f});
    m.binormals.assign(4, Vec3{0.f, 1.f, 0.f});  // differs from the normals: the seed quirk
    m.texcoords = {{0.f, 0.f}, {1.f, 0.f}, {1.f, 1.f}, {0.f, 1.f}};
    m.weights.assign(4, 1.f);
    m.faces = {{0, 1, 2}, {0, 2, 3}};
    m.skin_joints = {"mPelvis"};
    m.morphs.push_back(morph("Bulge", {0, 2}, {{0.1f, 0.f, 0.f}, {0.f, 0.2f, 0.f}},
                             {{1.f, 0.f, 0.f}, {0.f, 0.f, 0.f}}, {{0.f, 1.f, 0.f}, {0.f, 0.f, 0.f}},
                             {{0.01f, 0.02f}, {0.f, 0.f}}));
    m.morphs.push_back(morph("Twist", {1, 2}, {{0.f, 0.f, 0.3f}, {0.05f, 0.f, 0.f}},
                             {{0.f, 1.f, 0.f}, {0.5f, 0.f, -0.5f}},
                             {{1.f, 0.f, 0.f}, {0.f, 0.f, 1.f}}, {{0.f, 0.1f}, {0.2f, 0.f}}));
    m.morphs.push_back(morph("Breast_Female_Cleavage", {0, 1},
                             {{0.f, -0.1f, 0.f}, {0.f, 0.2f, 0.f}}, {{0.f, 0.f, 0.f}, {1.f, 1.f, 0.f}},
                             {{0.f, 2.f, 0.f}, {0.f, 0.f, 4.f}}, {{0.5f, 0.f}, {0.f, 0.5f}}));
    m.morphs.push_back(morph("Male_Only", {1}, {{0.f, 0.f, 0.1f}}, {{0.f, 0.f, 0.f}},
                             {{0.f, 0.f, 0.f}}, {{0.f, 0.f}}));
    m.morphs.push_back(morph("Small_Butt", {3}, {{0.01f, 0.f, 0.f}}, {{0.f, 1.f, 0.f}},
                             {{0.f, 1.f, 0.f}}, {{0.25f, 0.f}}));
    return m;
}

VisualParamDef param(int id, std::string name, VisualParamKind kind, float min = 0.f,
                     float max = 1.f, float def = 0.f) {
    VisualParamDef p;
    p.id = id;
    p.name = std::move(name);
    p.kind = kind;
    p.min = min;
    p.max = max;
    p.default_weight = def;
    if (kind == VisualParamKind::Morph) p.mesh_type = "upperBodyMesh";
    return p;
}

/// The first collision volume whose parent is `bone`.
int volume_child(const Skeleton& s, int bone) {
    for (int j = 0; j < s.num_joints(); ++j)
        if (s.parent(j) == bone && s.kind(j) == JointKind::CollisionVolume) return j;
    return -1;
}

/// The model of the viewer's character folder `dir` on its own skeleton.
Result<std::shared_ptr<const AppearanceModel>> load_real_model(const std::filesystem::path& dir) {
    auto skel = load_skeleton(dir);
    if (!skel) return skel.error();
    return load_appearance_model(dir, *skel);
}

struct Fixture {
    LlmMesh mesh = quad();
    AvatarDefinition def;
    std::shared_ptr<const AppearanceModel> model;

    Fixture() {
        def.params.push_back(param(1, "Bulge", VisualParamKind::Morph, -1.f, 2.f, 0.f));
        def.params.back().wearable = "shape";
        def.params.push_back(param(2, "Twist_Driven", VisualParamKind::Morph));  // → "Twist"
        auto cleave = param(3, "Breast_Physics_LeftRight_Driven", VisualParamKind::Morph, -1.f, 1.f);
        def.params.push_back(cleave);
        def.params.push_back(param(4, "Butt_Physics_LeftRight_Driven", VisualParamKind::Morph, -1.f, 1.f));
        auto male_only = param(5, "Male_Bulge", VisualParamKind::Morph, 0.f, 1.f, 0.25f);
        male_only.morph_name = "Male_Only";
        male_only.sex = Sex::Male;
        def.params.push_back(male_only);
        auto vol = param(6, "Belly_Vol", VisualParamKind::Morph);
        vol.morph_name = "Small_Butt";
        vol.volume_morphs.push_back({"BELLY", {0.1f, 0.f, 0.f}, {0.f, 0.f, 0.01f}});
        vol.volume_morphs.push_back({"NO_SUCH_VOLUME", {1.f, 1.f, 1.f}, {}});
        def.params.push_back(vol);
        auto sk = param(20, "Torso_Len", VisualParamKind::Skeleton, -1.f, 1.f, 0.f);
        sk.bones.push_back({"mTorso", {0.1f, 0.2f, 0.3f}, {0.f, 0.f, 0.05f}, true});
        sk.wearable = "shape";
        def.params.push_back(sk);
        auto male = param(80, "male", VisualParamKind::Driver, 0.f, 1.f, 0.f);
        male.wearable = "shape";
        def.params.push_back(male);
        auto drv = param(10, "Drv", VisualParamKind::Driver, 0.f, 1.f, 0.5f);
        drv.driven.push_back({1, 0.2f, 0.4f, 0.6f, 0.8f});
        drv.wearable = "shape";
        def.params.push_back(drv);
        auto skin = param(30, "Skin_Tone", VisualParamKind::Color);
        skin.wearable = "skin";
        def.params.push_back(skin);
        const AppearanceMeshInput in{"upperBodyMesh", &mesh};
        auto built = AppearanceModel::build(def, std::span(&in, 1), Skeleton::default_skeleton());
        if (!built) ADD_FAILURE() << built.error().describe();
        else model = *built;
    }
};

struct Pose {
    std::vector<Vec3> positions, scales;
    std::vector<Quat> rotations;
    explicit Pose(const Skeleton& s)
        : positions(s.rest_positions().begin(), s.rest_positions().end()),
          scales(s.rest_scales().begin(), s.rest_scales().end()),
          rotations(s.rest_rotations().begin(), s.rest_rotations().end()) {}
    LocalPose view() { return {positions, rotations, scales}; }
};

VisualParamUpdateStats update(AppearanceState& s, LocalPose pose = {}) {
    VisualParamUpdateStats st;
    VisualParamUpdateJob job;
    job.state = &s;
    job.pose = pose;
    job.stats = &st;
    EXPECT_TRUE(job.run());
    return st;
}

}  // namespace

TEST(VisualParams, ModelTableIsSortedByIdWithCaseInsensitiveNames) {
    Fixture f;
    ASSERT_TRUE(f.model);
    const auto params = f.model->params();
    for (std::size_t i = 1; i < params.size(); ++i) EXPECT_LT(params[i - 1].id, params[i].id);
    EXPECT_EQ(f.model->find("bulge"), f.model->find(1));
    EXPECT_EQ(f.model->find("BULGE"), f.model->find(1));
    EXPECT_EQ(f.model->find("nope"), kNoParam);
    EXPECT_EQ(f.model->find(999), kNoParam);
    // The unknown volume is skipped with a warning, like the viewer.
    ASSERT_EQ(f.model->warnings().size(), 1u);
    EXPECT_NE(f.model->warnings()[0].find("NO_SUCH_VOLUME"), std::string::npos);
}

TEST(VisualParams, BuffersAreSeededLikeInitializeForMorph) {
    Fixture f;
    AppearanceState s(f.model);
    const MeshBuffers& b = s.meshes()[0];
    for (std::size_t v = 0; v < 4; ++v) {
        EXPECT_EQ(b.coords[v], f.mesh.coords[v]);
        EXPECT_EQ(b.normals[v], f.mesh.normals[v]);
        // The quirk: binormals and both accumulators start from the base normals.
        EXPECT_EQ(b.binormals[v], f.mesh.normals[v]);
        EXPECT_EQ(b.scaled_binormals[v], f.mesh.normals[v]);
        EXPECT_EQ(b.scaled_normals[v], f.mesh.normals[v]);
    }
    // Last weights start at 0: the first update applies every non-zero default.
    for (float w : s.last_weights()) EXPECT_EQ(w, 0.f);
}

TEST(VisualParams, MorphAppliesCoordsNormalsBinormalsAndTexcoords) {
    Fixture f;
    AppearanceState s(f.model);
    const ParamIndex drv = f.model->find("Drv");
    const ParamIndex bulge = f.model->find("Bulge");
    ASSERT_TRUE(s.set_weight(drv, 0.f));  // driven Bulge → its min (−1)
    EXPECT_EQ(s.weight(bulge), -1.f);
    ASSERT_TRUE(s.set_weight(bulge, 0.5f));  // the last write wins
    update(s);
    const MeshBuffers& b = s.meshes()[0];
    expect_vec(b.coords[0], {0.05f, 0.f, 1.f});
    expect_vec(b.coords[2], {0.1f, -0.1f + 0.1f, 1.f});
    EXPECT_NEAR(b.texcoords[0].x, 0.005f, kEps);
    EXPECT_NEAR(b.texcoords[0].y, 0.01f, kEps);
    // Vertex 0: scaled normal (0,0,1) + (1,0,0)·0.5·0.65.
    const Vec3 sn{0.325f, 0.f, 1.f};
    expect_vec(b.scaled_normals[0], sn);
    const Vec3 n = normalize(sn);
    expect_vec(b.normals[0], n);
    // Binormal: scaled binormal (seeded with the normal) + (0,1,0)·0.325; b = n × (sb × n).
    const Vec3 sb{0.f, 0.325f, 1.f};
    expect_vec(b.scaled_binormals[0], sb);
    expect_vec(b.binormals[0], normalize(cross(n, cross(sb, n))));
    expect_vec(b.binormals[0], {-0.655396f, 0.724624f, 0.213003f}, 1e-5f);
    // Vertex 2: zero normal delta, degenerate binormal delta → (1,0,0).
    expect_vec(b.normals[2], {0.f, 0.f, 1.f});
    expect_vec(b.scaled_binormals[2], {0.325f, 0.f, 1.f});
    // Untouched vertex 3 keeps the seeded values.
    EXPECT_EQ(b.binormals[3], f.mesh.normals[3]);
}

TEST(VisualParams, DrivenNameFallbackAndPhysicsClones) {
    Fixture f;
    const AppearanceMesh& mesh = f.model->meshes()[0];
    // Twist_Driven binds the "Twist" morph.
    const AppearanceParam& twist = f.model->param(f.model->find(2));
    ASSERT_EQ(twist.morphs_count, 1u);
    EXPECT_EQ(mesh.morphs[f.model->morph_bindings()[twist.morphs_first].morph].name, "Twist");
    // Cleavage clone: ×0.75, y mirrored where the source y < 0; texcoords copied.
    const MorphTarget* lr = mesh.find_morph("Breast_Physics_LeftRight_Driven");
    ASSERT_NE(lr, nullptr);
    expect_vec(lr->coords[0], {0.f, 0.075f, 0.f});
    expect_vec(lr->coords[1], {0.f, 0.15f, 0.f});
    expect_vec(lr->normals[1], {0.75f, 0.75f, 0.f});
    expect_vec(lr->binormals[0], {0.f, -1.5f, 0.f});
    EXPECT_EQ(lr->texcoords[0], (Vec2{0.5f, 0.f}));
    const MorphTarget* io = mesh.find_morph("Breast_Physics_InOut_Driven");
    ASSERT_NE(io, nullptr);
    expect_vec(io->coords[0], {0.f, -0.1f, 0.f});
    // Direction clones: constant coords, zero normals, binormals sanitised to (1,0,0).
    const MorphTarget* butt = mesh.find_morph("Butt_Physics_LeftRight_Driven");
    ASSERT_NE(butt, nullptr);
    expect_vec(butt->coords[0], {0.f, 0.03f, 0.f});
    expect_vec(butt->normals[0], {0.f, 0.f, 0.f});
    expect_vec(butt->binormals[0], {1.f, 0.f, 0.f});
    EXPECT_EQ(butt->texcoords[0], (Vec2{0.25f, 0.f}));
    const MorphTarget* up = mesh.find_morph("Butt_Physics_UpDown_Driven");
    ASSERT_NE(up, nullptr);
    expect_vec(up->coords[0], {0.f, 0.f, 0.05f});
    // The param bound to the clone, not to the source.
    const AppearanceParam& p4 = f.model->param(f.model->find(4));
    EXPECT_EQ(mesh.morphs[f.model->morph_bindings()[p4.morphs_first].morph].name,
              "Butt_Physics_LeftRight_Driven");
}

TEST(VisualParams, DriverRampCoversEverySegmentAndEdge) {
    Fixture f;
    AppearanceState s(f.model);
    const ParamIndex drv = f.model->find("Drv"), bulge = f.model->find("Bulge");
    // Initial: the driver's default (0.5, in the hold) propagated: driven max (2).
    EXPECT_EQ(f.model->initial_weights()[bulge], 2.f);
    EXPECT_EQ(s.weight(bulge), 2.f);
    // Bulge range [−1, 2]; ramp min1 0.2, max1 0.4, max2 0.6, min2 0.8; driver range [0, 1].
    const std::pair<float, float> cases[] = {
        {0.1f, -1.f},   // below min1 → driven min
        {0.2f, -1.f},   // x == min1 → driven min
        {0.3f, 0.5f},   // up ramp midpoint
        {0.4f, 2.f},    // x == max1 → driven max
        {0.5f, 2.f},    // hold
        {0.6f, 2.f},    // x == max2 → driven max
        {0.7f, 0.5f},   // down ramp midpoint
        {0.8f, -1.f},   // x == min2 → driven min
        {0.9f, -1.f},   // beyond min2, max2 < driver max → driven min
        {-5.f, -1.f},   // clamped driver
    };
    for (auto [x, want] : cases) {
        s.set_weight(drv, x);
        EXPECT_NEAR(s.weight(bulge), want, 1e-5f) << "driver " << x;
    }
    EXPECT_EQ(s.weight(drv), 0.f);  // −5 clamped
    // The special edges of getDrivenWeight.
    DrivenBinding d{0, 0.f, 0.f, 0.5f, 0.7f};  // min1 == max1 ≤ driver min → driven max
    EXPECT_EQ(driven_weight(d, 0.f, 0.f, 1.f, -1.f, 2.f), 2.f);
    d = {0, 0.1f, 0.1f, 0.5f, 0.7f};  // min1 == max1 > driver min → driven min
    EXPECT_EQ(driven_weight(d, 0.05f, 0.f, 1.f, -1.f, 2.f), -1.f);
    d = {0, 0.f, 0.5f, 1.f, 1.f};  // max2 ≥ driver max: beyond → driven max
    EXPECT_EQ(driven_weight(d, 1.5f, 0.f, 1.f, -1.f, 2.f), 2.f);
    d = {0, 0.f, 0.5f, 0.9f, 0.95f};  // max2 < driver max: beyond → driven min
    EXPECT_EQ(driven_weight(d, 0.97f, 0.f, 1.f, -1.f, 2.f), -1.f);
}

TEST(VisualParams, SkeletalParamScalesBonesAndVolumeChildrenAndOffsets) {
    Fixture f;
    AppearanceState s(f.model);
    const Skeleton& sk = f.model->skeleton();
    Pose pose(sk);
    update(s, pose.view());  // defaults (skeleton default 0: no change)
    const int torso = sk.find("mTorso");
    const int child = volume_child(sk, torso);
    ASSERT_GE(child, 0);
    const std::uint32_t serial = s.skeleton_serial();
    const Vec3 rest_child = sk.rest_scales()[child];
    const Vec3 rest_pos = pose.positions[torso];
    s.set_weight(f.model->find(20), 0.5f);
    update(s, pose.view());
    expect_vec(s.joint_scale_deltas()[torso], {0.05f, 0.1f, 0.15f});
    expect_vec(pose.scales[torso], {1.05f, 1.1f, 1.15f});
    expect_vec(s.joint_scale_deltas()[child], scaled(rest_child, Vec3{0.05f, 0.1f, 0.15f}));
    expect_vec(pose.scales[child], rest_child + scaled(rest_child, Vec3{0.05f, 0.1f, 0.15f}));
    expect_vec(s.joint_position_deltas()[torso], {0.f, 0.f, 0.025f});
    expect_vec(pose.positions[torso], rest_pos + Vec3{0.f, 0.f, 0.025f});
    EXPECT_EQ(s.skeleton_serial(), serial + 1);
    // Back to −1: deltas follow the weight, not the history.
    s.set_weight(f.model->find(20), -1.f);
    update(s, pose.view());
    expect_vec(pose.scales[torso], {0.9f, 0.8f, 0.7f});
    expect_vec(pose.positions[torso], rest_pos + Vec3{0.f, 0.f, -0.05f});
}

TEST(VisualParams, VolumeMorphsMoveAndScaleCollisionVolumes) {
    Fixture f;
    AppearanceState s(f.model);
    update(s);
    const int belly = f.model->skeleton().find_collision_volume("BELLY");
    ASSERT_GE(belly, 0);
    s.set_weight(f.model->find(6), 0.5f);
    update(s);
    expect_vec(s.joint_scale_deltas()[belly], {0.05f, 0.f, 0.f});
    expect_vec(s.joint_position_deltas()[belly], {0.f, 0.f, 0.005f});
}

// The job marks the joints skeletal params moved (bit 1) and scaled (bit 2), which the runtime
// uses to put attachment overrides back (LLPolySkeletalDistortion::apply writes through them);
// volume morphs mark nothing (the viewer writes collision volumes without overrides).
TEST(VisualParams, TouchedMarksTheJointsSkeletalParamsWrite) {
    Fixture f;
    AppearanceState s(f.model);
    const Skeleton& sk = f.model->skeleton();
    Pose pose(sk);
    update(s, pose.view());
    const auto n = static_cast<std::size_t>(sk.num_joints());
    std::vector<std::uint8_t> touched(n, 0);
    VisualParamUpdateJob job;
    job.state = &s;
    job.pose = pose.view();
    job.touched = touched;
    // A volume morph alone marks nothing.
    s.set_weight(f.model->find(6), 0.5f);
    ASSERT_TRUE(job.run());
    EXPECT_EQ(std::count(touched.begin(), touched.end(), 0), static_cast<long>(n));
    // The skeletal param: mTorso offset and scaled (3), its volume children scaled (2), nothing else.
    s.set_weight(f.model->find(20), 0.5f);
    ASSERT_TRUE(job.run());
    const int torso = sk.find("mTorso");
    for (std::size_t j = 0; j < n; ++j) {
        const bool child = sk.kind(static_cast<int>(j)) == JointKind::CollisionVolume && sk.parent(static_cast<int>(j)) == torso;
        const std::uint8_t want = static_cast<int>(j) == torso ? 3u : child ? 2u : 0u;
        EXPECT_EQ(touched[j], want) << sk.name(static_cast<int>(j));
    }
    EXPECT_GE(volume_child(sk, torso), 0);
    // Too short a span is refused.
    std::vector<std::uint8_t> short_span(3, 0);
    job.touched = short_span;
    EXPECT_FALSE(job.validate());
}

TEST(VisualParams, SexSelectsTheDefaultWeightOfOtherSexParams) {
    Fixture f;
    AppearanceState s(f.model);
    const ParamIndex p = f.model->find("Male_Bulge");
    s.set_weight(p, 1.f);
    EXPECT_EQ(s.effective_weight(p), 0.25f);  // female avatar: default
    update(s);
    EXPECT_EQ(s.last_weights()[p], 0.25f);
    s.set_sex(Sex::Male);
    EXPECT_TRUE(s.dirty());
    update(s);
    EXPECT_EQ(s.last_weights()[p], 1.f);
}

TEST(VisualParams, AFrameWithoutChangesDoesNoWork) {
    Fixture f;
    AppearanceState s(f.model);
    auto st = update(s);
    EXPECT_GT(st.params_applied, 0);
    const std::uint64_t rev = s.meshes()[0].revision;
    const std::vector<Vec3> coords = s.meshes()[0].coords;
    EXPECT_FALSE(s.dirty());
    st = update(s);
    EXPECT_EQ(st.params_applied, 0);
    EXPECT_EQ(st.morphs_applied, 0);
    EXPECT_EQ(st.vertices_touched, 0u);
    EXPECT_EQ(s.meshes()[0].revision, rev);
    // Setting a weight to its current value is no change either.
    s.set_weight(f.model->find(2), s.weight(f.model->find(2)));
    EXPECT_FALSE(s.dirty());
    // One change → exactly that morph's vertices.
    s.set_weight(f.model->find(2), 0.7f);
    st = update(s);
    EXPECT_EQ(st.params_applied, 1);
    EXPECT_EQ(st.morphs_applied, 1);
    EXPECT_EQ(st.vertices_touched, 2u);
    EXPECT_NE(s.meshes()[0].revision, rev);
    EXPECT_EQ(s.meshes()[0].coords[0], coords[0]);  // not in the Twist morph
}

TEST(VisualParams, DifferentialApplicationMatchesAFreshApplication) {
    Fixture f;
    AppearanceState a(f.model);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.5f, 2.5f);
    const ParamIndex ps[] = {f.model->find(1), f.model->find(2), f.model->find(3),
                             f.model->find(4), f.model->find(6), f.model->find(20)};
    for (int i = 0; i < 500; ++i) {
        for (ParamIndex p : ps)
            if (rng() % 2) a.set_weight(p, u(rng));
        if (rng() % 3 == 0) update(a);
    }
    update(a);
    AppearanceState b(f.model);
    for (ParamIndex p : ps) b.set_weight(p, a.weight(p));
    update(b);
    for (std::size_t v = 0; v < 4; ++v) {
        const MeshBuffers &x = a.meshes()[0], &y = b.meshes()[0];
        expect_vec(x.coords[v], y.coords[v], 1e-5f);
        expect_vec(x.normals[v], y.normals[v], 1e-5f);
        expect_vec(x.binormals[v], y.binormals[v], 1e-5f);
        EXPECT_NEAR(x.texcoords[v].x, y.texcoords[v].x, 1e-5f);
        EXPECT_NEAR(x.texcoords[v].y, y.texcoords[v].y, 1e-5f);
    }
    for (std::size_t j = 0; j < a.joint_scale_deltas().size(); ++j) {
        expect_vec(a.joint_scale_deltas()[j], b.joint_scale_deltas()[j], 1e-5f);
        expect_vec(a.joint_position_deltas()[j], b.joint_position_deltas()[j], 1e-5f);
    }
}

TEST(VisualParams, ApplyWearableSetsItsTypeAndReportsTheRest) {
    Fixture f;
    AppearanceState s(f.model);
    s.set_weight(f.model->find(20), 0.9f);  // shape param absent from the file → default
    Wearable w;
    w.type = WearableType::Shape;
    w.params = {{80, 1.f}, {10, 0.3f}, {30, 0.5f}, {4242, 1.f}};
    const WearableApplyReport r = s.apply_wearable(w);
    EXPECT_EQ(r.unknown_ids, std::vector<int>{4242});
    EXPECT_EQ(r.other_ids, std::vector<int>{30});  // a skin param
    EXPECT_EQ(r.applied, 4);                        // ids 1, 10, 20, 80
    EXPECT_EQ(s.weight(f.model->find(20)), 0.f);
    EXPECT_NEAR(s.weight(f.model->find(1)), 0.5f, 1e-5f);  // Drv 0.3 → up-ramp midpoint
    EXPECT_EQ(s.weight(f.model->find(30)), 0.f);
    EXPECT_EQ(s.sex(), Sex::Male);
}

TEST(VisualParams, BuildErrorsNameTheProblem) {
    const LlmMesh mesh = quad();
    const AppearanceMeshInput in{"upperBodyMesh", &mesh};
    auto build = [&](VisualParamDef p) {
        AvatarDefinition def;
        def.params.push_back(std::move(p));
        return AppearanceModel::build(def, std::span(&in, 1), Skeleton::default_skeleton());
    };
    auto r = build(param(1, "NoSuchMorph", VisualParamKind::Morph));
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("no morph named 'NoSuchMorph'"), std::string::npos);
    auto other = param(1, "Bulge", VisualParamKind::Morph);
    other.mesh_type = "headMesh";
    r = build(other);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("headMesh"), std::string::npos);
    auto bone = param(1, "Len", VisualParamKind::Skeleton);
    bone.bones.push_back({"mNoSuchBone", {1.f, 1.f, 1.f}, {}, false});
    r = build(bone);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("mNoSuchBone"), std::string::npos);
    // A driver cycle.
    AvatarDefinition def;
    def.params.push_back(param(1, "A", VisualParamKind::Driver));
    def.params.back().driven.push_back({2});
    def.params.push_back(param(2, "B", VisualParamKind::Driver));
    def.params.back().driven.push_back({1});
    r = AppearanceModel::build(def, std::span(&in, 1), Skeleton::default_skeleton());
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("cycle"), std::string::npos);
    // A morph vertex outside the mesh.
    LlmMesh bad = quad();
    bad.morphs[0].vertices[1] = 4;
    const AppearanceMeshInput bin{"upperBodyMesh", &bad};
    r = AppearanceModel::build(AvatarDefinition{}, std::span(&bin, 1), Skeleton::default_skeleton());
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("vertex 4"), std::string::npos);
}

TEST(VisualParams, RealCharacterBuildsAndTheBaseShapeChangesTheMesh) {
    const std::filesystem::path dir = std::filesystem::path(SLANIM_SHARED_DIR) / "sl-character";
    const std::filesystem::path shape = std::filesystem::path(SLANIM_SHARED_DIR) / "wearables" / "base_shape.dat";
    if (!std::filesystem::exists(dir / "avatar_lad.xml") || !std::filesystem::exists(shape))
        GTEST_SKIP() << "reference data not found under " << SLANIM_SHARED_DIR;
    auto model = load_real_model(dir);
    ASSERT_TRUE(model) << model.error().describe();
    const AppearanceModel& m = **model;
    std::size_t verts = 0;
    for (const AppearanceMesh& mesh : m.meshes()) verts += mesh.num_vertices();
    EXPECT_EQ(m.meshes().size(), 8u);  // the eye file serves the left and the right eyeball
    EXPECT_EQ(verts, 5322u + 145u);     // 5,322 across the seven files, plus the second eye
    // The hand, emote and physics params bind.
    for (const char* name : {"Hands_Fist", "Hands_Point_R", "Hands_Spread_R", "express_smile",
                             "Express_Closed_Mouth", "Breast_Physics_LeftRight_Driven",
                             "Belly_Physics_Torso_UpDown_Driven", "Blink_Left"})
        EXPECT_NE(m.find(name), kNoParam) << name;
    EXPECT_EQ(m.drivers().size() >= 100u, true);
    for (const std::string& w : m.warnings()) std::printf("  model warning: %s\n", w.c_str());

    AppearanceState s(*model);
    update(s);
    std::vector<std::vector<Vec3>> before;
    for (const MeshBuffers& b : s.meshes()) before.push_back(b.coords);
    auto wearable = load_wearable(shape);
    ASSERT_TRUE(wearable) << wearable.error().describe();
    const WearableApplyReport r = s.apply_wearable(*wearable);
    EXPECT_GT(r.applied, 20);
    EXPECT_TRUE(r.unknown_ids.empty());
    const auto st = update(s);
    EXPECT_GT(st.morphs_applied, 0);
    double moved = 0.0;
    for (std::size_t k = 0; k < before.size(); ++k)
        for (std::size_t v = 0; v < before[k].size(); ++v)
            moved = std::max<double>(moved, length(s.meshes()[k].coords[v] - before[k][v]));
    // base_shape.dat is close to the defaults: it changes one morph (0.1 mm).
    EXPECT_GT(moved, 1e-5);
    EXPECT_EQ(s.sex(), Sex::Female);

    // A real custom shape: the body changes by centimetres, bones scale, the sex flips.
    const auto jim = std::filesystem::path(SLANIM_SHARED_DIR) / "wearables" / "jim_shape.dat";
    if (!std::filesystem::exists(jim)) return;
    auto jw = load_wearable(jim);
    ASSERT_TRUE(jw) << jw.error().describe();
    for (const MeshBuffers& b : s.meshes()) before.push_back(b.coords);
    before.erase(before.begin(), before.begin() + static_cast<std::ptrdiff_t>(s.meshes().size()));
    const std::uint32_t serial = s.skeleton_serial();
    s.apply_wearable(*jw);
    const auto jst = update(s);
    EXPECT_GT(jst.skeletal_applied, 0);
    EXPECT_GT(s.skeleton_serial(), serial);
    EXPECT_EQ(s.sex(), Sex::Male);
    moved = 0.0;
    for (std::size_t k = 0; k < before.size(); ++k)
        for (std::size_t v = 0; v < before[k].size(); ++v)
            moved = std::max<double>(moved, length(s.meshes()[k].coords[v] - before[k][v]));
    EXPECT_GT(moved, 0.01);
    for (const MeshBuffers& b : s.meshes())
        for (std::size_t v = 0; v < b.coords.size(); ++v) {
            ASSERT_TRUE(is_finite(b.coords[v]) && is_finite(b.normals[v]) && is_finite(b.binormals[v]));
            EXPECT_NEAR(length(b.normals[v]), 1.f, 1e-3f);
        }
}

// The job visits only the params set since it last ran (and those a rounding remainder left
// unsettled, and every param after a sex change): after any sequence of weight changes, drivers
// among them, and sex flips, every param ends applied with its effective weight, as with a job
// that scans every param.
TEST(VisualParams, OnlyChangedParamsAreVisitedAndNoneIsMissed) {
    const std::filesystem::path dir = std::filesystem::path(SLANIM_SHARED_DIR) / "sl-character";
    if (!std::filesystem::exists(dir / "avatar_lad.xml"))
        GTEST_SKIP() << "reference data not found under " << SLANIM_SHARED_DIR;
    auto model = load_real_model(dir);
    ASSERT_TRUE(model) << model.error().describe();
    const AppearanceModel& m = **model;
    AppearanceState s(*model);
    const auto run = [](AppearanceState& st) {
        VisualParamUpdateJob job;
        job.state = &st;
        for (int k = 0; k < 4 && st.dirty(); ++k) ASSERT_TRUE(job.run());  // remainders settle
    };
    run(s);
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    std::uniform_int_distribution<ParamIndex> pick(0, m.num_params() - 1);
    for (int round = 0; round < 40; ++round) {
        for (int k = 0; k < 12; ++k) {
            const ParamIndex p = pick(rng);
            const AppearanceParam& info = m.param(p);
            s.set_weight(p, info.min + u(rng) * (info.max - info.min));
        }
        if (round % 9 == 4) s.set_sex(s.sex() == Sex::Female ? Sex::Male : Sex::Female);
        run(s);
        ASSERT_FALSE(s.dirty());
        for (ParamIndex p = 0; p < m.num_params(); ++p)
            ASSERT_EQ(s.last_weights()[p], s.effective_weight(p)) << m.param(p).name << " round " << round;
    }
}
