// SPDX-License-Identifier: MIT
// Edits of decoded motions (motion_edit.hpp): each operation on small motions built in code,
// the viewer round trip of the results, the mirror table of the default skeleton, and the
// mirror on real files from SLANIM_SHARED_DIR "/anims" (skipped when absent).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "slanim/core/motion.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/anim.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/formats/motion_edit.hpp"
#include "slanim/runtime/ik_feature.hpp"
#include "slanim/runtime/world.hpp"
#include "test_util.hpp"

#ifndef SLANIM_SHARED_DIR
#error "SLANIM_SHARED_DIR must name the shared data folder"
#endif

using namespace slanim;
namespace fs = std::filesystem;

namespace {

const Skeleton& sk() { return test::skel(); }

// Hips, shoulder and pelvis with rotations and a pelvis position track; 2 s.
Motion sample_motion() {
    Motion m = test::motion({test::rot_joint("mPelvis", {{0.f, 0.f}, {1.f, 10.f}, {2.f, 0.f}}),
                             test::rot_joint("mHipLeft", {{0.f, 5.f}, {2.f, 15.f}}, 3),
                             test::rot_joint("mHipRight", {{0.f, -5.f}, {1.f, -20.f}}),
                             test::rot_joint("mShoulderLeft", {{0.f, 30.f}, {0.5f, 60.f}, {2.f, 30.f}}, 4),
                             test::rot_joint("mChest", {{0.f, 2.f}})},
                            2.f, 2, 0.3f, 0.4f, true, 0.5f, 1.5f);
    m.joints[0].pos_keys = {{0.f, {0.f, 0.f, 0.f}}, {1.f, {0.01f, 0.05f, -0.02f}}, {2.f, {0.f, 0.f, 0.f}}};
    m.max_priority = viewer_max_priority(m);
    return m;
}

// Adds a constraint on the left hand whose chain (mWristLeft, mElbowLeft, mShoulderLeft) the
// motion must animate.
void add_hand_constraint(Motion& m) {
    for (const char* n : {"mWristLeft", "mElbowLeft", "mCollarLeft"})
        m.joints.push_back(test::rot_joint(n, {{0.f, 1.f}}));
    MotionConstraint c;
    c.chain_length = 2;
    c.type = ConstraintType::Point;
    c.source_volume = "L_HAND";
    c.source_offset = {0.1f, 0.2f, 0.3f};
    c.target_volume = "R_HAND";
    c.target_offset = {0.f, -0.5f, 0.25f};
    c.target_dir = {0.f, 0.f, 0.f};
    c.ease_in_start = 0.2f;
    c.ease_in_stop = 0.4f;
    c.ease_out_start = 1.6f;
    c.ease_out_stop = 1.8f;
    m.constraints.push_back(c);
}

// What the viewer holds after loading the file the motion is written as.
Motion reload(const Motion& m) {
    const auto bytes = write_anim(encode_motion(m));
    ParseOptions opt;
    opt.skeleton = &sk();
    const ParseResult pr = parse_anim(bytes, opt);
    EXPECT_TRUE(pr.ok()) << (pr.first_error() ? pr.first_error()->describe() : "");
    return decode_motion(pr.motion, sk());
}

const MotionJoint* find_joint(const Motion& m, const std::string& name) {
    for (const auto& j : m.joints)
        if (j.name == name) return &j;
    return nullptr;
}

std::vector<fs::path> real_anims() {
    std::vector<fs::path> out;
    const fs::path dir = fs::path(SLANIM_SHARED_DIR) / "anims";
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_regular_file() && it->path().extension() == ".anim") out.push_back(it->path());
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

// --- globs ------------------------------------------------------------------------------------

TEST(MotionEditGlob, FnmatchSyntax) {
    EXPECT_TRUE(glob_match("mHip*", "mHipLeft"));
    EXPECT_TRUE(glob_match("mHip*", "mHip"));
    EXPECT_FALSE(glob_match("mHip*", "xmHipLeft"));
    EXPECT_TRUE(glob_match("*Left", "mFaceEyeAltLeft"));
    EXPECT_TRUE(glob_match("m?ip*", "mHipRight"));
    EXPECT_FALSE(glob_match("m?ip", "mHipRight"));
    EXPECT_TRUE(glob_match("mHand[IM]*1Left", "mHandIndex1Left"));
    EXPECT_TRUE(glob_match("mHand[IM]*1Left", "mHandMiddle1Left"));
    EXPECT_FALSE(glob_match("mHand[IM]*1Left", "mHandRing1Left"));
    EXPECT_TRUE(glob_match("mHand[!IM]*1Left", "mHandRing1Left"));
    EXPECT_TRUE(glob_match("mHand[^IM]*1Left", "mHandPinky1Left"));
    EXPECT_TRUE(glob_match("mWing[1-3]Left", "mWing2Left"));
    EXPECT_FALSE(glob_match("mWing[1-3]Left", "mWing4Left"));
    EXPECT_TRUE(glob_match("[]x]", "]"));
    EXPECT_TRUE(glob_match("a\\*b", "a*b"));
    EXPECT_FALSE(glob_match("a\\*b", "axb"));
    EXPECT_TRUE(glob_match("*", ""));
    EXPECT_TRUE(glob_match("*a*b*c", "xxaxxbxxc"));
    EXPECT_FALSE(glob_match("mhip*", "mHipLeft"));  // case-sensitive like the viewer
    EXPECT_TRUE(check_glob("mHand[IM]*").ok());
    EXPECT_FALSE(check_glob("mHand[IM").ok());
    EXPECT_FALSE(check_glob("abc\\").ok());
}

TEST(MotionEditGlob, PlainNamesResolveAliasesGlobsUseCanonicalNames) {
    const MotionJoint shoulder = test::rot_joint("mShoulderLeft", {{0.f, 1.f}});
    const MotionJoint pelvis = test::rot_joint("mPelvis", {{0.f, 1.f}});
    EXPECT_TRUE(joint_matches("lShldr", shoulder, sk()));  // BVH alias
    EXPECT_TRUE(joint_matches("avatar_mShoulderLeft", shoulder, sk()));
    EXPECT_TRUE(joint_matches("hip", pelvis, sk()));
    EXPECT_FALSE(joint_matches("hip*", pelvis, sk()));  // globs see canonical names only
    EXPECT_TRUE(joint_matches("mPel*", pelvis, sk()));
    MotionJoint unknown;
    unknown.name = "myBone";
    EXPECT_TRUE(joint_matches("myBone", unknown, sk()));
    EXPECT_TRUE(joint_matches("my*", unknown, sk()));
}

// --- priorities -------------------------------------------------------------------------------

TEST(MotionEditPriority, BaseSetsEveryJointAndMatchesTheReload) {
    Motion m = sample_motion();
    ASSERT_TRUE(set_base_priority(m, 5).value());
    EXPECT_EQ(m.base_priority, 5);
    for (const auto& j : m.joints) EXPECT_EQ(j.priority, 5) << j.name;
    EXPECT_EQ(m.max_priority, 5);
    const Motion r = reload(m);
    EXPECT_EQ(r.base_priority, 5);
    EXPECT_EQ(r.max_priority, 5);
    EXPECT_FALSE(set_base_priority(m, 5).value());  // already so
}

TEST(MotionEditPriority, ViewerClampingOfBaseSevenAndAbove) {
    // A file with base 7 or more loads as 6 with max priority 6 (spec §1.2).
    Motion m = sample_motion();
    RawMotion raw = encode_motion(m);
    raw.base_priority = 9;
    const Motion loaded = decode_motion(raw, sk());
    EXPECT_EQ(loaded.base_priority, 6);
    EXPECT_EQ(loaded.max_priority, 6);
    // The edit refuses what the viewer would clamp, and leaves the motion alone.
    Motion e = loaded;
    for (int p : {7, 8, 100, -1, -2}) {
        auto r = set_base_priority(e, p);
        ASSERT_FALSE(r.ok()) << p;
        EXPECT_NE(r.error().message.find("0..6"), std::string::npos);
        EXPECT_EQ(e, loaded);
    }
    // Priority 6 round-trips as 6.
    ASSERT_TRUE(set_base_priority(e, 6).ok());
    const Motion r = reload(e);
    EXPECT_EQ(r.base_priority, 6);
    EXPECT_EQ(r.max_priority, 6);
    // A Motion holding a base ≥ 7 (not from decode) is written as is and clamped on re-load.
    Motion raw7 = sample_motion();
    raw7.base_priority = 7;
    const Motion r7 = reload(raw7);
    EXPECT_EQ(r7.base_priority, 6);
    EXPECT_EQ(r7.max_priority, 6);
    EXPECT_EQ(viewer_max_priority(raw7), 6);
}

TEST(MotionEditPriority, JointPriorityByGlobAndAlias) {
    Motion m = sample_motion();
    ASSERT_TRUE(set_joint_priority(m, "mHip*", 5, sk()).value());
    EXPECT_EQ(find_joint(m, "mHipLeft")->priority, 5);
    EXPECT_EQ(find_joint(m, "mHipRight")->priority, 5);
    EXPECT_EQ(find_joint(m, "mPelvis")->priority, -1);
    EXPECT_EQ(find_joint(m, "mShoulderLeft")->priority, 4);
    EXPECT_EQ(m.max_priority, 5);
    ASSERT_TRUE(set_joint_priority(m, "lShldr", -1, sk()).value());  // alias, "use base"
    EXPECT_EQ(find_joint(m, "mShoulderLeft")->priority, -1);
    ASSERT_TRUE(set_joint_priority(m, "*", 0, sk()).value());
    EXPECT_EQ(m.max_priority, 0);
    EXPECT_EQ(reload(m).max_priority, m.max_priority);
    // In the skeleton but not in this motion: nothing to do, not an error.
    EXPECT_FALSE(set_joint_priority(m, "mWing*", 3, sk()).value());
    // Errors leave the motion unchanged.
    const Motion before = m;
    EXPECT_FALSE(set_joint_priority(m, "mHip*", 7, sk()).ok());
    EXPECT_FALSE(set_joint_priority(m, "mHip*", -2, sk()).ok());
    auto typo = set_joint_priority(m, "mHipz*", 3, sk());
    ASSERT_FALSE(typo.ok());
    EXPECT_NE(typo.error().message.find("mHipz*"), std::string::npos);
    EXPECT_FALSE(set_joint_priority(m, "mHip[", 3, sk()).ok());
    EXPECT_EQ(m, before);
}

// --- joints and keys --------------------------------------------------------------------------

TEST(MotionEditJoints, DropJointsByGlob) {
    Motion m = sample_motion();
    ASSERT_TRUE(drop_joints(m, "mHip*", sk()).value());
    EXPECT_EQ(m.joints.size(), 3u);
    EXPECT_EQ(find_joint(m, "mHipLeft"), nullptr);
    EXPECT_EQ(m.max_priority, 4);  // mHipLeft's 3 and mShoulderLeft's 4 → 4
    ASSERT_TRUE(drop_joints(m, "lShldr", sk()).value());
    EXPECT_EQ(m.max_priority, 0);
    EXPECT_FALSE(drop_joints(m, "mWing*", sk()).value());
    const Motion before = m;
    auto all = drop_joints(m, "*", sk());
    ASSERT_FALSE(all.ok());
    EXPECT_NE(all.error().message.find("no joint"), std::string::npos);
    EXPECT_EQ(m, before);
    reload(m);
}

TEST(MotionEditJoints, DropRefusesToBreakAConstraintChain) {
    Motion m = sample_motion();
    add_hand_constraint(m);
    reload(m);  // valid as built
    const Motion before = m;
    auto r = drop_joints(m, "mElbowLeft", sk());
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("mElbowLeft"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("constraint"), std::string::npos);
    EXPECT_EQ(m, before);
    EXPECT_TRUE(drop_joints(m, "mHip*", sk()).value());  // not in the chain
}

TEST(MotionEditJoints, DropPositionAndRotationKeys) {
    Motion m = sample_motion();
    m.joints[1].pos_keys = {{0.f, {0.1f, 0.1f, 0.1f}}};  // mHipLeft
    Motion all = m;
    ASSERT_TRUE(drop_position_keys(all, "*", sk()).value());
    for (const auto& j : all.joints) EXPECT_TRUE(j.pos_keys.empty());
    Motion some = m;
    ASSERT_TRUE(drop_position_keys(some, "hip", sk()).value());  // alias of mPelvis
    EXPECT_TRUE(find_joint(some, "mPelvis")->pos_keys.empty());
    EXPECT_EQ(find_joint(some, "mHipLeft")->pos_keys.size(), 1u);
    EXPECT_FALSE(drop_position_keys(some, "mPelvis", sk()).value());
    ASSERT_TRUE(drop_rotation_keys(m, "mHip*", sk()).value());
    EXPECT_TRUE(find_joint(m, "mHipLeft")->rot_keys.empty());
    EXPECT_TRUE(find_joint(m, "mHipRight")->rot_keys.empty());
    EXPECT_FALSE(find_joint(m, "mPelvis")->rot_keys.empty());
    reload(m);
}

TEST(MotionEditJoints, DropEmptyJointsKeepsConstraintChains) {
    Motion m = sample_motion();
    add_hand_constraint(m);
    ASSERT_TRUE(drop_rotation_keys(m, "mHip*", sk()).value());
    ASSERT_TRUE(drop_rotation_keys(m, "mElbowLeft", sk()).value());
    ASSERT_TRUE(drop_empty_joints(m, sk()).value());
    EXPECT_EQ(find_joint(m, "mHipRight"), nullptr);
    EXPECT_EQ(find_joint(m, "mHipLeft"), nullptr);
    ASSERT_NE(find_joint(m, "mElbowLeft"), nullptr);  // the L_HAND chain needs it
    EXPECT_FALSE(drop_empty_joints(m, sk()).value());
    reload(m);
    Motion empty = test::motion({test::rot_joint("mChest", {})}, 1.f);
    EXPECT_FALSE(drop_empty_joints(empty, sk()).ok());
}

// --- header values ----------------------------------------------------------------------------

TEST(MotionEditHeader, EaseAndLoopFlag) {
    Motion m = sample_motion();
    ASSERT_TRUE(set_ease_in(m, 1.25f).value());
    ASSERT_TRUE(set_ease_out(m, 0.f).value());
    EXPECT_EQ(m.ease_in, 1.25f);
    EXPECT_EQ(m.ease_out, 0.f);
    EXPECT_FALSE(set_ease_in(m, -0.1f).ok());
    EXPECT_FALSE(set_ease_out(m, NAN).ok());
    EXPECT_FALSE(set_ease_out(m, INFINITY).ok());
    ASSERT_TRUE(set_loop(m, false).value());
    EXPECT_FALSE(m.loop);
    EXPECT_FALSE(set_loop(m, false).value());
    ASSERT_TRUE(set_loop(m, true).value());
    EXPECT_EQ(m.loop_in, 0.5f);  // points untouched
    const Motion r = reload(m);
    EXPECT_EQ(r.ease_in, 1.25f);
    EXPECT_TRUE(r.loop);
}

TEST(MotionEditHeader, LoopPointsSecondsPercentAndClamping) {
    EXPECT_EQ(parse_loop_point("1.5").value(), (LoopPoint{1.5, false}));
    EXPECT_EQ(parse_loop_point("25%").value(), (LoopPoint{25.0, true}));
    for (const char* bad : {"", "%", "-1", "101%", "abc", "1.5s", " 1", "nan", "inf"})
        EXPECT_FALSE(parse_loop_point(bad).ok()) << bad;

    Motion m = sample_motion();  // 2 s, loop 0.5..1.5
    ASSERT_TRUE(set_loop_points(m, LoopPoint{25.0, true}, LoopPoint{100.0, true}).value());
    EXPECT_FLOAT_EQ(m.loop_in, 0.5f);
    EXPECT_EQ(m.loop_out, 2.f);  // 100 % is exactly the duration
    ASSERT_TRUE(set_loop_out(m, LoopPoint{9.0, false}).ok());  // seconds past the end: clamped
    EXPECT_EQ(m.loop_out, 2.f);
    ASSERT_TRUE(set_loop_in(m, LoopPoint{1.0, false}).value());
    EXPECT_EQ(m.loop_in, 1.f);
    const Motion before = m;
    auto r = set_loop_out(m, LoopPoint{0.5, false});  // before loop in
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("loop in"), std::string::npos);
    EXPECT_EQ(m, before);
    // Both at once: the order of the two does not matter.
    ASSERT_TRUE(set_loop_points(m, LoopPoint{0.1, false}, LoopPoint{0.2, false}).ok());
    EXPECT_EQ(m.loop_in, 0.1f);
    EXPECT_EQ(m.loop_out, 0.2f);
    EXPECT_FALSE(set_loop_points(m, LoopPoint{-1.0, false}, std::nullopt).ok());
    EXPECT_FALSE(set_loop_points(m, LoopPoint{150.0, true}, std::nullopt).ok());
    // An out-of-range point kept from the file is clamped too.
    Motion odd = sample_motion();
    odd.loop_out = 7.f;
    ASSERT_TRUE(set_loop_in(odd, LoopPoint{50.0, true}).ok());
    EXPECT_EQ(odd.loop_out, 2.f);
    EXPECT_EQ(odd.loop_in, 1.f);
    reload(m);
}

TEST(MotionEditSpeed, TwiceAsFastHalvesEveryTime) {
    Motion m = sample_motion();
    add_hand_constraint(m);
    const Motion before = m;
    ASSERT_TRUE(change_speed(m, 2.0).value());
    EXPECT_EQ(m.duration, 1.f);
    EXPECT_EQ(m.loop_in, 0.25f);
    EXPECT_EQ(m.loop_out, 0.75f);
    EXPECT_EQ(m.ease_in, before.ease_in / 2.f);
    EXPECT_EQ(m.ease_out, 0.2f);
    for (std::size_t j = 0; j < m.joints.size(); ++j) {
        ASSERT_EQ(m.joints[j].rot_keys.size(), before.joints[j].rot_keys.size());
        for (std::size_t k = 0; k < m.joints[j].rot_keys.size(); ++k) {
            EXPECT_EQ(m.joints[j].rot_keys[k].time, before.joints[j].rot_keys[k].time / 2.f);
            EXPECT_EQ(m.joints[j].rot_keys[k].value, before.joints[j].rot_keys[k].value);
        }
        for (std::size_t k = 0; k < m.joints[j].pos_keys.size(); ++k)
            EXPECT_EQ(m.joints[j].pos_keys[k].time, before.joints[j].pos_keys[k].time / 2.f);
    }
    const MotionConstraint& c = m.constraints[0];
    EXPECT_EQ(c.ease_in_start, 0.1f);
    EXPECT_EQ(c.ease_in_stop, 0.2f);
    EXPECT_EQ(c.ease_out_start, 0.8f);
    EXPECT_EQ(c.ease_out_stop, 0.9f);
    // Back at half speed gives the original times (powers of two are exact).
    ASSERT_TRUE(change_speed(m, 0.5).value());
    EXPECT_EQ(m, before);
    EXPECT_FALSE(change_speed(m, 1.0).value());
    // Errors.
    for (double f : {0.0, -1.0, static_cast<double>(NAN), static_cast<double>(INFINITY)}) EXPECT_FALSE(change_speed(m, f).ok()) << f;
    auto slow = change_speed(m, 0.02);  // 2 s → 100 s
    ASSERT_FALSE(slow.ok());
    EXPECT_NE(slow.error().message.find("60"), std::string::npos);
    EXPECT_EQ(m, before);
    // The re-loaded file has the halved times (within the 16-bit time resolution).
    Motion fast = before;
    ASSERT_TRUE(change_speed(fast, 2.0).ok());
    const Motion r = reload(fast);
    EXPECT_EQ(r.duration, 1.f);
    EXPECT_NEAR(r.joints[3].rot_keys[1].time, 0.25f, 1.f / 65535.f);
}

TEST(MotionEditSpeed, KeysThatMeetCollapseLastWins) {
    Motion m = test::motion({test::rot_joint("mChest", {{0.f, 0.f}, {1e-30f, 10.f}, {1.f, 20.f}})}, 1.f);
    ASSERT_TRUE(change_speed(m, 1e20).ok());  // 1e-30 / 1e20 underflows to 0
    ASSERT_EQ(m.joints[0].rot_keys.size(), 2u);
    EXPECT_EQ(m.joints[0].rot_keys[0].time, 0.f);
    EXPECT_NEAR(test::z_angle_deg(m.joints[0].rot_keys[0].value), 10.f, 1e-4f);
}

TEST(MotionEditHeader, HandPoseNamesAndNumbers) {
    EXPECT_EQ(parse_hand_pose("0").value(), 0u);
    EXPECT_EQ(parse_hand_pose("13").value(), 13u);
    EXPECT_EQ(parse_hand_pose("fist").value(), 3u);
    EXPECT_EQ(parse_hand_pose("FIST_R").value(), 9u);
    EXPECT_EQ(parse_hand_pose("hand_pose_palm_r").value(), 13u);
    EXPECT_EQ(parse_hand_pose("Typing").value(), 11u);
    for (const char* bad : {"14", "-1", "", "fists", "NUM_HAND_POSES", "1x"})
        EXPECT_FALSE(parse_hand_pose(bad).ok()) << bad;
    for (std::uint32_t i = 0; i < kNumHandPoses; ++i)
        EXPECT_EQ(parse_hand_pose(hand_pose_enum_name(i)).value(), i);
    EXPECT_EQ(hand_pose_enum_name(13), "HAND_POSE_PALM_R");
    Motion m = sample_motion();
    ASSERT_TRUE(set_hand_pose(m, 10).value());
    EXPECT_EQ(reload(m).hand_pose, 10u);
    EXPECT_FALSE(set_hand_pose(m, 14).ok());
}

TEST(MotionEditHeader, EmoteNamesTheViewerKeeps) {
    Motion m = sample_motion();
    ASSERT_TRUE(set_emote(m, "express_smile").value());
    EXPECT_EQ(reload(m).emote_name, "express_smile");
    ASSERT_TRUE(set_emote(m, "Express_Laugh_Emote").value());  // case-insensitive like the viewer
    EXPECT_EQ(reload(m).emote_name, "Express_Laugh_Emote");
    ASSERT_TRUE(set_emote(m, "ca1baf4d-0a18-5a1f-0330-e4bd1e71f09e").ok());  // a UUID
    for (const char* bad : {"Closed_Mouth", "smile", "express_smile2"}) {
        const Motion before = m;
        EXPECT_FALSE(set_emote(m, bad).ok()) << bad;
        EXPECT_EQ(m, before);
    }
    ASSERT_TRUE(set_emote(m, "").value());
    EXPECT_EQ(reload(m).emote_name, "");
}

// --- mirror -----------------------------------------------------------------------------------

TEST(MirrorTable, NamesSwapLeftRightAndPrefixes) {
    EXPECT_EQ(mirrored_name("mShoulderLeft"), "mShoulderRight");
    EXPECT_EQ(mirrored_name("mFaceEyeAltRight"), "mFaceEyeAltLeft");
    EXPECT_EQ(mirrored_name("L_HAND"), "R_HAND");
    EXPECT_EQ(mirrored_name("R_UPPER_LEG"), "L_UPPER_LEG");
    EXPECT_EQ(mirrored_name("LEFT_PEC"), "RIGHT_PEC");
    EXPECT_EQ(mirrored_name("Alt Left Ear"), "Alt Right Ear");
    EXPECT_EQ(mirrored_name("L Upper Arm"), "R Upper Arm");
    EXPECT_EQ(mirrored_name("mHead"), "mHead");
    EXPECT_EQ(mirrored_name("PELVIS"), "PELVIS");
    for (const char* n : {"mShoulderLeft", "L_HAND", "Top Left", "mLeftRight"})
        EXPECT_EQ(mirrored_name(mirrored_name(n)), n);
}

TEST(MirrorTable, DefaultSkeletonPairsEveryLeftRightBone) {
    const Skeleton& s = sk();
    const MirrorTable t = build_mirror_table(s);
    ASSERT_EQ(t.partner.size(), static_cast<std::size_t>(s.num_joints()));
    std::string unpaired;
    for (int i = 0; i < s.num_joints(); ++i) {
        const int p = t.partner[i];
        if (p >= 0) {
            EXPECT_EQ(t.partner[p], i) << s.name(i);  // an involution
        } else {
            unpaired += " '" + s.name(i) + "'";
        }
        const std::string& n = s.name(i);
        const bool sided = n.find("Left") != std::string::npos || n.find("Right") != std::string::npos;
        if (s.kind(i) == JointKind::Bone && sided) {
            ASSERT_GE(p, 0) << n;
            EXPECT_NE(p, i) << n;
            EXPECT_EQ(s.name(p), mirrored_name(n));
        }
        if (s.kind(i) == JointKind::CollisionVolume && (sided || n.find("LEFT") != std::string::npos ||
                                                        n.find("RIGHT") != std::string::npos ||
                                                        n.starts_with("L_") || n.starts_with("R_"))) {
            ASSERT_GE(p, 0) << n;
            EXPECT_EQ(s.name(p), mirrored_name(n));
        }
    }
    // Spot checks.
    auto pair = [&](const char* a, const char* b) {
        EXPECT_EQ(t.map(s.find(a)), s.find(b)) << a;
    };
    pair("mShoulderLeft", "mShoulderRight");
    pair("mFaceEyeAltLeft", "mFaceEyeAltRight");
    pair("mHipLeft", "mHipRight");    // 2 mm asymmetric in avatar_skeleton.xml
    pair("mKneeLeft", "mKneeRight");  // 3 mm
    pair("L_HAND", "R_HAND");
    pair("LEFT_HANDLE", "RIGHT_HANDLE");
    pair("Left Shoulder", "Right Shoulder");
    for (const char* centre : {"mPelvis", "mTorso", "mHead", "mTail3", "mFaceJaw", "mWingsRoot",
                               "PELVIS", "HEAD", "BELLY", "Chest", "Spine", "Pelvis"})
        EXPECT_EQ(t.map(s.find(centre)), s.find(centre)) << centre;
    // Reported for the record: attachment points whose names pair but whose rest positions in
    // avatar_lad.xml are not mirror images (they cannot be mirrored when animated).
    std::cout << "[ MirrorTable ] joints without a partner in the default skeleton:" << unpaired << "\n";
    for (const auto& r : t.rejected) {
        EXPECT_LT(r.joint, r.candidate);
        std::cout << "[ MirrorTable ]   '" << s.name(r.joint) << "' / '" << s.name(r.candidate)
                  << "': " << r.distance * 1000.f << " mm from mirror images\n";
    }
    for (int i = 0; i < s.num_joints(); ++i)
        if (t.partner[i] < 0) {
            EXPECT_EQ(s.kind(i), JointKind::AttachmentPoint) << s.name(i);
        }
}

TEST(MirrorTable, ToleranceIsAParameter) {
    const Skeleton& s = sk();
    const MirrorTable strict = build_mirror_table(s, 0.001f);
    EXPECT_EQ(strict.map(s.find("mKneeLeft")), -1);  // 3 mm off: refused at 1 mm
    EXPECT_EQ(strict.map(s.find("mShoulderLeft")), s.find("mShoulderRight"));
}

TEST(Mirror, KeysConstraintsPrioritiesAndHandPose) {
    Motion m = sample_motion();
    add_hand_constraint(m);
    m.hand_pose = 6;  // FIST_L
    const Motion before = m;
    ASSERT_TRUE(mirror(m, sk()).value());
    // Tracks move to the partners with their priorities; order and centre joints stay.
    ASSERT_EQ(m.joints.size(), before.joints.size());
    EXPECT_EQ(m.joints[1].name, "mHipRight");
    EXPECT_EQ(m.joints[1].joint, sk().find("mHipRight"));
    EXPECT_EQ(m.joints[1].priority, 3);
    EXPECT_EQ(m.joints[2].name, "mHipLeft");
    EXPECT_EQ(m.joints[3].name, "mShoulderRight");
    EXPECT_EQ(m.joints[3].priority, 4);
    EXPECT_EQ(m.joints[0].name, "mPelvis");
    for (std::size_t j = 0; j < m.joints.size(); ++j) {
        for (std::size_t k = 0; k < m.joints[j].rot_keys.size(); ++k) {
            const Quat a = before.joints[j].rot_keys[k].value, b = m.joints[j].rot_keys[k].value;
            EXPECT_EQ(b, (Quat{-a.x, a.y, -a.z, a.w}));
        }
        for (std::size_t k = 0; k < m.joints[j].pos_keys.size(); ++k) {
            const Vec3 a = before.joints[j].pos_keys[k].value, b = m.joints[j].pos_keys[k].value;
            EXPECT_EQ(b, (Vec3{a.x, -a.y, a.z}));
        }
    }
    const MotionConstraint& c = m.constraints[0];
    EXPECT_EQ(c.source_volume, "R_HAND");
    EXPECT_EQ(c.target_volume, "L_HAND");
    EXPECT_EQ(c.source_offset, (Vec3{0.1f, -0.2f, 0.3f}));
    EXPECT_EQ(c.target_offset, (Vec3{0.f, 0.5f, 0.25f}));
    EXPECT_EQ(m.hand_pose, 9u);  // FIST_R
    reload(m);                    // the mirrored constraint chain is valid
    ASSERT_TRUE(mirror(m, sk()).value());
    EXPECT_EQ(m, before);  // exactly
}

TEST(Mirror, RefusesJointsWithoutPartner) {
    Motion m = sample_motion();
    m.joints.push_back(test::rot_joint("L Upper Arm", {{0.f, 3.f}}));
    ASSERT_GE(m.joints.back().joint, 0);
    const Motion before = m;
    auto r = mirror(m, sk());
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("joint 'L Upper Arm' has no mirror partner (its name pairs it "
                                     "with 'R Upper Arm'"),
              std::string::npos)
        << r.error().message;
    EXPECT_EQ(m, before);
    Motion unknown = sample_motion();
    MotionJoint j;
    j.name = "mNotABone";
    unknown.joints.push_back(j);
    auto u = mirror(unknown, sk());
    ASSERT_FALSE(u.ok());
    EXPECT_NE(u.error().message.find("mNotABone"), std::string::npos);
}

TEST(Mirror, LeftArmWaveBecomesARightArmWave) {
    // A wave: the left shoulder raises the arm, the elbow swings.
    Motion wave = test::motion(
        {test::rot_joint("mShoulderLeft", {{0.f, 0.f}, {0.5f, 60.f}, {1.f, 60.f}}),
         test::rot_joint("mElbowLeft", {{0.f, 0.f}, {0.25f, 40.f}, {0.5f, -10.f}, {0.75f, 40.f}, {1.f, 0.f}})},
        1.f, 3);
    wave.joints[0].rot_keys[1].value = maya_q(70.f, 0.f, 20.f, EulerOrder::XYZ);
    Motion mirrored = wave;
    ASSERT_TRUE(mirror(mirrored, sk()).ok());
    ASSERT_EQ(mirrored.joints[0].name, "mShoulderRight");

    const auto skel = Skeleton::default_skeleton();
    const Skeleton& s = *skel;
    auto play = [&](const Motion& m) {
        World w;
        ik::IkSettings off;
        off.enabled = false;
        IkFeature::of(w).set_default_settings(off);
        const Entity a = w.create_avatar(skel);
        w.controller(a).start(test::clip(m));
        std::vector<ModelPoseCopy> frames;
        for (int f = 0; f < 12; ++f) {
            w.step(f == 0 ? 0.f : 0.08f);
            frames.emplace_back(w.model_pose(a));
        }
        return frames;
    };
    const auto a = play(wave), b = play(mirrored);
    const int lw = s.find("mWristLeft"), rw = s.find("mWristRight");
    float moved = 0.f;
    for (std::size_t f = 0; f < a.size(); ++f) {
        const Vec3 pl = a[f].positions[lw], pr = b[f].positions[rw];
        EXPECT_NEAR(pr.x, pl.x, 1e-4f) << f;
        EXPECT_NEAR(pr.y, -pl.y, 1e-4f) << f;
        EXPECT_NEAR(pr.z, pl.z, 1e-4f) << f;
        // The left arm of the mirrored motion stays at rest.
        EXPECT_NEAR(length(b[f].positions[lw] - b[0].positions[lw]), 0.f, 1e-6f);
        moved = std::max(moved, length(pl - a[0].positions[lw]));
    }
    EXPECT_GT(moved, 0.2f);  // the wave really moves the wrist
}

TEST(Mirror, RealFilesMirrorTwiceIsTheIdentityAndPosesMirror) {
    const auto files = real_anims();
    if (files.empty()) GTEST_SKIP() << "no .anim files in " << SLANIM_SHARED_DIR << "/anims";
    const auto skel = Skeleton::default_skeleton();
    const Skeleton& s = *skel;
    const MirrorTable table = build_mirror_table(s);
    int mirrored = 0, refused = 0, posed = 0;
    for (const fs::path& p : files) {
        auto loaded = load_motion(p.string(), s);
        if (!loaded) continue;
        Motion m = *loaded;
        auto r = mirror(m, s, table);
        if (!r) {
            ++refused;
            std::cout << "[ Mirror ] " << p.filename().string() << ": " << r.error().message << "\n";
            EXPECT_EQ(m, *loaded);
            continue;
        }
        ++mirrored;
        Motion twice = m;
        ASSERT_TRUE(mirror(twice, s, table).ok());
        EXPECT_EQ(twice, *loaded) << p;
        // The mirrored file loads in the viewer.
        const auto bytes = write_anim(encode_motion(m));
        ParseOptions opt;
        opt.skeleton = &s;
        const ParseResult pr = parse_anim(bytes, opt);
        EXPECT_TRUE(pr.ok()) << p << ": " << (pr.first_error() ? pr.first_error()->describe() : "");

        // Poses: the mirrored motion's pose is the mirror image of the original's (every bone
        // and its partner, world positions, no IK), for a few files.
        if (posed >= 12 || m.duration <= 0.f) continue;
        ++posed;
        auto play = [&](const Motion& mm) {
            World w;
            ik::IkSettings off;
            off.enabled = false;
            IkFeature::of(w).set_default_settings(off);
            const Entity a = w.create_avatar(skel);
            w.controller(a).start(MotionClip::build(mm, s, "m"));
            std::vector<ModelPoseCopy> frames;
            for (int f = 0; f < 6; ++f) {
                w.step(f == 0 ? 0.f : m.duration / 6.f);
                frames.emplace_back(w.model_pose(a));
            }
            return frames;
        };
        const auto fa = play(*loaded), fb = play(m);
        float worst = 0.f;
        for (std::size_t f = 0; f < fa.size(); ++f)
            for (int j = 0; j < s.num_bones(); ++j) {
                const Vec3 pa = fa[f].positions[j], pb = fb[f].positions[table.map(j)];
                worst = std::max(worst, length(pb - Vec3{pa.x, -pa.y, pa.z}));
            }
        // The skeleton's own asymmetry (mHipLeft/mHipRight 2 mm, knees 3 mm) shows through.
        EXPECT_LT(worst, 0.005f) << p;
        std::cout << "[ Mirror ] " << p.filename().string() << ": mirrored pose within "
                  << worst * 1000.f << " mm of the original's mirror image\n";
    }
    std::cout << "[ Mirror ] " << mirrored << " real files mirrored, " << refused << " refused, "
              << posed << " pose-checked\n";
    EXPECT_GT(mirrored, 0);
}
