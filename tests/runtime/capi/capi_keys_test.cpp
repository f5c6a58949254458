// SPDX-License-Identifier: MIT
// The C API's .anim keys (slanim_motion_joint*, slanim_motion_emote, slanim_anim_encode[_nearest]) and
// skeleton rest data (slanim_skeleton_rest_pose, slanim_skeleton_joint_end) against the C++
// modules they wrap: the same values bit for bit, the same bytes, and each error.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "capi_test_util.hpp"
#include "slanim/core/quantize.hpp"

namespace slanim {
namespace {

using namespace capi_test;

struct MotionPtr {
    slanim_motion* m = nullptr;
    ~MotionPtr() { slanim_motion_destroy(m); }
};

/// Reads every joint entry of a C motion back as C API key arrays.
struct CJoint {
    std::string name;
    slanim_motion_joint_info info{};
    std::vector<float> rot, pos;
};
std::vector<CJoint> read_joints(const slanim_motion* m) {
    int32_t count = 0;
    EXPECT_EQ(slanim_motion_joint_entries(m, &count), SLANIM_OK);
    std::vector<CJoint> out(static_cast<std::size_t>(count));
    for (int32_t i = 0; i < count; ++i) {
        CJoint& j = out[static_cast<std::size_t>(i)];
        char name[128];
        std::size_t needed = 0;
        EXPECT_EQ(slanim_motion_joint(m, i, &j.info, name, sizeof name, &needed), SLANIM_OK);
        j.name = name;
        j.rot.resize(5 * static_cast<std::size_t>(j.info.num_rot_keys));
        j.pos.resize(4 * static_cast<std::size_t>(j.info.num_pos_keys));
        EXPECT_EQ(slanim_motion_joint_keys(m, i, j.rot.data(), j.rot.size(), j.pos.data(), j.pos.size()),
                  SLANIM_OK);
    }
    return out;
}

TEST(CApiAnimKeys, KeysAreTheDecodedMotionsAndEncodeWritesTheViewersBytes) {
    SKIP_WITHOUT(kDance);
    const std::vector<std::uint8_t> bytes = read_or_skip(kDance);
    MotionPtr m;
    ASSERT_EQ(slanim_motion_load(bytes.data(), bytes.size(), nullptr, &m.m), SLANIM_OK);
    const Motion cpp = decode_motion(parse_anim(bytes).motion, *Skeleton::default_skeleton());
    const std::vector<CJoint> joints = read_joints(m.m);
    ASSERT_EQ(joints.size(), cpp.joints.size());
    for (std::size_t i = 0; i < joints.size(); ++i) {
        const MotionJoint& e = cpp.joints[i];
        EXPECT_EQ(joints[i].name, e.name);
        EXPECT_EQ(joints[i].info.joint, e.joint);
        EXPECT_EQ(joints[i].info.priority, e.priority);
        ASSERT_EQ(joints[i].rot.size(), 5 * e.rot_keys.size());
        for (std::size_t k = 0; k < e.rot_keys.size(); ++k) {
            const float want[5] = {e.rot_keys[k].time, e.rot_keys[k].value.x, e.rot_keys[k].value.y,
                                   e.rot_keys[k].value.z, e.rot_keys[k].value.w};
            EXPECT_EQ(std::memcmp(&joints[i].rot[5 * k], want, sizeof want), 0) << e.name << " key " << k;
        }
    }
    // Encode the keys back: the bytes of encode_motion + write_anim on the decoded motion.
    std::vector<slanim_anim_joint> cj;
    for (const CJoint& j : joints)
        cj.push_back({j.name.c_str(), j.info.priority, j.rot.data(), j.rot.size() / 5, j.pos.data(), j.pos.size() / 4});
    slanim_anim_header h{cpp.base_priority, cpp.duration, cpp.loop ? 1 : 0, cpp.loop_in, cpp.loop_out,
                         cpp.ease_in, cpp.ease_out, static_cast<int32_t>(cpp.hand_pose), cpp.emote_name.c_str()};
    std::size_t needed = 0;
    ASSERT_EQ(slanim_anim_encode(&h, cj.data(), cj.size(), nullptr, nullptr, 0, &needed),
              SLANIM_ERROR_BUFFER_TOO_SMALL);
    std::vector<std::uint8_t> out(needed);
    ASSERT_EQ(slanim_anim_encode(&h, cj.data(), cj.size(), nullptr, out.data(), out.size(), &needed), SLANIM_OK);
    Motion no_constraints = cpp;
    no_constraints.constraints.clear();
    EXPECT_EQ(out, write_anim(encode_motion(no_constraints)));
    char emote[64];
    ASSERT_EQ(slanim_motion_emote(m.m, emote, sizeof emote, &needed), SLANIM_OK);
    EXPECT_EQ(std::string(emote), cpp.emote_name);
}

TEST(CApiAnimKeys, EncodeNearestGivesUnchangedKeysTheirOwnCodes) {
    SKIP_WITHOUT(kDance);
    const std::vector<std::uint8_t> bytes = read_or_skip(kDance);
    MotionPtr m;
    ASSERT_EQ(slanim_motion_load(bytes.data(), bytes.size(), nullptr, &m.m), SLANIM_OK);
    const Motion cpp = decode_motion(parse_anim(bytes).motion, *Skeleton::default_skeleton());
    const std::vector<CJoint> joints = read_joints(m.m);
    std::vector<slanim_anim_joint> cj;
    for (const CJoint& j : joints)
        cj.push_back({j.name.c_str(), j.info.priority, j.rot.data(), j.rot.size() / 5, j.pos.data(), j.pos.size() / 4});
    slanim_anim_header h{cpp.base_priority, cpp.duration, cpp.loop ? 1 : 0, cpp.loop_in, cpp.loop_out,
                         cpp.ease_in, cpp.ease_out, static_cast<int32_t>(cpp.hand_pose), cpp.emote_name.c_str()};
    std::vector<std::uint8_t> out(bytes.size() * 2 + 1024);
    std::size_t needed = 0;
    ASSERT_EQ(slanim_anim_encode_nearest(&h, cj.data(), cj.size(), nullptr, out.data(), out.size(), &needed),
              SLANIM_OK);
    out.resize(needed);
    const RawMotion a = parse_anim(bytes).motion, b = parse_anim(out).motion;
    ASSERT_EQ(a.joints.size(), b.joints.size());
    // Every code comes back, but for the two codes that both decode to 0 (the zero snap).
    const auto same = [](std::uint16_t x, std::uint16_t y, float lo, float hi) {
        return x == y || (u16_to_f32(x, lo, hi) == 0.f && u16_to_f32(y, lo, hi) == 0.f);
    };
    int rot_keys = 0;
    for (std::size_t i = 0; i < a.joints.size(); ++i) {
        const RawJoint &x = a.joints[i], &y = b.joints[i];
        ASSERT_EQ(x.name, y.name);
        ASSERT_EQ(x.rot_keys.size(), y.rot_keys.size());
        ASSERT_EQ(x.pos_keys.size(), y.pos_keys.size());
        for (std::size_t k = 0; k < x.rot_keys.size(); ++k, ++rot_keys) {
            const RawKey &p = x.rot_keys[k], &q = y.rot_keys[k];
            EXPECT_TRUE(p.time == q.time && same(p.x, q.x, kRotMin, kRotMax) && same(p.y, q.y, kRotMin, kRotMax) &&
                        same(p.z, q.z, kRotMin, kRotMax)) << x.name << " rotation key " << k;
        }
        for (std::size_t k = 0; k < x.pos_keys.size(); ++k) {
            const RawKey &p = x.pos_keys[k], &q = y.pos_keys[k];
            const float r = kMaxPelvisOffset;
            EXPECT_TRUE(p.time == q.time && same(p.x, q.x, -r, r) && same(p.y, q.y, -r, r) && same(p.z, q.z, -r, r))
                << x.name << " position key " << k;
        }
    }
    EXPECT_GT(rot_keys, 100);
    // The viewer's floor encoding of the same keys does not give every code back (why the
    // nearest variant exists); its errors are the same.
    const RawMotion floor = encode_motion(decode_motion(a, *Skeleton::default_skeleton()));
    int moved = 0;
    for (std::size_t i = 0; i < a.joints.size() && i < floor.joints.size(); ++i)
        for (std::size_t k = 0; k < a.joints[i].rot_keys.size() && k < floor.joints[i].rot_keys.size(); ++k)
            moved += a.joints[i].rot_keys[k].x != floor.joints[i].rot_keys[k].x;
    EXPECT_GT(moved, 0);
    const float far[] = {0.f, 0.f, 0.f, 6.f};
    const slanim_anim_joint pelvis{"mPelvis", -1, nullptr, 0, far, 1};
    EXPECT_EQ(slanim_anim_encode_nearest(&h, &pelvis, 1, nullptr, out.data(), out.size(), &needed),
              SLANIM_ERROR_OUT_OF_RANGE);
}

TEST(CApiAnimKeys, EncodeRefusesWhatItWouldHaveToChange) {
    const float rot[] = {0.f, 0.f, 0.f, 0.f, 1.f, 1.f, 0.f, 0.f, 0.f, 1.f};
    const float far[] = {0.f, 0.f, 0.f, 6.f};  // 6 m: beyond the format's ±5 m
    const float back[] = {1.f, 0.f, 0.f, 0.f, 1.f, 0.5f, 0.f, 0.f, 0.f, 1.f};
    const float zero[] = {0.f, 0.f, 0.f, 0.f, 0.f};
    slanim_anim_header h{2, 1.f, 0, 0.f, 1.f, 0.3f, 0.3f, 1, nullptr};
    std::vector<std::uint8_t> out(4096);
    std::size_t needed = 0;
    auto encode = [&](const slanim_anim_joint& j) {
        return slanim_anim_encode(&h, &j, 1, nullptr, out.data(), out.size(), &needed);
    };
    EXPECT_EQ(encode({"mHead", -1, rot, 2, nullptr, 0}), SLANIM_OK);
    EXPECT_EQ(encode({"mPelvis", -1, nullptr, 0, far, 1}), SLANIM_ERROR_OUT_OF_RANGE);
    EXPECT_NE(std::string(slanim_last_error()).find("'mPelvis'"), std::string::npos) << slanim_last_error();
    EXPECT_EQ(encode({"mHead", -1, back, 2, nullptr, 0}), SLANIM_ERROR_OUT_OF_RANGE);  // times go back
    EXPECT_EQ(encode({"mHead", -1, zero, 1, nullptr, 0}), SLANIM_ERROR_INVALID_DATA);
    EXPECT_EQ(encode({"NOT_A_JOINT", -1, rot, 2, nullptr, 0}), SLANIM_ERROR_INVALID_DATA);
    EXPECT_EQ(encode({"mHead", 7, rot, 2, nullptr, 0}), SLANIM_ERROR_OUT_OF_RANGE);
    const slanim_anim_joint twice[] = {{"mHead", -1, rot, 2, nullptr, 0}, {"mHead", -1, rot, 2, nullptr, 0}};
    EXPECT_EQ(slanim_anim_encode(&h, twice, 2, nullptr, out.data(), out.size(), &needed), SLANIM_ERROR_INVALID_DATA);
    h.duration = 0.5f;  // the second key (1 s) is past the duration
    EXPECT_EQ(encode({"mHead", -1, rot, 2, nullptr, 0}), SLANIM_ERROR_OUT_OF_RANGE);
    h.duration = 1.f;
    h.priority = 9;
    EXPECT_EQ(encode({"mHead", -1, rot, 2, nullptr, 0}), SLANIM_ERROR_OUT_OF_RANGE);
    EXPECT_EQ(slanim_anim_encode(nullptr, nullptr, 0, nullptr, out.data(), out.size(), &needed),
              SLANIM_ERROR_NULL_ARGUMENT);
}

TEST(CApiAnimKeys, RestPoseAndBoneEndsAreTheSkeletons) {
    SkeletonPtr s;
    ASSERT_EQ(slanim_skeleton_default(&s.s), SLANIM_OK);
    const auto sk = Skeleton::default_skeleton();
    std::size_t needed = 0;
    ASSERT_EQ(slanim_skeleton_rest_pose(s.s, nullptr, 0, &needed), SLANIM_ERROR_BUFFER_TOO_SMALL);
    ASSERT_EQ(needed, 7u * static_cast<std::size_t>(sk->num_joints()));
    std::vector<float> rest(needed);
    ASSERT_EQ(slanim_skeleton_rest_pose(s.s, rest.data(), rest.size(), &needed), SLANIM_OK);
    for (int j = 0; j < sk->num_joints(); ++j) {
        const Vec3 p = sk->rest_positions()[static_cast<std::size_t>(j)];
        const Quat q = sk->rest_rotations()[static_cast<std::size_t>(j)];
        const float* o = &rest[7 * static_cast<std::size_t>(j)];
        EXPECT_TRUE(o[0] == p.x && o[1] == p.y && o[2] == p.z && o[3] == q.x && o[6] == q.w) << sk->name(j);
        float end[3];
        ASSERT_EQ(slanim_skeleton_joint_end(s.s, j, end), SLANIM_OK);
        EXPECT_EQ(end[2], sk->desc(j).end.z);
    }
    float end[3];
    EXPECT_EQ(slanim_skeleton_joint_end(s.s, sk->num_joints(), end), SLANIM_ERROR_OUT_OF_RANGE);
}

}  // namespace
}  // namespace slanim
