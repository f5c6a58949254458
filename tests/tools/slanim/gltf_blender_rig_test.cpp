// SPDX-License-Identifier: MIT
// `slanim convert X.gltf -o X.anim` on an armature as Blender's glTF exporter writes it (issue
// 25): a translation channel on every bone at its rest (dropped and listed, except mPelvis's and
// one that moves), the hip's rest above the armature origin (mPelvis key = translation − rest, or
// relative to the first frame), keys starting at 1/fps (rebased to 0 unless --keep-times), a
// rig in other units (the size check, --scale), keys out of the .anim's ±5 m (an error naming
// the joint and the time, no output).
#include <gtest/gtest.h>
#include <tiny_gltf.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "slanim/core/math.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/gltf/axes.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using namespace slanim;
using slanim::test::run_slanim;
using slanim::test::TempDir;

namespace {

constexpr float kFps = 24.f;
constexpr int kFrames = 25;  // Blender frames 1..25: keys at 1/24 .. 25/24 s

/// How the rig of make_rig differs from SL's.
struct RigSpec {
    float size = 1.f;                     ///< every translation (rests and keys) × size
    float hip_turn_deg = 0.f;             ///< mPelvis rotated about SL Z at every frame
    float pelvis_rise = 0.1f;             ///< mPelvis moves up by this over the motion, metres
    float rest_noise = 3e-7f;             ///< rest translation channels differ from the rest by this
};

void add_floats(tinygltf::Model& m, const std::vector<float>& v, int type, std::size_t count) {
    auto& buf = m.buffers[0].data;
    tinygltf::BufferView view;
    view.buffer = 0;
    view.byteOffset = buf.size();
    view.byteLength = v.size() * sizeof(float);
    const auto* bytes = reinterpret_cast<const unsigned char*>(v.data());
    buf.insert(buf.end(), bytes, bytes + view.byteLength);
    m.bufferViews.push_back(view);
    tinygltf::Accessor acc;
    acc.bufferView = static_cast<int>(m.bufferViews.size()) - 1;
    acc.componentType = TINYGLTF_COMPONENT_TYPE_FLOAT;
    acc.type = type;
    acc.count = count;
    m.accessors.push_back(acc);
}

/// A channel on `node` with keys at Blender's frame times.
void add_channel(tinygltf::Model& m, int node, const char* path, const std::vector<float>& values) {
    std::vector<float> times;
    for (int f = 1; f <= kFrames; ++f) times.push_back(static_cast<float>(f) / kFps);
    add_floats(m, times, TINYGLTF_TYPE_SCALAR, times.size());
    const bool rot = std::strcmp(path, "rotation") == 0;
    add_floats(m, values, rot ? TINYGLTF_TYPE_VEC4 : TINYGLTF_TYPE_VEC3, times.size());
    tinygltf::AnimationSampler s;
    s.input = static_cast<int>(m.accessors.size()) - 2;
    s.output = static_cast<int>(m.accessors.size()) - 1;
    s.interpolation = "LINEAR";
    m.animations[0].samplers.push_back(s);
    tinygltf::AnimationChannel c;
    c.sampler = static_cast<int>(m.animations[0].samplers.size()) - 1;
    c.target_node = node;
    c.target_path = path;
    m.animations[0].channels.push_back(c);
}

/// A Blender-style armature of SL bones with SL's rest (× spec.size): an "Armature" node, the
/// hip standing 1.067 m above it; every bone has a translation channel at its rest, mFaceJaw's
/// moves 5 mm, mPelvis's rises; mTorso bends; mPelvis turns by hip_turn_deg.
void write_rig(const Skeleton& sk, const RigSpec& spec, const std::string& path) {
    const std::vector<std::string> bones{"mPelvis", "mTorso", "mChest", "mNeck", "mHead", "mFaceRoot", "mFaceJaw",
                                         "mCollarLeft", "mShoulderLeft", "mElbowLeft", "mWristLeft",
                                         "mHipLeft", "mKneeLeft", "mAnkleLeft"};
    tinygltf::Model m;
    m.asset.version = "2.0";
    m.buffers.resize(1);
    m.animations.resize(1);
    m.animations[0].name = "Action";
    tinygltf::Node arm;
    arm.name = "Armature";
    m.nodes.push_back(arm);
    std::vector<int> node_of(static_cast<std::size_t>(sk.num_joints()), -1);
    tinygltf::Skin skin;
    for (const std::string& b : bones) {
        const int j = sk.find(b);
        // The nearest listed ancestor (SL's spine joints are left out); SL rests have no
        // rotation, so the rest translation is the sum of the skipped joints' offsets.
        Vec3 rest = b == "mPelvis" ? Vec3{0.f, 0.f, 1.067f} : sk.rest_positions()[static_cast<std::size_t>(j)];
        int p = sk.parent(j);
        while (b != "mPelvis" && node_of[static_cast<std::size_t>(p)] < 0) {
            rest = rest + sk.rest_positions()[static_cast<std::size_t>(p)];
            p = sk.parent(p);
        }
        const int pn = b == "mPelvis" ? 0 : node_of[static_cast<std::size_t>(p)];
        rest = rest * spec.size;
        tinygltf::Node n;
        n.name = b;
        const Vec3 g = gltf::sl_to_gltf(rest);
        n.translation = {g.x, g.y, g.z};
        const int idx = static_cast<int>(m.nodes.size());
        m.nodes.push_back(n);
        m.nodes[static_cast<std::size_t>(pn)].children.push_back(idx);
        node_of[static_cast<std::size_t>(j)] = idx;
        skin.joints.push_back(idx);
        std::vector<float> t;
        for (int f = 0; f < kFrames; ++f) {
            Vec3 v = rest + Vec3{spec.rest_noise, 0.f, 0.f};
            if (b == "mPelvis") v = rest + Vec3{0.f, 0.f, spec.pelvis_rise * spec.size * static_cast<float>(f) / (kFrames - 1)};
            if (b == "mFaceJaw") v = rest + Vec3{0.005f * spec.size * static_cast<float>(f) / (kFrames - 1), 0.f, 0.f};
            const Vec3 gv = gltf::sl_to_gltf(v);
            t.insert(t.end(), {gv.x, gv.y, gv.z});
        }
        add_channel(m, idx, "translation", t);
        if (b == "mTorso" || (b == "mPelvis" && spec.hip_turn_deg != 0.f)) {
            std::vector<float> r;
            for (int f = 0; f < kFrames; ++f) {
                const float a = b == "mTorso" ? 0.5f * static_cast<float>(f) / (kFrames - 1)
                                              : spec.hip_turn_deg * 3.14159265f / 180.f;
                const Quat q = gltf::sl_to_gltf(quat_from_axis_angle(a, b == "mTorso" ? Vec3{0.f, 1.f, 0.f} : Vec3{0.f, 0.f, 1.f}));
                r.insert(r.end(), {q.x, q.y, q.z, q.w});
            }
            add_channel(m, idx, "rotation", r);
        }
    }
    m.skins.push_back(skin);
    tinygltf::Scene scene;
    scene.nodes = {0};
    m.scenes.push_back(scene);
    m.defaultScene = 0;
    tinygltf::TinyGLTF w;
    ASSERT_TRUE(w.WriteGltfSceneToFile(&m, path, true, true, true, false));
}

const MotionJoint* joint_named(const Motion& m, const std::string& name) {
    for (const MotionJoint& j : m.joints)
        if (j.name == name) return &j;
    return nullptr;
}

std::vector<std::string> joints_with_positions(const Motion& m) {
    std::vector<std::string> out;
    for (const MotionJoint& j : m.joints)
        if (!j.pos_keys.empty()) out.push_back(j.name);
    return out;
}

constexpr float kPosStep = 10.f / 65535.f;  // one U16 step of an .anim position

}  // namespace

TEST(GltfBlenderRig, RestChannelsDroppedPelvisFromItsRestTimesFromZero) {
    auto sk = Skeleton::default_skeleton();
    TempDir t;
    write_rig(*sk, {}, t / "rig.gltf");
    const auto r = run_slanim({"convert", t / "rig.gltf", "-o", t / "rig.anim"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("translation channels at their bone's rest (within 0.0001 m) dropped: mTorso, mChest, "
                         "mNeck, mHead, mFaceRoot, mCollarLeft"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("dropped: mPelvis"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("every key time moved 0.0416"), std::string::npos) << r.err;
    auto m = load_motion(t / "rig.anim", *sk);
    ASSERT_TRUE(m) << m.error().message;
    EXPECT_EQ(joints_with_positions(*m), (std::vector<std::string>{"mPelvis", "mFaceJaw"}));
    EXPECT_NEAR(m->duration, (kFrames - 1) / kFps, 1e-5f);
    const MotionJoint* pelvis = joint_named(*m, "mPelvis");
    ASSERT_NE(pelvis, nullptr);
    EXPECT_EQ(pelvis->pos_keys.front().time, 0.f);
    EXPECT_NEAR(length(pelvis->pos_keys.front().value), 0.f, 2 * kPosStep);  // the rest, not 1.067 m up
    EXPECT_NEAR(pelvis->pos_keys.back().value.z, 0.1f, 2 * kPosStep);
    const MotionJoint* jaw = joint_named(*m, "mFaceJaw");
    ASSERT_NE(jaw, nullptr);
    const Vec3 jaw_rest = sk->rest_positions()[static_cast<std::size_t>(sk->find("mFaceJaw"))];
    EXPECT_NEAR(jaw->pos_keys.back().value.x, jaw_rest.x + 0.005f, 2 * kPosStep);
    EXPECT_EQ(joint_named(*m, "mTorso")->rot_keys.front().time, 0.f);

    // --keep-times: the first key stays at 1/24 s.
    const auto k = run_slanim({"convert", t / "rig.gltf", "-o", t / "keep.anim", "--keep-times"});
    ASSERT_EQ(k.code, 0) << k.err;
    auto mk = load_motion(t / "keep.anim", *sk);
    ASSERT_TRUE(mk);
    EXPECT_NEAR(mk->duration, kFrames / kFps, 1e-5f);
    EXPECT_NEAR(joint_named(*mk, "mTorso")->rot_keys.front().time, 1 / kFps, 1e-4f);
}

TEST(GltfBlenderRig, PelvisOriginFirstFrameMakesATurnedHipRelative) {
    auto sk = Skeleton::default_skeleton();
    TempDir t;
    RigSpec spec;
    spec.hip_turn_deg = 175.f;
    write_rig(*sk, spec, t / "turned.gltf");
    const auto a = run_slanim({"convert", t / "turned.gltf", "-o", t / "abs.anim"});
    ASSERT_EQ(a.code, 0) << a.err;
    const auto r = run_slanim({"convert", t / "turned.gltf", "-o", t / "rel.anim", "--pelvis-origin", "first-frame"});
    ASSERT_EQ(r.code, 0) << r.err;
    auto ma = load_motion(t / "abs.anim", *sk), mr = load_motion(t / "rel.anim", *sk);
    ASSERT_TRUE(ma && mr);
    const Quat turned = joint_named(*ma, "mPelvis")->rot_keys.front().value;
    EXPECT_LT(std::abs(turned.w), 0.05f);  // 175°: the rig faces away
    const Quat rel = joint_named(*mr, "mPelvis")->rot_keys.front().value;
    EXPECT_GT(rel.w, 0.9999f);  // relative to frame 0: facing forward
    const MotionJoint* p = joint_named(*mr, "mPelvis");
    EXPECT_NEAR(length(p->pos_keys.front().value), 0.f, 2 * kPosStep);
    EXPECT_NEAR(p->pos_keys.back().value.z, 0.1f, 2 * kPosStep);  // the rise, turned back by frame 0's 175°: still up
    // --pelvis-origin is for glTF or the legacy BVH importer only.
    const auto bad = run_slanim({"convert", t / "abs.anim", "-o", t / "x.anim", "--pelvis-origin", "first-frame"});
    EXPECT_EQ(bad.code, 2) << bad.err;
}

TEST(GltfBlenderRig, SizeCheckAndScale) {
    auto sk = Skeleton::default_skeleton();
    TempDir t;
    // Inches read as metres (Blender's BVH importer at scale 1): an error naming the factor and the fix.
    RigSpec inches;
    inches.size = 1.f / 0.0254f;
    write_rig(*sk, inches, t / "inches.gltf");
    const auto e = run_slanim({"convert", t / "inches.gltf", "-o", t / "inches.anim"});
    EXPECT_EQ(e.code, 1) << e.err;
    for (const char* want : {"inches.gltf", "39.4× SL's", "nodes[", "--scale 0.0254"})
        EXPECT_NE(e.err.find(want), std::string::npos) << "want '" << want << "' in " << e.err;
    EXPECT_FALSE(fs::exists(t / "inches.anim"));
    // --scale brings it back: the same motion as the rig in metres.
    write_rig(*sk, {}, t / "metres.gltf");
    ASSERT_EQ(run_slanim({"convert", t / "metres.gltf", "-o", t / "metres.anim"}).code, 0);
    const auto s = run_slanim({"convert", t / "inches.gltf", "-o", t / "scaled.anim", "--scale", "0.0254"});
    ASSERT_EQ(s.code, 0) << s.err;
    auto a = load_motion(t / "metres.anim", *sk), b = load_motion(t / "scaled.anim", *sk);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(joints_with_positions(*b), joints_with_positions(*a));
    const auto& pa = joint_named(*a, "mPelvis")->pos_keys;
    const auto& pb = joint_named(*b, "mPelvis")->pos_keys;
    ASSERT_EQ(pa.size(), pb.size());
    for (std::size_t k = 0; k < pa.size(); ++k) EXPECT_NEAR(length(pa[k].value - pb[k].value), 0.f, 2 * kPosStep);
    // 25 % larger: a warning, not an error.
    RigSpec big;
    big.size = 1.25f;
    write_rig(*sk, big, t / "big.gltf");
    const auto w = run_slanim({"convert", t / "big.gltf", "-o", t / "big.anim"});
    EXPECT_EQ(w.code, 0) << w.err;
    EXPECT_NE(w.err.find("warning: the armature's bones are 1.25× SL's"), std::string::npos) << w.err;
}

// No key is clamped: a pelvis path beyond the .anim's ±5 m is an error naming the joint and the
// time (the encoder used to clamp it), and nothing is written.
TEST(GltfBlenderRig, PositionsBeyondFiveMetresAreAnError) {
    auto sk = Skeleton::default_skeleton();
    TempDir t;
    RigSpec far;
    far.pelvis_rise = 6.f;
    write_rig(*sk, far, t / "far.gltf");
    const auto r = run_slanim({"convert", t / "far.gltf", "-o", t / "far.anim"});
    EXPECT_EQ(r.code, 1) << r.err;
    for (const char* want : {"far.gltf", "joint mPelvis", "position key at", "±5 m", "--scale"})
        EXPECT_NE(r.err.find(want), std::string::npos) << "want '" << want << "' in " << r.err;
    EXPECT_FALSE(fs::exists(t / "far.anim"));
    // The checked encoder itself.
    Motion m;
    m.duration = 1.f;
    MotionJoint j;
    j.name = "mPelvis";
    j.joint = sk->pelvis();
    j.pos_keys = {{0.f, {0.f, 0.f, 0.f}}, {0.5f, {0.f, 0.f, 5.5f}}};
    m.joints.push_back(j);
    auto enc = encode_motion_checked(m);
    ASSERT_FALSE(enc);
    EXPECT_NE(enc.error().message.find("joint mPelvis: the position key at 0.5 s"), std::string::npos) << enc.error().message;
    m.joints[0].pos_keys[1].value.z = 4.9f;
    EXPECT_TRUE(encode_motion_checked(m));
    m.joints[0].pos_keys[1].time = 1.5f;  // past the duration: would be clamped onto it
    EXPECT_FALSE(encode_motion_checked(m));
}
