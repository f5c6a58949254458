// SPDX-License-Identifier: MIT
// read_leap_joint_map: each form's parameters and the reference frame each one means (the
// viewer's processLeapData of 2022-08 for `move`, processJointData for `i` / `j`), and what is
// skipped (reported, the rest read).
#include <gtest/gtest.h>

#include <cmath>

#include "slanim/puppetry/leap_joint_data.hpp"

using namespace slanim;

namespace {

struct Read {
    std::vector<PuppetryJointTarget> targets;
    std::vector<LeapJointIssue> issues;
    const PuppetryJointTarget* find(const char* joint, PuppetryRefFrame f) const {
        for (const auto& t : targets)
            if (t.joint == joint && t.frame == f) return &t;
        return nullptr;
    }
};

Read read(const char* notation, LeapJointForm form) {
    Read r;
    const auto v = parse_llsd_notation(notation);
    EXPECT_TRUE(v) << v.error().describe();
    read_leap_joint_map(*v, form, "x", r.targets, r.issues);
    return r;
}

}  // namespace

TEST(LeapJointData, MoveFormParametersAndTheirFrames) {
    const Read r = read("{'command':'move','reply':'R','reqid':i1,'time':'t',"
                        "'mHead':{'local_rot':[r0,r0,r0.6],'pos':[r1,r2,r3]},"
                        "'mWristLeft':{'rot':[r0.6,r0,r0],'eff':[i1,i0,i0],'no_constraint':true},"
                        "'mChest':{'scale':[r1,r2,r3],'no_constraint':false}}",
                        LeapJointForm::Move);
    EXPECT_TRUE(r.issues.empty());
    const auto* head_p = r.find("mHead", PuppetryRefFrame::Parent);
    ASSERT_NE(head_p, nullptr);
    EXPECT_NEAR(head_p->rotation->z, 0.6f, 1e-6f);
    EXPECT_NEAR(head_p->rotation->w, 0.8f, 1e-6f);
    EXPECT_FALSE(head_p->position);
    const auto* head_r = r.find("mHead", PuppetryRefFrame::Root);
    ASSERT_NE(head_r, nullptr);
    EXPECT_EQ(*head_r->position, (Vec3{1, 2, 3}));  // `pos` is an IK target
    const auto* wrist = r.find("mWristLeft", PuppetryRefFrame::Root);
    ASSERT_NE(wrist, nullptr);
    EXPECT_NEAR(wrist->rotation->x, 0.6f, 1e-6f);  // `rot` is a root-frame target
    EXPECT_EQ(*wrist->position, (Vec3{1, 0, 0}));  // `eff`, the legacy `pos`
    EXPECT_TRUE(r.find("mWristLeft", PuppetryRefFrame::Parent)->disable_constraint);
    const auto* chest = r.find("mChest", PuppetryRefFrame::Parent);
    ASSERT_NE(chest, nullptr);
    EXPECT_EQ(*chest->scale, (Vec3{1, 2, 3}));
    EXPECT_FALSE(chest->disable_constraint);
    EXPECT_EQ(r.targets.size(), 5u);
}

TEST(LeapJointData, SetMapsGiveTheirFrameToRotationAndPosition) {
    const char* joints = "{'mHead':{'r':[r0,r0,r0.6],'position':[r1,r2,r3],'s':[r2,r2,r2],'d':true}}";
    const Read i = read(joints, LeapJointForm::InverseKinematics);
    const auto* root = i.find("mHead", PuppetryRefFrame::Root);
    ASSERT_NE(root, nullptr);
    EXPECT_TRUE(root->rotation && root->position);
    const auto* local = i.find("mHead", PuppetryRefFrame::Parent);  // scale and d: always local
    ASSERT_NE(local, nullptr);
    EXPECT_EQ(*local->scale, (Vec3{2, 2, 2}));
    EXPECT_TRUE(local->disable_constraint);
    const Read j = read(joints, LeapJointForm::JointState);
    ASSERT_EQ(j.targets.size(), 1u);
    EXPECT_EQ(j.targets[0].frame, PuppetryRefFrame::Parent);
    EXPECT_TRUE(j.targets[0].rotation && j.targets[0].position && j.targets[0].scale);
    EXPECT_TRUE(i.issues.empty() && j.issues.empty());
}

TEST(LeapJointData, SkippedValuesAreReportedAndTheRestRead) {
    const Read r = read("{'mHead':{'rot':[r0,r0,r0],'r':[rnan,r0,r0],'p':[r0,r0],'s':'x',"
                        "'d':[r1,r2,r3],'rotation':[r0,r0,r3]},'mNeck':i3,'':{},"
                        "'mChest':{'p':[i1,i2,i3,i4]}}",
                        LeapJointForm::JointState);
    // rot (a `move` name), the NaN, the short vector, the string, the vector `d`, |xyz| > 1
    // (used, normalised), the non-map joint, the empty key.
    ASSERT_EQ(r.issues.size(), 8u);
    int used = 0;
    for (const auto& i : r.issues) used += i.skipped ? 0 : 1;
    EXPECT_EQ(used, 1);
    const auto* head = r.find("mHead", PuppetryRefFrame::Parent);
    ASSERT_NE(head, nullptr);
    EXPECT_NEAR(head->rotation->z, 1.f, 1e-6f);
    EXPECT_EQ(head->rotation->w, 0.f);
    EXPECT_FALSE(head->disable_constraint);
    EXPECT_EQ(*r.find("mChest", PuppetryRefFrame::Parent)->position, (Vec3{1, 2, 3}));  // ≥ 3: first 3
    bool named = false;
    for (const auto& i : r.issues) named = named || (i.path == "x.mHead.r" && i.key == "non-finite");
    EXPECT_TRUE(named);
    Read not_map;
    read_leap_joint_map(Llsd(3), LeapJointForm::InverseKinematics, "d.i", not_map.targets, not_map.issues);
    ASSERT_EQ(not_map.issues.size(), 1u);
    EXPECT_EQ(not_map.issues[0].path, "d.i");
}
