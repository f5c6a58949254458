// SPDX-License-Identifier: MIT
// Firestorm poser poses → one-key looped motions; the Euler convention checked against the
// viewer's own functions (setQuat / getEulerAngles semantics), every shared pose file converted.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "slanim/formats/poser.hpp"
#include "slanim/core/skeleton.hpp"

namespace fs = std::filesystem;
using namespace slanim;

namespace {

const fs::path kShared = SLANIM_SHARED_DIR;

/// The angle between two rotations, degrees (precise for small angles, sign-insensitive).
float angle_deg(Quat a, Quat b) {
    const Quat r = hamilton(conjugate(a), b);
    const double v = std::sqrt(double(r.x) * r.x + double(r.y) * r.y + double(r.z) * r.z);
    return static_cast<float>(2.0 * std::atan2(v, std::fabs(double(r.w))) * 57.29577951308232);
}


}  // namespace

TEST(Poser, RotationIsRollPitchYawRadiansLikeTheViewer) {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-1.5f, 1.5f);
    for (int i = 0; i < 1000; ++i) {
        const Vec3 e{u(rng), u(rng), u(rng)};
        const Quat q = poser_rotation(e);
        // The matrix path Firestorm reads with equals LLQuaternion::setQuat(roll, pitch, yaw):
        // Hamilton q_x ⊗ q_y ⊗ q_z.
        EXPECT_LT(angle_deg(q, quat_from_roll_pitch_yaw(e.x, e.y, e.z)), 1e-3f);
        const Quat h = hamilton(hamilton(quat_from_axis_angle(e.x, {1, 0, 0}), quat_from_axis_angle(e.y, {0, 1, 0})),
                                quat_from_axis_angle(e.z, {0, 0, 1}));
        EXPECT_LT(angle_deg(q, h), 1e-3f);
        // And getEulerAngles (what Firestorm writes) reads it back.
        float roll, pitch, yaw;
        ll_euler_angles(q, roll, pitch, yaw);
        EXPECT_NEAR(roll, e.x, 1e-4f);
        EXPECT_NEAR(pitch, e.y, 1e-4f);
        EXPECT_NEAR(yaw, e.z, 1e-4f);
    }
    EXPECT_EQ(poser_rotation({}), Quat::identity());
}

TEST(Poser, ParsesAndConvertsASmallPose) {
    const std::string xml = R"(<llsd><map>
      <key>mHead</key><map><key>enabled</key><boolean>1</boolean>
        <key>jointBaseRotationIsZero</key><boolean>1</boolean>
        <key>rotation</key><array><real>0.3</real><real>0</real><real>0</real></array>
        <key>position</key><array><real>0</real><real>0</real><real>0</real></array>
        <key>scale</key><array><real>0</real><real>0</real><real>0</real></array></map>
      <key>mNeck</key><map><key>enabled</key><boolean>0</boolean>
        <key>rotation</key><array><real>0.5</real><real>0</real><real>0</real></array></map>
      <key>mChest</key><map><key>enabled</key><boolean>1</boolean>
        <key>rotation</key><array><real>0</real><real>0</real><real>0</real></array></map>
      <key>mPelvis</key><map><key>enabled</key><boolean>1</boolean>
        <key>rotation</key><array><real>0</real><real>0</real><real>0</real></array>
        <key>position</key><array><real>0.1</real><real>0</real><real>-0.2</real></array>
        <key>scale</key><array><real>0.1</real><real>0</real><real>0</real></array></map>
      <key>version</key><map><key>value</key><integer>5</integer></map>
    </map></llsd>)";
    auto pose = parse_poser_xml(xml);
    ASSERT_TRUE(pose) << pose.error().message;
    EXPECT_EQ(pose->version, 5);
    ASSERT_EQ(pose->joints.size(), 4u);
    auto skel = Skeleton::default_skeleton();
    auto r = poser_to_motion(*pose, *skel);
    ASSERT_TRUE(r) << r.error().message;
    const Motion& m = r->motion;
    EXPECT_TRUE(m.loop);
    EXPECT_EQ(m.base_priority, 4);
    EXPECT_FLOAT_EQ(m.duration, 1.f);
    EXPECT_FLOAT_EQ(m.loop_out, 1.f);
    EXPECT_FLOAT_EQ(m.ease_in, 0.5f);
    EXPECT_EQ(m.hand_pose, 1u);
    // mHead (rotation), mPelvis (position); not the disabled mNeck nor the unchanged mChest.
    ASSERT_EQ(m.joints.size(), 2u);
    EXPECT_EQ(m.joints[0].name, "mHead");
    ASSERT_EQ(m.joints[0].rot_keys.size(), 1u);
    EXPECT_LT(angle_deg(m.joints[0].rot_keys[0].value, quat_from_axis_angle(0.3f, {1, 0, 0})), 0.01f);
    EXPECT_EQ(m.joints[1].name, "mPelvis");
    EXPECT_TRUE(m.joints[1].rot_keys.empty());
    ASSERT_EQ(m.joints[1].pos_keys.size(), 1u);
    EXPECT_NEAR(m.joints[1].pos_keys[0].value.z, -0.2f, 2e-4f);
    ASSERT_EQ(r->warnings.size(), 1u);  // the pelvis's scale
    EXPECT_NE(r->warnings[0].find("scale"), std::string::npos);

    PoserConvertOptions o;
    o.priority = 7;
    EXPECT_FALSE(poser_to_motion(*pose, *skel, o));
    EXPECT_FALSE(parse_poser_xml("<llsd><map><key>mHead</key><map><key>rotation</key><array><real>1</real></array></map></map></llsd>"));
    auto unknown = parse_poser_xml("<llsd><map><key>mTail99</key><map><key>rotation</key><array><real>1</real><real>0</real><real>0</real></array></map></map></llsd>");
    ASSERT_TRUE(unknown);
    auto u = poser_to_motion(*unknown, *skel);
    ASSERT_FALSE(u);
    EXPECT_NE(u.error().message.find("mTail99"), std::string::npos);
}

// Every shared pose converts, each written rotation equals the file's within quantization.
TEST(Poser, EverySharedPoseConverts) {
    const fs::path dir = kShared / "poses";
    if (!fs::is_directory(dir)) GTEST_SKIP() << "no " << dir << " (../shared is absent)";
    auto skel = Skeleton::default_skeleton();
    int poses = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.path().extension() != ".xml") continue;
        auto pose = load_poser_xml(entry.path().string());
        if (entry.path().filename() == "posestand.xml") {
            // Firestorm's pose-stand animation list, not a pose: refused with a clear message.
            ASSERT_FALSE(pose);
            EXPECT_NE(pose.error().message.find("not a poser joint"), std::string::npos) << pose.error().message;
            continue;
        }
        ASSERT_TRUE(pose) << pose.error().message;
        auto r = poser_to_motion(*pose, *skel);
        ASSERT_TRUE(r) << entry.path() << ": " << r.error().message;
        int checked = 0;
        for (const PoserJoint& pj : pose->joints) {
            if (!pj.enabled || pj.rotation == Vec3{}) continue;
            const MotionJoint* mj = nullptr;
            for (const auto& j : r->motion.joints)
                if (j.joint == skel->find(pj.name)) mj = &j;
            ASSERT_NE(mj, nullptr) << pj.name;
            ASSERT_EQ(mj->rot_keys.size(), 1u);
            // One U16 step per component (2/65535) is ≤ 0.006°; the floor encoding twice ≤ 0.012°.
            EXPECT_LT(angle_deg(mj->rot_keys[0].value, quat_from_roll_pitch_yaw(pj.rotation.x, pj.rotation.y, pj.rotation.z)), 0.015f)
                << entry.path() << " " << pj.name;
            ++checked;
        }
        EXPECT_GT(checked, 0) << entry.path();
        ++poses;
    }
    EXPECT_GE(poses, 9);
}
