// SPDX-License-Identifier: MIT
// BVJ (SledjHamr's JSON BVH): reader errors by JSON path, writer round trips, both forms, the
// conversions, and .anim → .bvj → .anim on real files (equal after quantization).
#include <gtest/gtest.h>

#include <cmath>

#include <algorithm>
#include <filesystem>

#include "slanim/formats/bvh_export.hpp"
#include "slanim/formats/bvj.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/anim_codec.hpp"

namespace fs = std::filesystem;
using namespace slanim;

namespace {

const fs::path kShared = SLANIM_SHARED_DIR;

// The proposal's own examples (docs/ClientHamr/BVJ.html), with an SL root name.
const char* kProposalMotion = R"({
    "HIERARCHY":{
        "NAME":"hip",
        "OFFSET":[0.00,0.00,0.00],
        "CHANNELS":["Xposition","Yposition","Zposition","Zrotation","Xrotation","Yrotation"],
        "JOINTS":[
            {
                "NAME": "rThigh",
                "ATTACH": [12, 99],
                "OFFSET": [-3.91, 0.00, 0.00],
                "CHANNELS": ["Zrotation", "Xrotation", "Yrotation"],
                "JOINTS": [
                    {
                        "END": true,
                        "OFFSET": [0.00, -3.46, 0.00]}]}]},
    "MOTION":{
        "Frame Time":0.033333,
        "Frames":[
            [8.03,35.01,88.36,-3.41,14.78,-164.35,13.09,40.30,-24.60],
            [7.81,35.10,86.47,-3.78,12.94,-166.97,12.64,42.57,-22.34],
            [7.51,35.20,85.47,-3.98,11.94,-167.97,11.64,43.57,-21.34]]}})";

const char* kProposalKeyframes = R"({
    "priority": 3, "looped": false,
    "HIERARCHY":{"NAME":"hip","OFFSET":[0,0,0],
        "CHANNELS":["Xposition","Yposition","Zposition","Zrotation","Xrotation","Yrotation"],
        "JOINTS":[{"NAME":"rThigh","PIVOT":[0,0,1],"OFFSET":[-3.91,0,0],
                   "CHANNELS":["Zrotation","Xrotation","Yrotation"]}]},
    "KEYFRAMES":[
        {"AT":0.00, "hip":[0,42.0084,0,-3.41,14.78,-164.35], "rThigh":[13.09,40.30,-24.60]},
        {"AT":0.5, "rThigh":[12.64,42.57,-22.34]},
        {"AT":1.0, "hip":[0,43,2,null,null,null]}]})";

std::string error_of(const std::string& text) {
    auto r = parse_bvj(text);
    EXPECT_FALSE(r) << text;
    return r ? std::string() : r.error().message;
}

}  // namespace

TEST(Bvj, ReadsTheProposalsMotionFormAndRoundTrips) {
    auto m = parse_bvj(kProposalMotion);
    ASSERT_TRUE(m) << m.error().message;
    ASSERT_EQ(m->joints.size(), 2u);
    EXPECT_EQ(m->form, BvjForm::Motion);
    EXPECT_EQ(m->joints[1].attach, (std::vector<std::int64_t>{12, 99}));
    EXPECT_TRUE(m->joints[1].has_end_site);
    EXPECT_EQ(*m->joints[1].end_site_offset, (Vec3{0.f, -3.46f, 0.f}));
    EXPECT_EQ(m->num_frames, 3);
    EXPECT_FLOAT_EQ(m->frames[8], -24.60f);
    const std::string text = write_bvj(*m);
    auto back = parse_bvj(text);
    ASSERT_TRUE(back) << back.error().message << "\n" << text;
    EXPECT_EQ(*back, *m);
    EXPECT_EQ(write_bvj(*back), text);
    // BVH in JSON: the same model as the BVH text, and imported by the same importer.
    auto skel = Skeleton::default_skeleton();
    auto bvh = bvj_to_bvh(*m, *skel);
    ASSERT_TRUE(bvh);
    EXPECT_EQ(bvh_to_bvj(*bvh).frames, m->frames);
    auto via_bvj = import_bvj(*m, *skel);
    auto via_bvh = import_bvh(*bvh, *skel);
    ASSERT_TRUE(via_bvj) << via_bvj.error().message;
    ASSERT_TRUE(via_bvh);
    EXPECT_EQ(via_bvj->motion, via_bvh->motion);
}

TEST(Bvj, KeyframesInterpolateLinearlyPerChannelAndImportAtTheirTimes) {
    auto m = parse_bvj(kProposalKeyframes);
    ASSERT_TRUE(m) << m.error().message;
    EXPECT_EQ(m->form, BvjForm::Keyframes);
    ASSERT_EQ(m->keyframes.size(), 3u);
    EXPECT_EQ(*m->params.priority, 3.0);
    EXPECT_EQ(*m->joints[1].pivot, (Vec3{0, 0, 1}));
    std::vector<float> v;
    sample_bvj_keyframes(*m, 1, 0.25f, v);  // rThigh between AT 0 and AT 0.5
    EXPECT_FLOAT_EQ(v[0], (13.09f + 12.64f) / 2.f);
    sample_bvj_keyframes(*m, 0, 0.5f, v);  // hip: keyed at 0 and 1 (position), rotation at 0
    EXPECT_FLOAT_EQ(v[1], (42.0084f + 43.f) / 2.f);
    EXPECT_FLOAT_EQ(v[3], -3.41f);  // rotation held after its only key
    sample_bvj_keyframes(*m, 1, 2.f, v);
    EXPECT_FLOAT_EQ(v[2], -22.34f);  // held after the last
    auto back = parse_bvj(write_bvj(*m));
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, *m);

    auto skel = Skeleton::default_skeleton();
    auto r = import_bvj(*m, *skel);
    ASSERT_TRUE(r) << r.error().message;
    const Motion& mo = r->motion;
    EXPECT_EQ(mo.base_priority, 3);
    EXPECT_FLOAT_EQ(mo.duration, 1.f);
    ASSERT_EQ(mo.joints.size(), 2u);
    EXPECT_EQ(mo.joints[0].name, "mPelvis");
    EXPECT_EQ(mo.joints[0].rot_keys.size(), 1u);  // null rotation at AT 1
    ASSERT_EQ(mo.joints[0].pos_keys.size(), 2u);
    // Hip positions are absolute: 42.0084 inches up is the rest pelvis height (1.067 m).
    EXPECT_NEAR(mo.joints[0].pos_keys[0].value.z, 0.f, 2e-4f);
    EXPECT_NEAR(mo.joints[0].pos_keys[1].value.x, 2.f * 0.02540005f, 2e-4f);  // BVH +Z → SL +X
    EXPECT_EQ(mo.joints[1].name, "mHipRight");
    ASSERT_EQ(mo.joints[1].rot_keys.size(), 2u);
    EXPECT_NEAR(mo.joints[1].rot_keys[1].time, 0.5f, 1e-4f);
    // The key is the importer's conversion of the channels.
    const Quat want = bvh_rotation_to_sl({40.30f, -24.60f, 13.09f}, BvhRotationOrder::ZXY);
    const Quat got = mo.joints[1].rot_keys[0].value;
    EXPECT_NEAR(std::fabs(dot(want, got)), 1.f, 1e-4f);
    // Both to BVH: sampled with a rest reference frame.
    auto bvh = bvj_to_bvh(*m, *skel, 10.f);
    ASSERT_TRUE(bvh);
    EXPECT_EQ(bvh->num_frames, 12);
    EXPECT_NEAR(bvh->value(0, 0, 1), 1.067f / 0.02540005f, 1e-3f);
}

// A KEYFRAMES file of a few hundred bytes used to sample as many frames as its last AT asked
// for (up to 10^8 values, 400 MB); sampling now stops at an SL animation's 60 s.
TEST(Bvj, SamplingKeyframesIsBoundedBy60Seconds) {
    const auto keyframes = [](const std::string& last_at) {
        return R"({"HIERARCHY":{"NAME":"hip","CHANNELS":["Xposition","Yposition","Zposition",)"
               R"("Zrotation","Xrotation","Yrotation"]},"KEYFRAMES":[{"AT":0,"hip":[0,42,0,0,0,0]},)"
               R"({"AT":)" + last_at + R"(,"hip":[0,42,5,0,90,0]}]})";
    };
    auto skel = Skeleton::default_skeleton();
    auto at_limit = parse_bvj(keyframes("60"));
    ASSERT_TRUE(at_limit) << at_limit.error().message;
    auto bvh = bvj_to_bvh(*at_limit, *skel, 1000.f);
    ASSERT_TRUE(bvh) << bvh.error().message;
    EXPECT_EQ(bvh->num_frames, 60'002);  // reference frame + 60,000 intervals + 1
    for (const char* last : {"60.01", "1000", "999999"}) {
        const std::string text = keyframes(last);
        EXPECT_LT(text.size(), 300u);
        auto m = parse_bvj(text);
        ASSERT_TRUE(m) << m.error().message;
        auto r = bvj_to_bvh(*m, *skel, 30.f);
        ASSERT_FALSE(r) << last << " s sampled to " << r->num_frames << " frames";
        EXPECT_NE(r.error().message.find("$.KEYFRAMES[1].AT: the last keyframe is at "), std::string::npos)
            << r.error().message;
        EXPECT_NE(r.error().message.find("expected at most 60 s"), std::string::npos) << r.error().message;
        EXPECT_NE(r.error().message.find("at most 1802 frames at 30 fps"), std::string::npos) << r.error().message;
    }
    // The MOTION form is not sampled: its frames are the file's own.
    auto motion = parse_bvj(kProposalMotion);
    ASSERT_TRUE(motion);
    EXPECT_TRUE(bvj_to_bvh(*motion, *skel, 1000.f));
}

TEST(Bvj, ErrorsNameTheJsonPath) {
    const auto has = [](const std::string& msg, const std::string& part) {
        EXPECT_NE(msg.find(part), std::string::npos) << msg;
    };
    has(error_of("[]"), "$: expected a BVJ object");
    has(error_of("{\"HIERARCHY\": {\"NAME\": \"hip\", \"CHANNELS\": []}}"), "neither MOTION nor KEYFRAMES");
    has(error_of(R"({"HIERARCHY": {"NAME": "hip", "CHANNELS": ["Xrotation", "Wrotation"]}, "KEYFRAMES": [{"AT": 0}]})"),
        "$.HIERARCHY.CHANNELS[1]: expected a channel name");
    has(error_of(R"({"HIERARCHY": {"NAME": "hip", "CHANNELS": ["Xrotation", "Xrotation"]}, "KEYFRAMES": [{"AT": 0}]})"),
        "$.HIERARCHY.CHANNELS[1]: channel Xrotation is repeated");
    has(error_of(R"({"HIERARCHY": {"NAME": "hip", "CHANNELS": [], "JOINTS": [{"NAME": "a", "CHANNELS": [], "PIVOT": [0, 2, 0]}]}, "KEYFRAMES": [{"AT": 0}]})"),
        "$.HIERARCHY.JOINTS[0].PIVOT[1]");
    has(error_of(R"({"HIERARCHY": {"NAME": "hip", "CHANNELS": [], "JOINTS": [{"NAME": "hip", "CHANNELS": []}]}, "KEYFRAMES": [{"AT": 0}]})"),
        "used twice");
    has(error_of(R"({"HIERARCHY": {"NAME": "hip", "CHANNELS": ["Xrotation"]}, "MOTION": {"Frame Time": 0.1, "Frames": [[1], [1, 2]]}})"),
        "$.MOTION[\"Frames\"][1]: expected an array of 1 numbers");
    has(error_of(R"({"HIERARCHY": {"NAME": "hip", "CHANNELS": ["Xrotation"]}, "MOTION": {"Frame Time": 0, "Frames": [[1]]}})"),
        "$.MOTION[\"Frame Time\"]");
    has(error_of(R"({"HIERARCHY": {"NAME": "hip", "CHANNELS": ["Xrotation"]}, "KEYFRAMES": [{"AT": 1}, {"AT": 0.5}]})"),
        "$.KEYFRAMES[1].AT: 0.5 is not after");
    has(error_of(R"({"HIERARCHY": {"NAME": "hip", "CHANNELS": ["Xrotation"]}, "KEYFRAMES": [{"AT": 0, "neck": [1]}]})"),
        "$.KEYFRAMES[0].neck: no joint");
    has(error_of(R"({"HIERARCHY": {"NAME": "hip", "CHANNELS": ["Xrotation", "Yrotation", "Zrotation"]}, "KEYFRAMES": [{"AT": 0, "hip": [1, null, 2]}]})"),
        "all numbers or all null");
    has(error_of(R"({"loop": true, "HIERARCHY": {"NAME": "hip", "CHANNELS": []}, "KEYFRAMES": [{"AT": 0}]})"),
        "$.loop: unknown key");
    has(error_of(R"({"looped": true, "HIERARCHY": {"NAME": "hip", "CHANNELS": []}, "MOTION": {"looped": false, "Frame Time": 1, "Frames": [[]]}})"),
        "both at the top level and inside MOTION");
    has(error_of(R"({"hand_pose": 15, "HIERARCHY": {"NAME": "hip", "CHANNELS": []}, "KEYFRAMES": [{"AT": 0}]})"),
        "$.hand_pose: expected an integer 0..14");
    has(error_of("{\"HIERARCHY\": "), "byte");
    // Deep nesting is refused without recursion.
    std::string deep = "{\"HIERARCHY\": ";
    for (int i = 0; i < 300; ++i) deep += "{\"NAME\": \"j" + std::to_string(i) + "\", \"CHANNELS\": [], \"JOINTS\": [";
    deep += "{\"END\": true}";
    for (int i = 0; i < 300; ++i) deep += "]}";
    deep += ", \"KEYFRAMES\": [{\"AT\": 0}]}";
    has(error_of(deep), "nested deeper than 256");
    // Parameters inside MOTION (the proposal's second placement) are kept there.
    auto inside = parse_bvj(R"({"HIERARCHY": {"NAME": "hip", "CHANNELS": []}, "MOTION": {"priority": 3.5, "Frame Time": 1, "Frames": [[]]}})");
    ASSERT_TRUE(inside) << inside.error().message;
    EXPECT_TRUE(inside->params_in_motion);
    EXPECT_EQ(*parse_bvj(write_bvj(*inside)), *inside);
    // A fractional priority is kept in the raw model but is not an SL priority.
    auto skel = Skeleton::default_skeleton();
    auto m = parse_bvj(kProposalKeyframes);
    ASSERT_TRUE(m);
    m->params.priority = 3.5;
    auto r = import_bvj(*m, *skel);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("3.5 is not an SL priority"), std::string::npos);
}

TEST(Bvj, LindenAnimsRoundTripThroughKeyframesEqualAfterQuantization) {
    const fs::path dir = kShared / "anims" / "linden";
    if (!fs::is_directory(dir)) GTEST_SKIP() << "no " << dir << " (../shared is absent)";
    auto skel = Skeleton::default_skeleton();
    int files = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.path().extension() != ".anim") continue;
        auto m0 = load_motion(entry.path().string(), *skel);
        ASSERT_TRUE(m0) << m0.error().message;
        bool animated = false;
        for (const auto& j : m0->joints) animated |= !j.rot_keys.empty() || !j.pos_keys.empty();
        if (!animated) continue;
        auto bvj = export_bvj(*m0, *skel);
        ASSERT_TRUE(bvj) << entry.path() << ": " << bvj.error().message;
        const std::string text = write_bvj(*bvj);
        auto parsed = parse_bvj(text);
        ASSERT_TRUE(parsed) << entry.path() << ": " << parsed.error().message;
        EXPECT_EQ(*parsed, *bvj) << entry.path();
        auto back = import_bvj(*parsed, *skel);
        ASSERT_TRUE(back) << entry.path() << ": " << back.error().message;
        // What the viewer holds after loading the original and saving it again. Joint order:
        // the BVJ's hierarchy (skeleton) order.
        Motion want = decode_motion(encode_motion(*m0), *skel);
        const auto by_joint = [](const MotionJoint& x, const MotionJoint& y) { return x.joint < y.joint; };
        std::stable_sort(want.joints.begin(), want.joints.end(), by_joint);
        // Joints without keys, and joints the skeleton does not know, are not exported.
        std::erase_if(want.joints, [](const MotionJoint& j) {
            return j.joint < 0 || (j.rot_keys.empty() && j.pos_keys.empty());
        });
        std::stable_sort(back->motion.joints.begin(), back->motion.joints.end(), by_joint);
        EXPECT_EQ(back->motion, want) << entry.path();
        if (back->motion != want) {
            for (std::size_t j = 0; j < std::min(want.joints.size(), back->motion.joints.size()); ++j)
                if (!(want.joints[j] == back->motion.joints[j])) {
                    const MotionJoint &a = want.joints[j], &b = back->motion.joints[j];
                    std::string d = a.name + ": priority " + std::to_string(a.priority) + "/" +
                                    std::to_string(b.priority) + " keys " + std::to_string(a.rot_keys.size()) +
                                    "/" + std::to_string(b.rot_keys.size());
                    for (std::size_t k = 0; k < std::min(a.rot_keys.size(), b.rot_keys.size()); ++k)
                        if (!(a.rot_keys[k] == b.rot_keys[k])) {
                            d += " rot key " + std::to_string(k) + " t " + std::to_string(a.rot_keys[k].time) + "/" +
                                 std::to_string(b.rot_keys[k].time) + " x " + std::to_string(a.rot_keys[k].value.x) +
                                 "/" + std::to_string(b.rot_keys[k].value.x) + " y " + std::to_string(a.rot_keys[k].value.y) +
                                 "/" + std::to_string(b.rot_keys[k].value.y) + " z " + std::to_string(a.rot_keys[k].value.z) +
                                 "/" + std::to_string(b.rot_keys[k].value.z) + " w " + std::to_string(a.rot_keys[k].value.w) +
                                 "/" + std::to_string(b.rot_keys[k].value.w);
                            break;
                        }
                    for (std::size_t k = 0; k < std::min(a.pos_keys.size(), b.pos_keys.size()); ++k)
                        if (!(a.pos_keys[k] == b.pos_keys[k])) {
                            d += " pos key " + std::to_string(k);
                            break;
                        }
                    ADD_FAILURE() << "first differing joint " << d;
                    break;
                }
        }
        ++files;
    }
    EXPECT_GT(files, 50);
}

TEST(Bvj, MotionFormExportImportsLikeTheBvhExport) {
    const fs::path file = kShared / "anims" / "linden" / "WALK.anim";
    if (!fs::exists(file)) GTEST_SKIP() << "no " << file;
    auto skel = Skeleton::default_skeleton();
    auto m0 = load_motion(file.string(), *skel);
    ASSERT_TRUE(m0);
    BvjExportOptions o;
    o.form = BvjForm::Motion;
    auto bvj = export_bvj(*m0, *skel, o);
    ASSERT_TRUE(bvj) << bvj.error().message;
    auto bvh = export_bvh(*m0, *skel);
    ASSERT_TRUE(bvh);
    EXPECT_EQ(bvj->frames, bvh->values);
    auto a = import_bvj(*parse_bvj(write_bvj(*bvj)), *skel);
    auto b = import_bvh(*bvh, *skel);
    ASSERT_TRUE(a) << a.error().message;
    ASSERT_TRUE(b);
    ASSERT_EQ(a->motion.joints.size(), b->motion.joints.size());
    for (std::size_t j = 0; j < a->motion.joints.size(); ++j) {
        EXPECT_EQ(a->motion.joints[j].rot_keys, b->motion.joints[j].rot_keys);
        EXPECT_EQ(a->motion.joints[j].pos_keys, b->motion.joints[j].pos_keys);
    }
    EXPECT_EQ(a->motion.loop, m0->loop);
    EXPECT_EQ(a->motion.base_priority, m0->base_priority);
    EXPECT_FLOAT_EQ(a->motion.ease_in, m0->ease_in);
}

// Regression (fuzz campaign 2026-11-25, bvj target): a value that underflows to −0 was written
// as "-0", which reads back as +0, so writing twice gave different text.
TEST(Bvj, NegativeZeroIsWrittenAsZeroSoWritingIsIdempotent) {
    const std::string text = R"({"HIERARCHY": {"NAME": "hip", "OFFSET": [0, 0, 0],
        "CHANNELS": ["Zrotation", "Xrotation", "Yrotation"], "JOINTS": [{"END": true, "OFFSET": [0, 1, 0]}]},
        "MOTION": {"Frame Time": 0.1, "Frames": [[-2166.93e-327, -0.0, 1]]}})";
    auto m = parse_bvj(text);
    ASSERT_TRUE(m.ok()) << m.error().message;
    EXPECT_TRUE(std::signbit(m->frames[0]));  // the reader keeps what the number was
    const std::string once = write_bvj(*m);
    auto again = parse_bvj(once);
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(*again, *m);
    EXPECT_EQ(write_bvj(*again), once);
    EXPECT_EQ(once.find("-0,"), std::string::npos) << once;
}
