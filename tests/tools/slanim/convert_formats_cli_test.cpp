// SPDX-License-Identifier: MIT
// `slanim convert` between .anim, .bvh (+ sidecar), .bvj and Firestorm poser poses.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "temp_dir.hpp"
#include "slanim/formats/bvh_export.hpp"
#include "slanim/formats/bvj.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "cli_run.hpp"

namespace fs = std::filesystem;
using namespace slanim;
using slanim::test::run_slanim;

namespace {

const fs::path kShared = SLANIM_SHARED_DIR;

using slanim::test::TempDir;

std::string slurp(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

}  // namespace

TEST(ConvertFormatsCli, AnimToBvhWithSidecarAndBack) {
    const fs::path walk = kShared / "anims" / "linden" / "WALK.anim";
    if (!fs::exists(walk)) GTEST_SKIP() << "no " << walk;
    TempDir t;
    auto r = run_slanim({"convert", walk.string(), "-o", t / "walk.bvh", "--fps", "24"});
    ASSERT_EQ(r.code, 0) << r.err;
    auto bvh = load_bvh(t / "walk.bvh");
    ASSERT_TRUE(bvh) << bvh.error().message;
    EXPECT_EQ(bvh->joints[0].name, "hip");
    ASSERT_TRUE(fs::exists(t / "walk.bvh.json"));
    auto side = load_bvh_sidecar(t / "walk.bvh.json");
    ASSERT_TRUE(side) << side.error().message;
    auto skel = Skeleton::default_skeleton();
    auto m0 = load_motion(walk.string(), *skel);
    ASSERT_TRUE(m0);
    EXPECT_EQ(side->priority, m0->base_priority);
    EXPECT_EQ(side->loop, m0->loop);

    // Back: the sidecar's values are the defaults...
    r = run_slanim({"convert", t / "walk.bvh", "-o", t / "back.anim"});
    ASSERT_EQ(r.code, 0) << r.err;
    auto back = load_motion(t / "back.anim", *skel);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->base_priority, m0->base_priority);
    EXPECT_EQ(back->loop, m0->loop);
    EXPECT_NEAR(back->loop_in, m0->loop_in, 1e-3f);
    EXPECT_NEAR(back->ease_in, m0->ease_in, 1e-6f);
    EXPECT_EQ(back->hand_pose, m0->hand_pose);
    EXPECT_NEAR(back->duration, m0->duration, 1e-4f);
    // ...that the command line still beats.
    r = run_slanim({"convert", t / "walk.bvh", "-o", t / "back2.anim", "--priority", "5", "--ease-in", "0.9"});
    ASSERT_EQ(r.code, 0) << r.err;
    auto back2 = load_motion(t / "back2.anim", *skel);
    ASSERT_TRUE(back2);
    EXPECT_EQ(back2->base_priority, 5);
    EXPECT_FLOAT_EQ(back2->ease_in, 0.9f);
    EXPECT_EQ(back2->loop, m0->loop);

    // A broken sidecar is an error naming it.
    std::ofstream(t / "walk.bvh.json") << "{\"priority\": \"high\"}";
    r = run_slanim({"convert", t / "walk.bvh", "-o", t / "back3.anim"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("walk.bvh.json: $.priority"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(t / "back3.anim"));
}

TEST(ConvertFormatsCli, AnimToBvjAndBackIsEqualAfterQuantization) {
    const fs::path file = kShared / "anims" / "linden" / "DANCE1.anim";
    if (!fs::exists(file)) GTEST_SKIP() << "no " << file;
    TempDir t;
    auto r = run_slanim({"convert", file.string(), "-o", t / "d.bvj"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(slurp(t / "d.bvj").find("\"KEYFRAMES\""), std::string::npos);
    r = run_slanim({"convert", t / "d.bvj", "-o", t / "d.anim"});
    ASSERT_EQ(r.code, 0) << r.err;
    auto skel = Skeleton::default_skeleton();
    auto m0 = load_motion(file.string(), *skel);
    auto m2 = load_motion(t / "d.anim", *skel);
    ASSERT_TRUE(m0 && m2);
    // The written file is the viewer's re-save of the original's re-save: same keys after
    // quantization, joint by joint.
    Motion want = decode_motion(encode_motion(decode_motion(encode_motion(*m0), *skel)), *skel);
    ASSERT_EQ(m2->joints.size(), want.joints.size());
    for (const auto& j : want.joints) {
        const MotionJoint* got = nullptr;
        for (const auto& k : m2->joints)
            if (k.joint == j.joint) got = &k;
        ASSERT_NE(got, nullptr) << j.name;
        EXPECT_EQ(got->rot_keys, j.rot_keys) << j.name;
        EXPECT_EQ(got->pos_keys, j.pos_keys) << j.name;
    }
    EXPECT_EQ(m2->loop, m0->loop);
    EXPECT_FLOAT_EQ(m2->loop_out, m0->loop_out);

    // .bvj → .bvh → .bvj (MOTION form) and the motion form export.
    r = run_slanim({"convert", t / "d.bvj", "-o", t / "d.bvh"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(fs::exists(t / "d.bvh.json"));
    r = run_slanim({"convert", t / "d.bvh", "-o", t / "d2.bvj"});
    ASSERT_EQ(r.code, 0) << r.err;
    auto d2 = load_bvj(t / "d2.bvj");
    ASSERT_TRUE(d2) << d2.error().message;
    EXPECT_EQ(d2->form, BvjForm::Motion);
    EXPECT_EQ(d2->params.looped, m0->loop);
    r = run_slanim({"convert", file.string(), "-o", t / "m.bvj", "--bvj-form", "motion"});
    ASSERT_EQ(r.code, 0) << r.err;
    r = run_slanim({"convert", t / "m.bvj", "-o", t / "m.anim"});
    ASSERT_EQ(r.code, 0) << r.err;
}

TEST(ConvertFormatsCli, PoserPoseToAnim) {
    const fs::path pose = kShared / "poses" / "Okay.xml";
    if (!fs::exists(pose)) GTEST_SKIP() << "no " << pose;
    TempDir t;
    auto r = run_slanim({"convert", pose.string(), "-o", t / "okay.anim", "--priority", "5"});
    ASSERT_EQ(r.code, 0) << r.err;
    auto skel = Skeleton::default_skeleton();
    auto m = load_motion(t / "okay.anim", *skel);
    ASSERT_TRUE(m) << m.error().message;
    EXPECT_EQ(m->base_priority, 5);
    EXPECT_TRUE(m->loop);
    EXPECT_GT(m->joints.size(), 10u);
    const fs::path stand = kShared / "poses" / "posestand.xml";
    r = run_slanim({"convert", stand.string(), "-o", t / "stand.anim"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("not a poser joint"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(t / "stand.anim"));
}

TEST(ConvertFormatsCli, BadInputsFailCleanly) {
    TempDir t;
    std::ofstream(t / "bad.bvj") << "{\"HIERARCHY\": {\"NAME\": \"hip\", \"CHANNELS\": [\"Qrotation\"]}, \"KEYFRAMES\": [{\"AT\": 0}]}";
    auto r = run_slanim({"convert", t / "bad.bvj", "-o", t / "out.anim"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("bad.bvj: $.HIERARCHY.CHANNELS[0]"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(t / "out.anim"));
    r = run_slanim({"convert", t / "bad.bvj", "-o", t / "out.bvj", "--bvj-form", "sampled"});
    EXPECT_EQ(r.code, 2);
    r = run_slanim({"convert", t / "missing.anim", "-o", t / "out.bvh"});
    EXPECT_EQ(r.code, 1);
    EXPECT_FALSE(fs::exists(t / "out.bvh"));
}
