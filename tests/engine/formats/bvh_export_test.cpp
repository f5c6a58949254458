// SPDX-License-Identifier: MIT
// .anim → BVH export (the inverse of the viewer's importer) and its JSON sidecar; the round
// trip anim → bvh → anim through the current importer on Linden's files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

#include "slanim/formats/bvh_export.hpp"
#include "slanim/formats/bvh_import.hpp"
#include "slanim/core/clip.hpp"
#include "slanim/core/sampling.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/anim_codec.hpp"

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

/// The local pose of every skeleton joint a motion sets at curve time t (identity rotation /
/// rest position where it has no keys).
struct Poser {
    std::shared_ptr<const MotionClip> clip;
    SamplingCursor cursor;
    std::vector<Quat> rot;
    std::vector<Vec3> pos;
    Poser(const Motion& m, const Skeleton& s) : clip(MotionClip::build(m, s)) {
        cursor.reset(*clip);
        rot.resize(clip->tracks().size());
        pos.resize(clip->tracks().size());
    }
    void sample(float t, const Skeleton& s, std::vector<Quat>& r, std::vector<Vec3>& p) {
        SamplingJob job{clip.get(), t, &cursor, rot, pos};
        ASSERT_TRUE(job.run());
        r.assign(static_cast<std::size_t>(s.num_joints()), Quat::identity());
        p.assign(static_cast<std::size_t>(s.num_joints()), Vec3{});
        for (std::size_t k = 0; k < clip->tracks().size(); ++k) {
            const ClipTrack& tr = clip->tracks()[k];
            if (tr.usage & kUsageRot) r[static_cast<std::size_t>(tr.joint)] = rot[k];
            if (tr.usage & kUsagePos) p[static_cast<std::size_t>(tr.joint)] = pos[k];
        }
    }
};

struct Diff {
    float rot_deg = 0.f, pos_mm = 0.f;
};

/// Max local rotation / position difference of two motions at the frame times of `bvh`.
Diff compare(const Motion& a, const Motion& b, const Skeleton& s, const BvhMotion& bvh) {
    Poser pa(a, s), pb(b, s);
    std::vector<Quat> ra, rb;
    std::vector<Vec3> qa, qb;
    Diff d;
    for (int f = 1; f < bvh.num_frames; ++f) {
        const float t = std::min(static_cast<float>(f - 1) * bvh.frame_time, a.duration);
        pa.sample(t, s, ra, qa);
        pb.sample(t, s, rb, qb);
        for (std::size_t j = 0; j < ra.size(); ++j) {
            d.rot_deg = std::max(d.rot_deg, angle_deg(ra[j], rb[j]));
            d.pos_mm = std::max(d.pos_mm, length(qa[j] - qb[j]) * 1000.f);
        }
    }
    return d;
}

}  // namespace

TEST(BvhExport, EulerDecompositionInvertsTheImportersComposition) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    const EulerOrder maya_of[6] = {  // channel order reversed (bvhStringToOrder)
        EulerOrder::ZYX, EulerOrder::YZX, EulerOrder::ZXY, EulerOrder::XZY, EulerOrder::YXZ,
        EulerOrder::XYZ};
    for (int o = 0; o < 6; ++o) {
        const auto order = static_cast<BvhRotationOrder>(o);
        for (int i = 0; i < 500; ++i) {
            Quat q{u(rng), u(rng), u(rng), u(rng)};
            const float n = std::sqrt(dot(q, q));
            q = {q.x / n, q.y / n, q.z / n, q.w / n};
            const Vec3 e = bvh_euler_degrees(q, order);
            EXPECT_LT(angle_deg(maya_q(e.x, e.y, e.z, maya_of[o]), q), 2e-3f)
                << bvh_rotation_order_name(order);
        }
        // Gimbal lock: the middle axis at 90°.
        const auto axes = bvh_rotation_channels(order);
        const int mid = static_cast<int>(axes[1]) - static_cast<int>(BvhChannel::Xrotation);
        Vec3 in;
        (mid == 0 ? in.x : mid == 1 ? in.y : in.z) = 90.f;
        const int first = static_cast<int>(axes[0]) - static_cast<int>(BvhChannel::Xrotation);
        (first == 0 ? in.x : first == 1 ? in.y : in.z) = 30.f;
        const Quat g = maya_q(in.x, in.y, in.z, maya_of[o]);
        const Vec3 e = bvh_euler_degrees(g, order);
        EXPECT_LT(angle_deg(maya_q(e.x, e.y, e.z, maya_of[o]), g), 2e-3f) << "gimbal " << o;
    }
    EXPECT_EQ(parse_bvh_rotation_order("zxy"), BvhRotationOrder::ZXY);
    EXPECT_FALSE(parse_bvh_rotation_order("XXY"));
}

TEST(BvhExport, HierarchyIsTheAnimatedJointsAndTheirAncestors) {
    auto skel = Skeleton::default_skeleton();
    Motion m;
    m.duration = 1.f;
    MotionJoint w;
    w.name = "mWristLeft";
    w.joint = skel->find("mWristLeft");
    w.rot_keys = {{0.f, Quat::identity()}, {1.f, quat_from_axis_angle(0.5f, {1, 0, 0})}};
    m.joints.push_back(w);
    auto h = bvh_export_hierarchy(m, *skel);
    ASSERT_TRUE(h) << h.error().message;
    std::vector<std::string> names;
    for (const auto& e : *h) names.push_back(e.name);
    EXPECT_EQ(names, (std::vector<std::string>{"hip", "mSpine1", "mSpine2", "abdomen", "mSpine3",
                                               "mSpine4", "chest", "lCollar", "lShldr",
                                               "lForeArm", "lHand"}));
    EXPECT_TRUE(h->back().end_site);
    EXPECT_FALSE(h->front().positions);  // no pelvis position keys: 3 channels, OFFSET = rest
    EXPECT_NEAR(h->front().offset.y, 1.067f / 0.02540005f, 1e-3f);
    EXPECT_EQ(h->back().order, BvhRotationOrder::ZYX);  // Linden's order for the hands

    BvhExportOptions canon;
    canon.names = BvhJointNames::Canonical;
    canon.rotation_order = BvhRotationOrder::ZXY;
    canon.joint_rotation_orders = {{"lHand", BvhRotationOrder::XYZ}};
    auto c = bvh_export_hierarchy(m, *skel, canon);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->front().name, "mPelvis");
    EXPECT_EQ(c->front().order, BvhRotationOrder::ZXY);
    EXPECT_EQ(c->back().order, BvhRotationOrder::XYZ);

    canon.joint_rotation_orders = {{"noSuchJoint", BvhRotationOrder::XYZ}};
    EXPECT_FALSE(bvh_export_hierarchy(m, *skel, canon));
    Motion empty;
    auto e = bvh_export_hierarchy(empty, *skel);
    ASSERT_FALSE(e);
    EXPECT_NE(e.error().message.find("no joint"), std::string::npos);
    Motion unknown = m;  // joints the skeleton does not know animate nothing: left out
    unknown.joints[0].joint = -1;
    unknown.joints[0].name = "mTail99";
    EXPECT_FALSE(bvh_export_hierarchy(unknown, *skel));
    unknown.joints.push_back(w);
    auto u = bvh_export_hierarchy(unknown, *skel);
    ASSERT_TRUE(u);
    EXPECT_EQ(u->size(), h->size());
    BvhExportOptions bad;
    bad.fps = 0.f;
    EXPECT_FALSE(export_bvh(m, *skel, bad));
}

TEST(BvhExport, SyntheticMotionRoundTripsThroughTheImporter) {
    auto skel = Skeleton::default_skeleton();
    Motion m;
    m.base_priority = 3;
    m.duration = 2.f;
    m.loop_out = 2.f;
    MotionJoint p;
    p.name = "mPelvis";
    p.joint = skel->pelvis();
    p.priority = 3;
    p.rot_keys = {{0.f, Quat::identity()}, {2.f, quat_from_axis_angle(1.f, {0, 0, 1})}};
    p.pos_keys = {{0.f, {0, 0, 0}}, {1.f, {0.3f, -0.1f, 0.05f}}, {2.f, {0.f, 0.2f, 0.f}}};
    MotionJoint k;
    k.name = "mKneeLeft";
    k.joint = skel->find("mKneeLeft");
    k.priority = 3;
    k.rot_keys = {{0.f, quat_from_axis_angle(0.2f, {0, 1, 0})}, {1.f, quat_from_axis_angle(1.2f, {0, 1, 0})},
                  {2.f, quat_from_axis_angle(0.2f, {0, 1, 0})}};
    m.joints = {p, k};
    m = decode_motion(encode_motion(m), *skel);
    auto bvh = export_bvh(m, *skel);
    ASSERT_TRUE(bvh) << bvh.error().message;
    EXPECT_EQ(bvh->num_frames, 62);  // reference + 61 frames at 30 fps over 2 s
    EXPECT_FLOAT_EQ(bvh->frame_time, 2.f / 60.f);
    // The text form parses back to the same model.
    auto reparsed = parse_bvh(write_bvh(*bvh));
    ASSERT_TRUE(reparsed);
    EXPECT_EQ(*reparsed, *bvh);
    BvhImportOptions all;
    all.keep_all_frames = true;
    auto back = import_bvh(*bvh, *skel, all);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_NEAR(back->motion.duration, 2.f, 1e-6f);
    const Diff d = compare(m, back->motion, *skel, *bvh);
    EXPECT_LT(d.rot_deg, 0.02f);
    EXPECT_LT(d.pos_mm, 0.6f);
}

TEST(BvhExport, SidecarRoundTripAndErrors) {
    BvhSidecar s;
    s.priority = 4;
    s.loop = true;
    s.loop_in = 0.25f;
    s.loop_out = 1.3f;
    s.ease_in = 0.1f;
    s.ease_out = 0.7f;
    s.hand_pose = 5;
    s.emote = "express_smile";
    s.duration = 2.5f;
    s.joint_priorities = {{"mHead", 6}, {"mNeck", -1}};
    const std::string text = write_bvh_sidecar(s);
    auto back = parse_bvh_sidecar(text);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(*back, s);
    EXPECT_NE(text.find("\"loop_in\": 0.25"), std::string::npos) << text;

    const auto err = [](const std::string& t) {
        auto r = parse_bvh_sidecar(t);
        EXPECT_FALSE(r) << t;
        return r ? std::string() : r.error().message;
    };
    EXPECT_NE(err(R"({"priority": 7})").find("$.priority: expected an integer 0..6, found 7"), std::string::npos);
    EXPECT_NE(err(R"({"joint_priorities": {"mHead": "high"}})").find("$.joint_priorities.mHead"), std::string::npos);
    EXPECT_NE(err(R"({"prio": 1})").find("$.prio: unknown key"), std::string::npos);
    EXPECT_NE(err(R"({"version": 2})").find("$.version"), std::string::npos);
    EXPECT_NE(err(R"({"loop": 1})").find("$.loop: expected true or false"), std::string::npos);
    EXPECT_NE(err(R"({"ease_in": -1})").find("$.ease_in"), std::string::npos);
    EXPECT_NE(err("{\"loop\": tru").find("byte"), std::string::npos);
    EXPECT_NE(err("[1]").find("$: expected an object"), std::string::npos);

    // Defaults: the sidecar fills only unset options; loop points clamp to the BVH's duration.
    BvhMotion bvh;
    bvh.num_frames = 32;
    bvh.frame_time = 1.f / 30.f;  // duration 1 s
    BvhImportOptions o;
    o.priority = 1;
    apply_bvh_sidecar_defaults(s, bvh, o);
    EXPECT_EQ(o.priority, 1);
    EXPECT_EQ(o.hand_pose, 5u);
    EXPECT_FLOAT_EQ(*o.loop_out, 1.f);
    // Joint priorities shift with the base.
    Motion m;
    m.base_priority = 1;
    m.joints = {MotionJoint{"mHead", 7, 1, {}, {}}, MotionJoint{"mNeck", 8, 1, {}, {}}};
    apply_bvh_sidecar_joint_priorities(s, m);
    EXPECT_EQ(m.joints[0].priority, 3);  // 6 + (1 − 4)
    EXPECT_EQ(m.joints[1].priority, -1);
    EXPECT_EQ(m.max_priority, 3);
}

// The measure of the export: every Linden .anim, exported at 30 fps and imported again with the
// viewer's importer, plays the same local pose at every exported frame time.
TEST(BvhExport, LindenAnimsRoundTripThroughTheCurrentImporter) {
    const fs::path dir = kShared / "anims" / "linden";
    if (!fs::is_directory(dir)) GTEST_SKIP() << "no " << dir << " (../shared is absent)";
    auto skel = Skeleton::default_skeleton();
    int files = 0;
    Diff worst_all, worst_reduced;
    std::string worst_file;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.path().extension() != ".anim") continue;
        auto m = load_motion(entry.path().string(), *skel);
        ASSERT_TRUE(m) << m.error().message;
        bool animated = false;
        for (const auto& j : m->joints) animated |= !j.rot_keys.empty() || !j.pos_keys.empty();
        if (!animated) continue;
        auto bvh = export_bvh(*m, *skel);
        ASSERT_TRUE(bvh) << entry.path() << ": " << bvh.error().message;
        BvhImportOptions all;
        all.keep_all_frames = true;
        all.skip_unknown_joints = false;
        auto full = import_bvh(*bvh, *skel, all);
        ASSERT_TRUE(full) << entry.path() << ": " << full.error().message;
        auto reduced = import_bvh(*bvh, *skel);
        ASSERT_TRUE(reduced) << entry.path() << ": " << reduced.error().message;
        EXPECT_NEAR(full->motion.duration, std::max(m->duration, bvh->frame_time),
                    1e-5f * std::max(1.f, m->duration))
            << entry.path();
        const Diff a = compare(*m, full->motion, *skel, *bvh);
        const Diff r = compare(*m, reduced->motion, *skel, *bvh);
        // Every frame kept: what remains is the U16 quantization of the re-import: a position
        // component moves by up to two steps of 10 m/65535 (serialize floors twice: quantize16,
        // then F32_to_U16), 0.31 mm, so ≤ 0.53 mm for a vector; a rotation component by two
        // steps of 2/65535 (≤ 0.012°); key times by up to two steps of duration/65535, which a
        // fast joint (≈ 500°/s in the dances) turns into ≤ 0.1°. Near a half turn the .anim's
        // w = sqrt(1 − |xyz|²) is ill-conditioned: one step of |xyz|² (≈ 6·10⁻⁵) moves w by up
        // to 0.008, 0.9° (TURN_180's pelvis: 0.82°).
        EXPECT_LT(a.rot_deg, 1.f) << entry.path();
        EXPECT_LT(a.pos_mm, 0.6f) << entry.path();
        // With the viewer's key reduction the error is the reduction's, not the export's: its
        // greedy walk tests only the frame before the current one against the line from the
        // last kept key, so a slow drift followed by a hold is cut by a straight line (e.g.
        // EXPRESS_SAD's mTorso: its key at 6.25 s is dropped).
        // Regression bound only: the measured worst × 1.2 (docs/creator-formats.md).
        EXPECT_LT(r.rot_deg, 9.f) << entry.path();   // measured 7.42° (EXPRESS_ANGER)
        EXPECT_LT(r.pos_mm, 15.f) << entry.path();   // measured 12.56 mm (STRETCH)
        worst_all.rot_deg = std::max(worst_all.rot_deg, a.rot_deg);
        worst_all.pos_mm = std::max(worst_all.pos_mm, a.pos_mm);
        if (r.rot_deg > worst_reduced.rot_deg) worst_file = entry.path().filename().string();
        worst_reduced.rot_deg = std::max(worst_reduced.rot_deg, r.rot_deg);
        worst_reduced.pos_mm = std::max(worst_reduced.pos_mm, r.pos_mm);
        ++files;
    }
    EXPECT_GT(files, 50);
    std::printf("[ measured ] %d files; all frames: %.4f deg %.4f mm; reduced: %.4f deg (%s) %.4f mm\n",
                files, worst_all.rot_deg, worst_all.pos_mm, worst_reduced.rot_deg,
                worst_file.c_str(), worst_reduced.pos_mm);
}
