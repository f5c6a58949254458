// SPDX-License-Identifier: MIT
// BVH import like the viewer's LLBVHLoader (spec §8); the measure of success: Linden's BVH
// sources of default animations import to motions whose poses match Linden's own .anim files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "slanim/engine/bvh.hpp"
#include "slanim/engine/bvh_import.hpp"
#include "slanim/engine/clip.hpp"
#include "slanim/runtime/world.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace slanim;

namespace {

const fs::path kShared = SLANIM_SHARED_DIR;

std::string tiny_bvh(const std::string& root = "hip", const std::string& extra_joint = "") {
    std::string s =
        "HIERARCHY\nROOT " + root +
        "\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation "
        "Yrotation\n JOINT abdomen\n {\n  OFFSET 0 3 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n"
        "  End Site\n  {\n   OFFSET 0 5 0\n  }\n }\n";
    if (!extra_joint.empty())
        s += " JOINT " + extra_joint +
             "\n {\n  OFFSET 0 1 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n  End Site\n  {\n"
             "   OFFSET 0 1 0\n  }\n }\n";
    s += "}\nMOTION\nFrames: 4\nFrame Time: 0.5\n";
    const int n = extra_joint.empty() ? 9 : 12;
    for (int f = 0; f < 4; ++f) {
        std::ostringstream line;
        // hip moves 10 inches forward (BVH +Z) per frame after frame 0, abdomen bends about X.
        line << 0 << ' ' << 40 << ' ' << (f * 10) << " 0 0 0 0 " << (f * 10) << " 0";
        for (int k = 9; k < n; ++k) line << " 0";
        s += line.str() + "\n";
    }
    return s;
}

TEST(BvhImport, ViewerDefaultsDurationAndAxes) {
    auto bvh = parse_bvh(tiny_bvh());
    ASSERT_TRUE(bvh) << bvh.error().describe();
    auto r = import_bvh(*bvh, test::skel());
    ASSERT_TRUE(r) << r.error().describe();
    const Motion& m = r->motion;
    EXPECT_EQ(m.base_priority, 2);
    EXPECT_FALSE(m.loop);
    EXPECT_FLOAT_EQ(m.duration, 1.f);  // (4 − 2) × 0.5 s
    EXPECT_FLOAT_EQ(m.loop_out, 1.f);
    EXPECT_FLOAT_EQ(m.ease_in, 0.3f);
    EXPECT_FLOAT_EQ(m.ease_out, 0.3f);
    EXPECT_EQ(m.hand_pose, 1u);
    ASSERT_EQ(m.joints.size(), 2u);
    EXPECT_EQ(m.joints[0].name, "mPelvis");
    EXPECT_EQ(m.joints[1].name, "mTorso");
    // Pelvis positions are relative to frame 0, BVH +Z (forward) → SL +X, inches → metres.
    const auto& pk = m.joints[0].pos_keys;
    ASSERT_FALSE(pk.empty());
    EXPECT_NEAR(pk.front().time, 0.f, 1e-6f);
    EXPECT_NEAR(pk.front().value.x, 10 * 0.0254f, 2e-4f);
    EXPECT_NEAR(pk.back().value.x, 30 * 0.0254f, 2e-4f);
    EXPECT_NEAR(pk.back().value.z, 0.f, 2e-4f);
    // The abdomen bends about BVH X = SL Y.
    const Quat q = m.joints[1].rot_keys.back().value;
    EXPECT_NEAR(std::fabs(q.y), std::sin(30.f * 3.14159265f / 360.f), 1e-3f);
    EXPECT_NEAR(q.x, 0.f, 1e-3f);
    EXPECT_NEAR(q.z, 0.f, 1e-3f);
}

TEST(BvhImport, RootMustBeThePelvisAndUnknownJointsAreErrors) {
    auto bad_root = parse_bvh(tiny_bvh("abdomen2"));
    ASSERT_TRUE(bad_root);
    auto r = import_bvh(*bad_root, test::skel());
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("ROOT"), std::string::npos);
    auto unknown = parse_bvh(tiny_bvh("hip", "tail"));
    ASSERT_TRUE(unknown);
    auto u = import_bvh(*unknown, test::skel());
    ASSERT_FALSE(u);
    EXPECT_NE(u.error().message.find("tail"), std::string::npos);
    BvhImportOptions skip;
    skip.skip_unknown_joints = true;
    auto s = import_bvh(*unknown, test::skel(), skip);
    ASSERT_TRUE(s) << s.error().describe();
    EXPECT_EQ(s->warnings.size(), 1u);
    // neckDummy is ignored by default, like Linden's translation table.
    auto dummy = parse_bvh(tiny_bvh("hip", "neckDummy"));
    ASSERT_TRUE(dummy);
    EXPECT_TRUE(import_bvh(*dummy, test::skel()));
}

TEST(BvhImport, OverridesApplyAfterLoading) {
    auto bvh = parse_bvh(tiny_bvh());
    ASSERT_TRUE(bvh);
    BvhImportOptions o;
    o.priority = 4;
    o.loop = true;
    o.loop_in = 0.25f;
    o.loop_out = 0.75f;
    o.ease_in = 0.1f;
    o.ease_out = 0.f;
    o.hand_pose = 5;
    o.emote = "express_smile";
    auto r = import_bvh(*bvh, test::skel(), o);
    ASSERT_TRUE(r) << r.error().describe();
    EXPECT_EQ(r->motion.base_priority, 4);
    for (const auto& j : r->motion.joints) EXPECT_EQ(j.priority, 4);
    EXPECT_TRUE(r->motion.loop);
    EXPECT_FLOAT_EQ(r->motion.loop_in, 0.25f);
    EXPECT_EQ(r->motion.hand_pose, 5u);
    o.loop_out = 2.f;  // past the duration
    EXPECT_FALSE(import_bvh(*bvh, test::skel(), o));
    o.loop_out = 0.75f;
    o.priority = 7;
    EXPECT_FALSE(import_bvh(*bvh, test::skel(), o));
}

struct PairResult {
    std::string name;
    float max_pos_mm = 0.f, max_rot_deg = 0.f;
    std::size_t keys_ours = 0, keys_linden = 0;
};

std::size_t count_keys(const Motion& m) {
    std::size_t n = 0;
    for (const auto& j : m.joints) n += j.rot_keys.size() + j.pos_keys.size();
    return n;
}

/// Plays both motions alone at full weight (no ease, no loop, no IK) at 30 fps and compares
/// every bone's model-space position and rotation.
PairResult compare(const std::string& name, Motion ours, Motion linden) {
    PairResult r{name, 0.f, 0.f, count_keys(ours), count_keys(linden)};
    for (Motion* m : {&ours, &linden}) {
        m->ease_in = m->ease_out = 0.f;
        m->loop = false;
        m->constraints.clear();
    }
    auto skel = Skeleton::default_skeleton();
    ik::IkSettings off;
    off.enabled = false;
    World wa, wb;
    wa.set_default_ik_settings(off);
    wb.set_default_ik_settings(off);
    const Entity a = wa.create_avatar(skel), b = wb.create_avatar(skel);
    wa.controller(a).start(MotionClip::build(ours, *skel, "ours"));
    wb.controller(b).start(MotionClip::build(linden, *skel, "linden"));
    const float dur = std::min(ours.duration, linden.duration);
    for (int f = 0; static_cast<float>(f) / 30.f <= dur; ++f) {
        wa.step(f ? 1.f / 30.f : 0.f);
        wb.step(f ? 1.f / 30.f : 0.f);
        const auto& pa = wa.model_pose(a);
        const auto& pb = wb.model_pose(b);
        for (int j = 0; j < skel->num_bones(); ++j) {
            r.max_pos_mm = std::max(r.max_pos_mm, length(pa.positions[j] - pb.positions[j]) * 1000.f);
            const float d = std::min(1.f, std::fabs(dot(pa.rotations[j], pb.rotations[j])));
            r.max_rot_deg = std::max(r.max_rot_deg, 2.f * std::acos(d) * 57.2957795f);
        }
    }
    return r;
}

TEST(BvhImportLinden, PairsMatchLindensAnims) {
    const fs::path index = kShared / "data-index.csv";
    if (!fs::exists(index)) GTEST_SKIP() << index << " is absent";
    std::ifstream in(index);
    std::string line;
    std::getline(in, line);
    std::vector<PairResult> results;
    int failed_import = 0;
    while (std::getline(in, line)) {
        std::vector<std::string> cols;
        std::stringstream ss(line);
        std::string c;
        while (std::getline(ss, c, ',')) cols.push_back(c);
        if (cols.size() < 4 || cols[3].empty() || cols[0].rfind("anims/linden/", 0) != 0) continue;
        const fs::path bvh_path = kShared / "bvh/linden" / cols[3];
        if (!fs::exists(bvh_path)) continue;
        auto bvh = load_bvh(bvh_path.string());
        ASSERT_TRUE(bvh) << bvh.error().describe();
        // Linden's table dropped the prop joint of the sword strike (WISDOM_SWORD_1).
        BvhImportOptions opt;
        opt.skip_unknown_joints = true;
        auto imported = import_bvh(*bvh, test::skel(), opt);
        if (!imported) {
            ++failed_import;
            ADD_FAILURE() << cols[3] << ": " << imported.error().describe();
            continue;
        }
        auto linden = load_motion((kShared / cols[0]).string(), test::skel());
        ASSERT_TRUE(linden) << linden.error().describe();
        results.push_back(compare(cols[1], imported->motion, *linden));
    }
    if (results.empty()) GTEST_SKIP() << "no BVH/.anim pairs found";
    std::sort(results.begin(), results.end(),
              [](const auto& x, const auto& y) { return x.max_rot_deg > y.max_rot_deg; });
    for (const auto& r : results)
        std::printf("  %-28s pos %8.3f mm  rot %7.3f deg  keys %5zu vs %5zu\n", r.name.c_str(),
                    r.max_pos_mm, r.max_rot_deg, r.keys_ours, r.keys_linden);
    EXPECT_EQ(failed_import, 0);
    // Single-frame poses have no timing to disagree on: the rotations (axis conversion, Euler
    // order, quantization) must match Linden's files. Animated pairs differ in timing and pelvis
    // conventions because Linden's files were made by an older importer (see the issue notes);
    // they are reported above, not asserted yet.
    for (const auto& r : results)
        if (r.name == "CROUCH" || r.name == "PREJUMP") {
            EXPECT_LT(r.max_rot_deg, 0.5f) << r.name;
        }
}

}  // namespace
