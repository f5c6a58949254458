// SPDX-License-Identifier: MIT
// The viewer's default shape (issue 25): with `--character DIR` every command shapes the skeleton
// with avatar_lad.xml's default visual params, wearables or not, as the viewer does (an avatar
// always has its visual params). `slanim play --character` and `slanim convert --character`
// (with and without the mesh) give the same joint positions on the same motion.
#include <gtest/gtest.h>
#include <tiny_gltf.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "slanim/core/math.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/anim.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/gltf/axes.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using namespace slanim;
using slanim::test::run_slanim;
using slanim::test::TempDir;

namespace {

const fs::path kCharacter = fs::path(SLANIM_SHARED_DIR) / "sl-character";

/// A held pose: constant keys on a few joints (arm, torso, a pelvis offset), no ease.
void write_pose(const Skeleton& sk, const std::string& path) {
    Motion m;
    m.duration = 1.f;
    m.ease_in = m.ease_out = 0.f;
    m.loop = true;
    m.loop_out = 1.f;
    m.base_priority = m.max_priority = 3;
    const auto add = [&](const char* name, Quat q) {
        MotionJoint j;
        j.name = name;
        j.joint = sk.find(name);
        j.rot_keys = {{0.f, q}, {1.f, q}};
        m.joints.push_back(j);
    };
    add("mTorso", quat_from_axis_angle(0.3f, {0.f, 1.f, 0.f}));
    add("mShoulderLeft", quat_from_axis_angle(-0.8f, {1.f, 0.f, 0.f}));
    add("mElbowLeft", quat_from_axis_angle(0.6f, {0.f, 0.f, 1.f}));
    add("mHipRight", quat_from_axis_angle(0.4f, {0.f, 1.f, 0.f}));
    MotionJoint pelvis;
    pelvis.name = "mPelvis";
    pelvis.joint = sk.pelvis();
    pelvis.pos_keys = {{0.f, {0.02f, 0.f, 0.05f}}, {1.f, {0.02f, 0.f, 0.05f}}};
    m.joints.push_back(pelvis);
    ASSERT_TRUE(write_file_atomic(path, write_anim(encode_motion(m))));
}

/// `slanim play` CSV: joint → world position at frame `frame`.
std::map<std::string, Vec3> play_positions(const std::string& csv, int frame) {
    std::map<std::string, Vec3> out;
    std::istringstream in(csv);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
        std::vector<std::string> f;
        std::stringstream ss(line);
        for (std::string c; std::getline(ss, c, ',');) f.push_back(c);
        if (f.size() < 6 || std::stoi(f[0]) != frame) continue;
        out[f[2]] = {std::stof(f[3]), std::stof(f[4]), std::stof(f[5])};
    }
    return out;
}

const float* accessor_floats(const tinygltf::Model& m, int a) {
    const auto& acc = m.accessors[static_cast<std::size_t>(a)];
    const auto& v = m.bufferViews[static_cast<std::size_t>(acc.bufferView)];
    return reinterpret_cast<const float*>(m.buffers[static_cast<std::size_t>(v.buffer)].data.data() + v.byteOffset +
                                          acc.byteOffset);
}

/// The glTF's joint world positions (SL axes) with each channel's first key (the pose is held).
std::map<std::string, Vec3> gltf_positions(const std::string& path) {
    tinygltf::TinyGLTF loader;
    tinygltf::Model m;
    std::string e, w;
    const bool ok = path.ends_with(".glb") ? loader.LoadBinaryFromFile(&m, &e, &w, path)
                                           : loader.LoadASCIIFromFile(&m, &e, &w, path);
    EXPECT_TRUE(ok) << e;
    const std::size_t nn = m.nodes.size();
    std::vector<Vec3> t(nn);
    std::vector<Quat> r(nn);
    std::vector<int> parent(nn, -1);
    for (std::size_t i = 0; i < nn; ++i) {
        const auto& n = m.nodes[i];
        if (n.translation.size() == 3)
            t[i] = {static_cast<float>(n.translation[0]), static_cast<float>(n.translation[1]),
                    static_cast<float>(n.translation[2])};
        if (n.rotation.size() == 4)
            r[i] = {static_cast<float>(n.rotation[0]), static_cast<float>(n.rotation[1]),
                    static_cast<float>(n.rotation[2]), static_cast<float>(n.rotation[3])};
        for (int c : n.children) parent[static_cast<std::size_t>(c)] = static_cast<int>(i);
    }
    for (const auto& c : m.animations.at(0).channels) {
        const float* v = accessor_floats(m, m.animations[0].samplers[static_cast<std::size_t>(c.sampler)].output);
        const auto n = static_cast<std::size_t>(c.target_node);
        if (c.target_path == "translation") t[n] = {v[0], v[1], v[2]};
        if (c.target_path == "rotation") r[n] = {v[0], v[1], v[2], v[3]};
    }
    std::vector<Vec3> wp(nn);
    std::vector<Quat> wr(nn);
    std::vector<bool> done(nn, false);
    std::map<std::string, Vec3> out;
    for (std::size_t i = 0; i < nn; ++i) {
        std::vector<std::size_t> chain;
        for (int k = static_cast<int>(i); k >= 0 && !done[static_cast<std::size_t>(k)]; k = parent[static_cast<std::size_t>(k)])
            chain.push_back(static_cast<std::size_t>(k));
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
            const int p = parent[*it];
            wp[*it] = p < 0 ? t[*it] : wp[static_cast<std::size_t>(p)] + rotate(t[*it], wr[static_cast<std::size_t>(p)]);
            wr[*it] = p < 0 ? r[*it] : hamilton(wr[static_cast<std::size_t>(p)], r[*it]);
            done[*it] = true;
        }
        out[m.nodes[i].name] = gltf::gltf_to_sl(wp[i]);
    }
    return out;
}

struct Gap {
    float worst = 0.f;
    std::string at;
    int joints = 0;
};

Gap compare(const std::map<std::string, Vec3>& a, const std::map<std::string, Vec3>& b) {
    Gap g;
    for (const auto& [name, p] : a) {
        const auto it = b.find(name);
        if (it == b.end()) continue;
        ++g.joints;
        const float d = length(p - it->second);
        if (d > g.worst) g.worst = d, g.at = name;
    }
    return g;
}

}  // namespace

TEST(DefaultShape, PlayAndConvertAgreeOnTheJointPositions) {
    if (!fs::exists(kCharacter / "avatar_lad.xml")) GTEST_SKIP() << "no " << kCharacter << " (real test data in ../shared)";
    auto sk = Skeleton::default_skeleton();
    TempDir t;
    const std::string pose = t / "pose.anim";
    write_pose(*sk, pose);
    const std::string ch = kCharacter.string();
    const auto play = run_slanim({"play", pose, "--character", ch, "--duration", "0.5", "--fps", "2", "--solver", "none"});
    ASSERT_EQ(play.code, 0) << play.err;
    const auto played = play_positions(play.out, 1);
    ASSERT_EQ(played.size(), 133u);

    for (const bool mesh : {false, true}) {
        SCOPED_TRACE(mesh ? "with the mesh" : "--no-mesh");
        const std::string out = t / (mesh ? "m.glb" : "s.gltf");
        std::vector<std::string> args{"convert", pose, "-o", out, "--character", ch};
        if (!mesh) args.push_back("--no-mesh");
        const auto c = run_slanim(args);
        ASSERT_EQ(c.code, 0) << c.err;
        const Gap g = compare(played, gltf_positions(out));
        EXPECT_EQ(g.joints, 133);
        EXPECT_LT(g.worst, 5e-5f) << "play and convert differ by " << g.worst * 1000 << " mm at " << g.at;
    }

    // The default shape matters: the unshaped skeleton is centimetres away at the hands, so
    // the comparison above can fail.
    const auto bare = run_slanim({"play", pose, "--duration", "0.5", "--fps", "2", "--solver", "none"});
    ASSERT_EQ(bare.code, 0) << bare.err;
    const Gap unshaped = compare(played, play_positions(bare.out, 1));
    EXPECT_GT(unshaped.worst, 0.02f) << unshaped.at;
}
