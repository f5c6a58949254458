// SPDX-License-Identifier: MIT
// Skeleton description, numbering, aliases and XML errors (spec §7.1, §7.2, §7.4).
#include <filesystem>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "slanim/core/skeleton.hpp"
#include "slanim/formats/skeleton_xml.hpp"

namespace slanim {
namespace {

bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

const Skeleton& sk() { return *Skeleton::default_skeleton(); }

TEST(Skeleton, DefaultCounts) {
    const SkeletonDesc& d = default_skeleton_desc();
    EXPECT_EQ(d.bones.size(), 133u);
    EXPECT_EQ(d.volumes.size(), 26u);
    EXPECT_EQ(d.attachments.size(), 55u);
    ASSERT_NE(Skeleton::default_skeleton(), nullptr);
    EXPECT_EQ(Skeleton::default_skeleton(), Skeleton::default_skeleton());  // built once
    EXPECT_EQ(sk().num_bones(), 133);
    EXPECT_EQ(sk().num_volumes(), 26);
    EXPECT_EQ(sk().num_attachments(), 55);
    EXPECT_EQ(sk().num_joints(), 214);
}

TEST(Skeleton, JointNumbersNamesParents) {
    struct Expect {
        const char* name;
        int joint_num;
        const char* parent;  // nullptr: no parent
        JointKind kind;
    };
    const Expect table[] = {
        {"mPelvis", 0, nullptr, JointKind::Bone},
        {"mSpine1", 1, "mPelvis", JointKind::Bone},
        {"mTorso", 3, "mSpine2", JointKind::Bone},
        {"mChest", 6, "mSpine4", JointKind::Bone},
        {"mHead", 8, "mNeck", JointKind::Bone},
        {"mFaceRoot", 12, "mHead", JointKind::Bone},
        {"mCollarLeft", 58, "mChest", JointKind::Bone},
        {"mWristLeft", 61, "mElbowLeft", JointKind::Bone},
        {"mHipRight", 107, "mPelvis", JointKind::Bone},
        {"mToeLeft", 116, "mFootLeft", JointKind::Bone},
        {"mHindLimb4Right", 132, "mHindLimb3Right", JointKind::Bone},
        {"PELVIS", 133, "mPelvis", JointKind::CollisionVolume},
        {"BELLY", 135, "mTorso", JointKind::CollisionVolume},
        {"HEAD", 144, "mHead", JointKind::CollisionVolume},
        {"L_FOOT", 158, "mAnkleLeft", JointKind::CollisionVolume},
        {"Chest", 159, "mChest", JointKind::AttachmentPoint},
        {"Left Shoulder", 161, "mCollarLeft", JointKind::AttachmentPoint},
        {"Center 2", 189, nullptr, JointKind::AttachmentPoint},
        {"Avatar Center", 198, nullptr, JointKind::AttachmentPoint},
        {"Right Hind Foot", 213, "mHindLimb4Right", JointKind::AttachmentPoint},
    };
    for (const Expect& e : table) {
        SCOPED_TRACE(e.name);
        const int j = sk().find(e.name);
        ASSERT_GE(j, 0);
        EXPECT_EQ(sk().name(j), e.name);
        EXPECT_EQ(sk().joint_num(j), e.joint_num);
        EXPECT_EQ(sk().kind(j), e.kind);
        if (e.parent) {
            ASSERT_GE(sk().parent(j), 0);
            EXPECT_EQ(sk().name(sk().parent(j)), e.parent);
        } else {
            EXPECT_EQ(sk().parent(j), -1);
        }
    }
    // With the viewer's files the joint index is the joint number.
    for (int j = 0; j < sk().num_joints(); ++j) EXPECT_EQ(sk().joint_num(j), j);
    const int chest = sk().find("Chest");
    EXPECT_EQ(sk().desc(chest).attachment_id, 1);
    EXPECT_EQ(sk().desc(chest).attachment_group, 6);
    EXPECT_TRUE(sk().desc(sk().find("Top Left")).hud);
    EXPECT_FALSE(sk().desc(chest).hud);
}

TEST(Skeleton, ParentsPrecedeChildren) {
    ASSERT_EQ(sk().parents().size(), static_cast<std::size_t>(sk().num_joints()));
    EXPECT_EQ(sk().parent(sk().pelvis()), -1);
    for (int j = 1; j < sk().num_joints(); ++j) EXPECT_LT(sk().parent(j), j) << sk().name(j);
    for (int j = 1; j < sk().num_bones() + sk().num_volumes(); ++j) EXPECT_GE(sk().parent(j), 0);
}

TEST(Skeleton, RestPose) {
    EXPECT_EQ(sk().rest_positions()[0], (Vec3{0.f, 0.f, 0.f}));
    EXPECT_EQ(sk().default_position(0), (Vec3{0.f, 0.f, 1.067f}));
    EXPECT_EQ(sk().pivot(0), (Vec3{0.f, 0.f, 1.067015f}));
    const int hip = sk().find("mHipLeft");
    EXPECT_EQ(sk().rest_positions()[hip], (Vec3{0.034f, 0.127f, -0.041f}));
    EXPECT_EQ(sk().rest_rotations()[hip], Quat::identity());
    const int vol = sk().find("CHEST");
    EXPECT_EQ(sk().rest_scales()[vol], (Vec3{0.11f, 0.15f, 0.2f}));
    EXPECT_EQ(sk().rest_rotations()[vol], maya_q(0.f, -10.f, 0.f, EulerOrder::XYZ));
    const float d2r = 0.017453292519943295769236907684886f;
    const int att = sk().find("Chest");
    EXPECT_EQ(sk().rest_positions()[att], (Vec3{0.15f, 0.f, -0.1f}));
    EXPECT_EQ(sk().rest_rotations()[att], quat_from_roll_pitch_yaw(0.f, 90.f * d2r, 90.f * d2r));
    EXPECT_EQ(sk().rest_scales()[att], (Vec3{1.f, 1.f, 1.f}));
}

TEST(Skeleton, Aliases) {
    EXPECT_EQ(sk().find("hip"), sk().find("mPelvis"));
    EXPECT_EQ(sk().find("mPelvis"), 0);
    EXPECT_EQ(sk().name(sk().find("lThigh")), "mHipLeft");
    EXPECT_EQ(sk().name(sk().find("rFoot")), "mAnkleRight");
    EXPECT_EQ(sk().name(sk().find("figureHair")), "mSkull");
    EXPECT_EQ(sk().name(sk().find("avatar_mChest")), "mChest");
    EXPECT_EQ(sk().name(sk().find("avatar_mHindLimb4Left")), "mHindLimb4Left");
    EXPECT_EQ(sk().find("Left_Shoulder"), sk().find("Left Shoulder"));
    EXPECT_EQ(sk().name(sk().find("Left_Shoulder")), "Left Shoulder");
    EXPECT_EQ(sk().name(sk().find("Right_Hind_Foot")), "Right Hind Foot");
    EXPECT_EQ(sk().name(sk().find("PELVIS")), "PELVIS");
    EXPECT_EQ(sk().find("nope"), -1);
    EXPECT_EQ(sk().find(""), -1);
    EXPECT_EQ(sk().find("mscreen"), -1);
    EXPECT_EQ(sk().find("mRoot"), -1);

    EXPECT_EQ(sk().find_collision_volume("L_FOOT"), 158);
    EXPECT_EQ(sk().find_collision_volume("mPelvis"), -1);
    EXPECT_EQ(sk().find_collision_volume("Chest"), -1);
    EXPECT_EQ(sk().find_collision_volume("l_foot"), -1);
}

TEST(Skeleton, CharacterFolderMatchesEmbeddedDefault) {
    const std::filesystem::path dir = SLANIM_SHARED_DIR "/sl-character";
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        GTEST_SKIP() << "the shared reference folder (../shared) is absent: " << dir.string()
                     << " not found";
    const Result<SkeletonDesc> desc = load_skeleton_desc(dir);
    ASSERT_TRUE(desc.ok()) << desc.error().describe();
    EXPECT_TRUE(*desc == default_skeleton_desc());
    const Result<std::shared_ptr<const Skeleton>> loaded = load_skeleton(dir);
    ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
    EXPECT_EQ((*loaded)->num_joints(), 214);
}

TEST(Skeleton, LoadMissingFolder) {
    const Result<SkeletonDesc> r = load_skeleton_desc("/nonexistent/slanim-character");
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(contains(r.error().message, "/nonexistent/slanim-character/avatar_skeleton.xml"))
        << r.error().message;
}

// --- XML errors -------------------------------------------------------------------------------

constexpr std::string_view kSkeletonXml = R"(<linden_skeleton num_bones="2" num_collision_volumes="1" version="2.0">
  <bone name="mPelvis" aliases="hip" pos="0 0 1" rot="0 0 0" scale="1 1 1" pivot="0 0 1" support="base">
    <collision_volume name="PELVIS" pos="0 0 0" rot="0 8 0" scale="0.1 0.1 0.1"/>
    <bone name="mTorso" pos="0 0 0.1" rot="0 0 0" scale="1 1 1" pivot="0 0 0.1" group="Torso"/>
  </bone>
</linden_skeleton>
)";

constexpr std::string_view kLadXml = R"(<?xml version="1.0" encoding="us-ascii"?>
<linden_avatar version="2.0">
  <skeleton file_name="avatar_skeleton.xml">
    <attachment_point id="2" group="5" name="Head Top" joint="mTorso" position="0 0 0.1" rotation="0 0 90"/>
    <attachment_point id="1" name="Center" joint="mScreen" position="0 0 0" rotation="0 0 0" hud="true"/>
  </skeleton>
</linden_avatar>
)";

TEST(SkeletonXml, ParsesSmallFiles) {
    Result<SkeletonDesc> d = parse_skeleton_xml(kSkeletonXml);
    ASSERT_TRUE(d.ok()) << d.error().describe();
    ASSERT_EQ(d->bones.size(), 2u);
    ASSERT_EQ(d->volumes.size(), 1u);
    EXPECT_EQ(d->bones[0].parent, "");
    EXPECT_EQ(d->bones[0].group, "global");
    EXPECT_FALSE(d->bones[0].extended);
    EXPECT_EQ(d->bones[1].parent, "mPelvis");
    EXPECT_EQ(d->bones[1].group, "Torso");
    EXPECT_EQ(d->volumes[0].parent, "mPelvis");
    ASSERT_TRUE(parse_attachment_points(kLadXml, *d).ok());
    ASSERT_EQ(d->attachments.size(), 2u);
    EXPECT_EQ(d->attachments[0].name, "Center");  // sorted by id
    EXPECT_TRUE(d->attachments[0].hud);
    EXPECT_EQ(d->attachments[1].attachment_group, 5);

    const auto s = Skeleton::build(*d);
    ASSERT_TRUE(s.ok()) << s.error().describe();
    EXPECT_EQ((*s)->joint_num((*s)->find("Center")), 3);
    EXPECT_EQ((*s)->joint_num((*s)->find("Head_Top")), 4);
    EXPECT_EQ((*s)->parent((*s)->find("Center")), -1);
    EXPECT_EQ((*s)->name((*s)->parent((*s)->find("Head Top"))), "mTorso");
}

TEST(SkeletonXml, MalformedXml) {
    const auto r = parse_skeleton_xml("<linden_skeleton>\n<bone name=\"a\"\n</linden_skeleton>");
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(contains(r.error().message, "malformed XML")) << r.error().message;
    EXPECT_GT(r.error().line, 0);
    EXPECT_FALSE(parse_skeleton_xml("").ok());
    EXPECT_FALSE(parse_skeleton_xml("<other/>").ok());
}

TEST(SkeletonXml, MissingPos) {
    std::string xml(kSkeletonXml);
    xml.replace(xml.find(R"(pos="0 0 0.1" )"), 14, "");
    const auto r = parse_skeleton_xml(xml);
    ASSERT_FALSE(r.ok());
    const std::string msg = r.error().describe();
    EXPECT_TRUE(contains(msg, "<bone name=\"mTorso\">")) << msg;
    EXPECT_TRUE(contains(msg, "'pos'")) << msg;
    EXPECT_TRUE(contains(msg, "(line 4)")) << msg;
}

TEST(SkeletonXml, BadVector) {
    std::string xml(kSkeletonXml);
    xml.replace(xml.find(R"(scale="0.1 0.1 0.1")"), 19, R"(scale="1 2")");
    auto r = parse_skeleton_xml(xml);
    ASSERT_FALSE(r.ok());
    std::string msg = r.error().describe();
    EXPECT_TRUE(contains(msg, "<collision_volume name=\"PELVIS\">")) << msg;
    EXPECT_TRUE(contains(msg, "'scale'")) << msg;
    EXPECT_TRUE(contains(msg, "\"1 2\"")) << msg;
    EXPECT_TRUE(contains(msg, "expected 3 numbers")) << msg;
    EXPECT_EQ(r.error().line, 3);

    for (const char* bad : {"1 2 3 4", "1 2 x", "1,2,3", "1 2 3x", "nan 0 0", "1e99 0 0", "+1 2 3"}) {
        std::string x(kSkeletonXml);
        x.replace(x.find(R"(scale="0.1 0.1 0.1")"), 19, std::string("scale=\"") + bad + "\"");
        EXPECT_FALSE(parse_skeleton_xml(x).ok()) << bad;
    }
    std::string ok(kSkeletonXml);
    ok.replace(ok.find(R"(scale="0.1 0.1 0.1")"), 19, R"(scale="  -1.5e-1	2 3 ")");
    r = parse_skeleton_xml(ok);
    ASSERT_TRUE(r.ok()) << r.error().describe();
    EXPECT_EQ(r->volumes[0].scale, (Vec3{-0.15f, 2.f, 3.f}));
}

TEST(SkeletonXml, UnknownAttachmentParent) {
    Result<SkeletonDesc> d = parse_skeleton_xml(kSkeletonXml);
    ASSERT_TRUE(d.ok());
    std::string lad(kLadXml);
    lad.replace(lad.find("mTorso"), 6, "mNoSuchBone");
    ASSERT_TRUE(parse_attachment_points(lad, *d).ok());  // parents are resolved by build
    const auto s = Skeleton::build(*d);
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(contains(s.error().message, "Head Top")) << s.error().message;
    EXPECT_TRUE(contains(s.error().message, "unknown parent joint 'mNoSuchBone'")) << s.error().message;
}

TEST(SkeletonXml, AttachmentErrors) {
    SkeletonDesc d;
    std::string lad(kLadXml);
    lad.replace(lad.find(R"(id="2" )"), 7, "");
    auto r = parse_attachment_points(lad, d);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(contains(r.error().describe(), "<attachment_point name=\"Head Top\">: missing required attribute 'id' (line 4)"))
        << r.error().describe();
    r = parse_attachment_points("<linden_avatar/>", d);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(contains(r.error().message, "<skeleton>")) << r.error().message;
}

TEST(SkeletonBuild, Errors) {
    const SkeletonDesc base = *parse_skeleton_xml(kSkeletonXml);

    SkeletonDesc d = base;
    d.bones[1].parent = "mNope";
    auto s = Skeleton::build(d);
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(contains(s.error().message, "unknown parent bone 'mNope'")) << s.error().message;

    d = base;
    d.bones[1].name = "mPelvis";
    s = Skeleton::build(d);
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(contains(s.error().message, "duplicate")) << s.error().message;

    d = base;
    std::swap(d.bones[0], d.bones[1]);  // child before parent
    EXPECT_FALSE(Skeleton::build(d).ok());

    d = base;
    JointDesc att;
    att.kind = JointKind::AttachmentPoint;
    att.name = "Far";
    att.parent = "mRoot";
    att.attachment_id = kMaxAnimatedJoints;  // joint number 2 + 1 + 216 - 1
    d.attachments.push_back(att);
    s = Skeleton::build(d);
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(contains(s.error().message, "joint number")) << s.error().message;

    EXPECT_FALSE(Skeleton::build(SkeletonDesc{}).ok());
}

TEST(SkeletonDesc, Equality) {
    SkeletonDesc a = default_skeleton_desc();
    EXPECT_TRUE(a == default_skeleton_desc());
    a.volumes[3].scale.y += 1e-6f;
    EXPECT_FALSE(a == default_skeleton_desc());
}

}  // namespace
}  // namespace slanim
