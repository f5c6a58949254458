// SPDX-License-Identifier: MIT
#include "slanim/puppetry/capture.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

namespace slanim {
namespace {

const std::filesystem::path kCapture =
    std::filesystem::path(SLANIM_SHARED_DIR) / "puppetry" / "captured_webcam_sample_2022-05-06.txt";

TEST(PuppetryCapture, RealWebcamCapture) {
    if (!std::filesystem::exists(kCapture)) GTEST_SKIP() << "no shared data at " << kCapture;
    const auto cap = load_puppetry_capture(kCapture.string());
    ASSERT_TRUE(cap.ok()) << cap.error().describe();
    ASSERT_EQ(cap->frames.size(), 5u);
    // 2022-05-06 17:23:57.413465 UTC.
    EXPECT_NEAR(cap->start_epoch_seconds, 1651857837.413465, 1e-6);
    const double expect_t[] = {0.0, 0.103729, 0.223704, 0.360340, 0.474766};
    float lo[3] = {1e9f, 1e9f, 1e9f}, hi[3] = {-1e9f, -1e9f, -1e9f};
    for (std::size_t f = 0; f < 5; ++f) {
        const PuppetryFrame& fr = cap->frames[f];
        EXPECT_NEAR(fr.time, expect_t[f], 1e-6) << f;
        // mHead rotation (Parent) + six left-hand IK targets (Root).
        ASSERT_EQ(fr.joints.size(), 7u);
        int roots = 0;
        for (const PuppetryJointTarget& j : fr.joints) {
            if (j.joint == "mHead") {
                EXPECT_EQ(j.frame, PuppetryRefFrame::Parent);
                ASSERT_TRUE(j.rotation.has_value());
                EXPECT_FALSE(j.position.has_value());
                const Quat q = *j.rotation;
                EXPECT_NEAR(dot(q, q), 1.f, 1e-6f);
                EXPECT_GT(q.w, 0.99f);  // a small nod/turn
                continue;
            }
            ++roots;
            EXPECT_EQ(j.frame, PuppetryRefFrame::Root) << j.joint;
            ASSERT_TRUE(j.position.has_value());
            EXPECT_FALSE(j.rotation.has_value());
            const Vec3 p = *j.position;
            const float c[3] = {p.x, p.y, p.z};
            for (int k = 0; k < 3; ++k) {
                lo[k] = std::min(lo[k], c[k]);
                hi[k] = std::max(hi[k], c[k]);
            }
        }
        EXPECT_EQ(roots, 6);
        EXPECT_NE(fr.find("mWristLeft", PuppetryRefFrame::Root), nullptr);
        EXPECT_EQ(fr.find("mWristLeft", PuppetryRefFrame::Parent), nullptr);
    }
    // The webcam has no depth: x is pinned at 0.05; the hand is left (+y) and up (+z) of the
    // pelvis in arm-span units.
    EXPECT_FLOAT_EQ(lo[0], 0.05f);
    EXPECT_NEAR(hi[0], 0.06725f, 1e-5f);
    EXPECT_NEAR(lo[1], 0.123346f, 1e-5f);
    EXPECT_NEAR(hi[1], 0.181901f, 1e-5f);
    EXPECT_NEAR(lo[2], 0.535830f, 1e-5f);
    EXPECT_NEAR(hi[2], 0.630728f, 1e-5f);
    const PuppetryJointTarget* head = cap->frames[0].find("mHead", PuppetryRefFrame::Parent);
    ASSERT_NE(head, nullptr);
    EXPECT_FLOAT_EQ(head->rotation->x, -0.07607924193143845f);
    EXPECT_FLOAT_EQ(head->rotation->z, -0.05753650888800621f);
}

TEST(PuppetryCapture, PythonLiteralForms) {
    const auto cap = parse_puppetry_capture(
        "\n"
        "{\"mHead\": {'rotation': (0, 0.6, 0,)}, 'time': '2022-01-01T00:00:00Z', 'mChest': "
        "{'p': [1, -2.5e-1, +3], 's': [1, 1, 1], 'd': True},}\r\n"
        "   \n"
        "{'time': '2022-01-01 01:00:00.5+01:00', '8': {'r': [0, 0, 0]}, 'command': 'move'}\n");
    ASSERT_TRUE(cap.ok()) << cap.error().describe();
    ASSERT_EQ(cap->frames.size(), 2u);
    EXPECT_EQ(cap->start_epoch_seconds, 1640995200.0);
    EXPECT_EQ(cap->frames[1].time, 0.5);
    const PuppetryFrame& f = cap->frames[0];
    // Sorted by joint, then Parent before Root. A capture's position is an IK target (Root)
    // under any of its names; scale and disable_constraint are Parent.
    ASSERT_EQ(f.joints.size(), 3u);
    EXPECT_EQ(f.joints[0].joint, "mChest");
    EXPECT_EQ(f.joints[0].frame, PuppetryRefFrame::Parent);
    EXPECT_FALSE(f.joints[0].position.has_value());
    EXPECT_EQ(*f.joints[0].scale, (Vec3{1.f, 1.f, 1.f}));
    EXPECT_TRUE(f.joints[0].disable_constraint);
    EXPECT_EQ(f.joints[1].joint, "mChest");
    EXPECT_EQ(f.joints[1].frame, PuppetryRefFrame::Root);
    EXPECT_EQ(*f.joints[1].position, (Vec3{1.f, -0.25f, 3.f}));
    EXPECT_EQ(f.joints[2].joint, "mHead");
    EXPECT_NEAR(f.joints[2].rotation->w, 0.8f, 1e-7f);
    EXPECT_EQ(cap->frames[1].joints[0].joint, "8");
    EXPECT_EQ(*cap->frames[1].joints[0].rotation, Quat::identity());
}

TEST(PuppetryCapture, ErrorsHaveLineAndColumn) {
    struct Case {
        const char* text;
        long long line;
        const char* needle;
    };
    const std::string ok = "{'time': '2022-05-06 17:23:57+00:00', 'mHead': {'rot': [0, 0, 0]}}\n";
    const Case cases[] = {
        {"{'time': '2022-05-06 17:23:57'\n", 1, "column 31: expected ',' or '}' in a dict, found the end of the line"},
        {"{'time': '2022-05-06 17:23:57', 'mHead': {'rot': [0, 0, 0}}\n", 1, "column 58: expected ',' or ']' in a list, found '}'"},
        {"[1]\n", 1, "column 1: expected '{' starting a dict"},
        {"{'time': '2022-05-06 17:23:57', 'mHead': {'rot': [0, 0]}}\n", 1, "column 33: joint 'mHead': 'rot': expected an array of 3 finite numbers"},
        {"{'time': '2022-05-06 17:23:57', 'mHead': {'rot': [0.9, 0.9, 0]}}\n", 1, "not the imaginary part of a unit quaternion"},
        {"{'time': '2022-05-06 17:23:57', 'mHead': {'rot': [nan, 0, 0]}}\n", 1, "finite"},
        {"{'time': '2022-05-06 17:23:57', 'mHead': {'spin': [0, 0, 0]}}\n", 1, "joint 'mHead': unknown key 'spin'"},
        {"{'time': '2022-05-06 17:23:57', 'mHead': [0, 0, 0]}\n", 1, "expected a map of joint values, found array"},
        {"{'mHead': {'rot': [0, 0, 0]}}\n", 1, "column 1: no 'time' entry"},
        {"{'time': '2022-05-06', 'mHead': {}}\n", 1, "column 2: 'time' '2022-05-06' is not"},
        {"{'time': 5}\n", 1, "'time' must be a string"},
        {"{'time': '2022-05-06 17:23:57', 'command': 'jump'}\n", 1, "'command' must be 'move'"},
        {"{'time': '2022-05-06 17:23:57', 'time': '2022-05-06 17:23:57'}\n", 1, "column 33: repeated key 'time'"},
        {"{'time': '2022-05-06 17:23:57', 'x': 'abc}\n", 1, "column 38: unterminated string"},
        {"{'time': '2022-05-06 17:23:57', 'x': 1e}\n", 1, "malformed exponent"},
        {"{'time': '2022-05-06 17:23:57', 'x': @}\n", 1, "column 38: expected a value"},
    };
    for (const Case& c : cases) {
        const auto r = parse_puppetry_capture(ok + c.text);
        ASSERT_FALSE(r.ok()) << c.text;
        EXPECT_EQ(r.error().line, c.line + 1) << r.error().message;
        EXPECT_NE(r.error().message.find(c.needle), std::string::npos) << r.error().message;
        EXPECT_EQ(r.error().message.rfind("line 2, column ", 0), 0u) << r.error().message;
    }
    const auto back = parse_puppetry_capture(ok + "{'time': '2022-05-06 17:23:56+00:00'}\n");
    ASSERT_FALSE(back.ok());
    EXPECT_NE(back.error().message.find("time goes backwards by 1.000000 s"), std::string::npos);
    const auto missing = load_puppetry_capture("/nonexistent/capture.txt");
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().message.find("/nonexistent/capture.txt"), std::string::npos);
}

TEST(PuppetryCapture, LeapSetMessages) {
    const auto msg = parse_llsd_notation(
        "{'command':'set','data':{'inverse_kinematics':{'mWristLeft':{'position':[r0.1,r0.7,i0],"
        "'rotation':[r0,r0,r0.6]}},'j':{'mHead':{'r':[r0,r0.6,r0],'d':true},"
        "'mWristLeft':{'p':[r0.2,r0,r0],'s':[i1,i1,i1]}}}}");
    ASSERT_TRUE(msg.ok()) << msg.error().describe();
    const auto f = puppetry_frame_from_leap(*msg, 2.5);
    ASSERT_TRUE(f.ok()) << f.error().describe();
    EXPECT_EQ(f->time, 2.5);
    ASSERT_EQ(f->joints.size(), 3u);
    const PuppetryJointTarget* ik = f->find("mWristLeft", PuppetryRefFrame::Root);
    ASSERT_NE(ik, nullptr);
    EXPECT_EQ(*ik->position, (Vec3{0.1f, 0.7f, 0.f}));
    EXPECT_NEAR(ik->rotation->w, 0.8f, 1e-7f);
    const PuppetryJointTarget* js = f->find("mWristLeft", PuppetryRefFrame::Parent);
    ASSERT_NE(js, nullptr);
    EXPECT_EQ(*js->position, (Vec3{0.2f, 0.f, 0.f}));
    EXPECT_EQ(*js->scale, (Vec3{1.f, 1.f, 1.f}));
    const PuppetryJointTarget* head = f->find("mHead", PuppetryRefFrame::Parent);
    ASSERT_NE(head, nullptr);
    EXPECT_TRUE(head->disable_constraint);
    EXPECT_FALSE(head->position.has_value());

    // The data map alone and the short `d` are accepted too.
    const auto bare = puppetry_frame_from_leap(*parse_llsd_notation("{'i':{'8':{'p':[i0,i0,i1]}}}"), 0.0);
    ASSERT_TRUE(bare.ok()) << bare.error().describe();
    EXPECT_EQ(bare->joints[0].joint, "8");
    EXPECT_EQ(bare->joints[0].frame, PuppetryRefFrame::Root);
    EXPECT_TRUE(puppetry_frame_from_leap(*parse_llsd_notation("{'command':'set','d':{}}"), 0.0).ok());

    struct Case {
        const char* text;
        const char* needle;
    };
    const Case cases[] = {
        {"{'command':'get','data':{}}", "command: expected 'set'"},
        {"{'command':'set'}", "without 'data'"},
        {"{'command':'set','data':[]}", "data: expected a map"},
        {"{'command':'set','data':{'k':{}}}", "data.k: unknown key"},
        {"{'command':'set','data':{'i':{'mHead':{'s':[i1,i1,i1]}}}}", "data.i.mHead: unknown key 's'"},
        {"{'command':'set','data':{'j':{'mHead':{'r':[i1,i1,i1]}}}}", "data.j.mHead: 'r': (1, 1, 1) is not the imaginary part"},
        {"{'command':'set','data':{'j':{'mHead':{'p':[i1,'x',i1]}}}}", "data.j.mHead: 'p': expected an array of 3 finite numbers"},
        {"{'command':'set','data':{'j':{'mHead':{'p':[rnan,i1,i1]}}}}", "finite"},
        {"{'command':'set','data':{'j':{'':{}}}}", "empty joint key"},
        {"{'command':'set','data':{'j':{'mHead':{}},'joint_state':{'mHead':{}}}}", "appears twice"},
        {"{'command':'set','data':{},'extra':i1}", "extra: unknown key"},
        {"[]", "message: expected a map"},
    };
    for (const Case& c : cases) {
        const auto m = parse_llsd_notation(c.text);
        ASSERT_TRUE(m.ok()) << c.text;
        const auto r = puppetry_frame_from_leap(*m, 0.0);
        ASSERT_FALSE(r.ok()) << c.text;
        EXPECT_NE(r.error().message.find(c.needle), std::string::npos) << r.error().message;
    }
}

}  // namespace
}  // namespace slanim
