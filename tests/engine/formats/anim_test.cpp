// SPDX-License-Identifier: MIT
// Unit tests of the .anim codec (spec §1, §11.2) on small files built byte by byte in the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slanim/formats/anim.hpp"
#include "slanim/core/clip.hpp"
#include "slanim/core/math.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/quantize.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/anim_codec.hpp"

namespace slanim {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// ---------------------------------------------------------------------------------------------
// A tiny little-endian byte builder, independent of the codec under test.
class LeBytes {
public:
    [[nodiscard]] std::size_t pos() const { return b_.size(); }
    void u8(std::uint8_t v) { b_.push_back(v); }
    void u16(std::uint16_t v) {
        u8(static_cast<std::uint8_t>(v & 0xFFu));
        u8(static_cast<std::uint8_t>(v >> 8));
    }
    void u32(std::uint32_t v) {
        for (int i = 0; i < 4; ++i) u8(static_cast<std::uint8_t>((v >> (8 * i)) & 0xFFu));
    }
    void s32(std::int32_t v) { u32(static_cast<std::uint32_t>(v)); }
    void f32(float v) { u32(std::bit_cast<std::uint32_t>(v)); }
    void vec3(Vec3 v) {
        f32(v.x);
        f32(v.y);
        f32(v.z);
    }
    void cstr(std::string_view s) {
        for (char c : s) u8(static_cast<std::uint8_t>(c));
        u8(0);
    }
    void raw(std::span<const std::uint8_t> bytes) { b_.insert(b_.end(), bytes.begin(), bytes.end()); }
    void fixed16(const std::array<char, 16>& a) {
        for (char c : a) u8(static_cast<std::uint8_t>(c));
    }
    std::vector<std::uint8_t> take() { return std::move(b_); }

private:
    std::vector<std::uint8_t> b_;
};

std::array<char, 16> field16(std::string_view s) {
    std::array<char, 16> a{};
    std::copy_n(s.begin(), std::min<std::size_t>(s.size(), 16), a.begin());
    return a;
}

// ---------------------------------------------------------------------------------------------
// A description of one .anim file. Defaults give the minimal valid file used throughout.
struct KeySpec {
    std::uint16_t t = 0, x = 32767, y = 32767, z = 32767;
};
struct LegacyKeySpec {
    float t = 0.f;
    Vec3 v;
};
struct JointSpec {
    std::string name = "mPelvis";
    std::int32_t priority = 3;
    std::vector<KeySpec> rot{KeySpec{}};
    std::vector<KeySpec> pos{KeySpec{}};
    std::vector<LegacyKeySpec> legacy_rot, legacy_pos;  // used when the file is version 0.1
    std::optional<std::int32_t> rot_count, pos_count;  // override the stored counts
};
struct ConstraintSpec {
    std::uint8_t chain_length = 1;
    std::uint8_t type = 0;
    std::array<char, 16> source = field16("L_HAND");
    Vec3 source_offset{0.1f, 0.f, 0.f};
    std::array<char, 16> target = field16("GROUND");
    Vec3 target_offset{0.f, 0.f, 0.2f};
    Vec3 target_dir{};
    float ease_in_start = 0.f, ease_in_stop = 0.25f, ease_out_start = 0.75f, ease_out_stop = 1.f;
};
struct AnimSpec {
    std::uint16_t version = 1, sub_version = 0;
    std::int32_t base_priority = 3;
    float duration = 1.f;
    std::string emote;
    float loop_in = 0.f, loop_out = 1.f;
    std::int32_t loop = 0;
    float ease_in = 0.5f, ease_out = 0.5f;
    std::uint32_t hand_pose = 1;
    std::optional<std::uint32_t> num_joints;  // override the stored count
    std::vector<JointSpec> joints{JointSpec{}};
    std::optional<std::int32_t> num_constraints;  // override the stored count
    std::vector<ConstraintSpec> constraints;
    std::vector<std::uint8_t> trailing;
};

// The bytes plus the byte offset of every field ("duration", "joint0.name", "joint0.rot1",
// "c0.type", ...). Keys are recorded as one field each.
struct Built {
    std::vector<std::uint8_t> bytes;
    std::map<std::string, std::size_t> at;

    [[nodiscard]] long long off(const std::string& field) const {
        const auto it = at.find(field);
        EXPECT_NE(it, at.end()) << "the builder has no field " << field;
        return it == at.end() ? -2 : static_cast<long long>(it->second);
    }
};

Built build(const AnimSpec& s) {
    LeBytes b;
    Built out;
    auto mark = [&](const std::string& name) { out.at[name] = b.pos(); };
    const bool legacy = s.version == 0 && s.sub_version == 1;
    mark("version");
    b.u16(s.version);
    mark("sub_version");
    b.u16(s.sub_version);
    mark("base_priority");
    b.s32(s.base_priority);
    mark("duration");
    b.f32(s.duration);
    mark("emote");
    b.cstr(s.emote);
    mark("loop_in");
    b.f32(s.loop_in);
    mark("loop_out");
    b.f32(s.loop_out);
    mark("loop");
    b.s32(s.loop);
    mark("ease_in");
    b.f32(s.ease_in);
    mark("ease_out");
    b.f32(s.ease_out);
    mark("hand_pose");
    b.u32(s.hand_pose);
    mark("num_joints");
    b.u32(s.num_joints.value_or(static_cast<std::uint32_t>(s.joints.size())));
    for (std::size_t j = 0; j < s.joints.size(); ++j) {
        const JointSpec& js = s.joints[j];
        const std::string p = "joint" + std::to_string(j) + ".";
        mark(p + "name");
        b.cstr(js.name);
        mark(p + "priority");
        b.s32(js.priority);
        for (const bool rot : {true, false}) {
            const std::string kind = rot ? "rot" : "pos";
            mark(p + "num_" + kind);
            if (legacy) {
                const auto& keys = rot ? js.legacy_rot : js.legacy_pos;
                b.s32((rot ? js.rot_count : js.pos_count)
                          .value_or(static_cast<std::int32_t>(keys.size())));
                for (std::size_t k = 0; k < keys.size(); ++k) {
                    mark(p + kind + std::to_string(k));
                    b.f32(keys[k].t);
                    b.vec3(keys[k].v);
                }
            } else {
                const auto& keys = rot ? js.rot : js.pos;
                b.s32((rot ? js.rot_count : js.pos_count)
                          .value_or(static_cast<std::int32_t>(keys.size())));
                for (std::size_t k = 0; k < keys.size(); ++k) {
                    mark(p + kind + std::to_string(k));
                    b.u16(keys[k].t);
                    b.u16(keys[k].x);
                    b.u16(keys[k].y);
                    b.u16(keys[k].z);
                }
            }
        }
    }
    mark("num_constraints");
    b.s32(s.num_constraints.value_or(static_cast<std::int32_t>(s.constraints.size())));
    for (std::size_t c = 0; c < s.constraints.size(); ++c) {
        const ConstraintSpec& cs = s.constraints[c];
        const std::string p = "c" + std::to_string(c) + ".";
        mark(p + "chain_length");
        b.u8(cs.chain_length);
        mark(p + "type");
        b.u8(cs.type);
        mark(p + "source_volume");
        b.fixed16(cs.source);
        mark(p + "source_offset");
        b.vec3(cs.source_offset);
        mark(p + "target_volume");
        b.fixed16(cs.target);
        mark(p + "target_offset");
        b.vec3(cs.target_offset);
        mark(p + "target_dir");
        b.vec3(cs.target_dir);
        mark(p + "ease_in_start");
        b.f32(cs.ease_in_start);
        mark(p + "ease_in_stop");
        b.f32(cs.ease_in_stop);
        mark(p + "ease_out_start");
        b.f32(cs.ease_out_start);
        mark(p + "ease_out_stop");
        b.f32(cs.ease_out_stop);
    }
    if (!s.trailing.empty()) mark("trailing");
    b.raw(s.trailing);
    out.bytes = b.take();
    return out;
}

// The chain that a constraint on L_HAND with chain length n needs animated: the ancestors of
// the volume, nearest first (mWristLeft, mElbowLeft, mShoulderLeft, mCollarLeft, mChest, ...).
std::vector<std::string> l_hand_chain(int n) {
    const Skeleton& sk = *Skeleton::default_skeleton();
    std::vector<std::string> names;
    int j = sk.find_collision_volume("L_HAND");
    for (int i = 0; i <= n; ++i) {
        j = sk.parent(j);
        names.push_back(sk.name(j));
    }
    return names;
}

// A valid file with one constraint on L_HAND (chain length `chain`) and the joints it needs.
AnimSpec constrained_spec(int chain = 1) {
    AnimSpec s;
    s.joints.clear();
    for (const std::string& n : l_hand_chain(chain)) {
        JointSpec j;
        j.name = n;
        s.joints.push_back(j);
    }
    ConstraintSpec c;
    c.chain_length = static_cast<std::uint8_t>(chain);
    s.constraints.push_back(c);
    return s;
}

ParseResult parse(const Built& b, const ParseOptions& opt = {}) { return parse_anim(b.bytes, opt); }

std::vector<const Diagnostic*> with_rule(const ParseResult& r, std::string_view rule) {
    std::vector<const Diagnostic*> out;
    for (const auto& d : r.diagnostics)
        if (d.rule == rule) out.push_back(&d);
    return out;
}

std::string dump(const ParseResult& r) {
    std::string s;
    for (const auto& d : r.diagnostics) s += "\n  " + d.describe();
    return s.empty() ? std::string("\n  (no diagnostics)") : s;
}

// The file is rejected, with exactly one error of `rule` at byte `offset` (plus, possibly,
// follow-up errors of other rules).
void expect_reject(const ParseResult& r, std::string_view rule, long long offset) {
    EXPECT_FALSE(r.ok()) << "expected a reject by [" << rule << "]" << dump(r);
    const auto found = with_rule(r, rule);
    ASSERT_EQ(found.size(), 1u) << "expected one [" << rule << "] diagnostic" << dump(r);
    EXPECT_EQ(found[0]->severity, Severity::Error) << found[0]->describe();
    EXPECT_EQ(found[0]->offset, offset) << found[0]->describe();
    EXPECT_NE(found[0]->describe().find("at byte " + std::to_string(offset)), std::string::npos)
        << found[0]->describe();
}

// The file is accepted, with a warning of `rule` at byte `offset`.
void expect_warning(const ParseResult& r, std::string_view rule, long long offset) {
    EXPECT_TRUE(r.ok()) << "expected an accepted file" << dump(r);
    EXPECT_EQ(r.count(Severity::Error), 0u) << dump(r);
    const auto found = with_rule(r, rule);
    ASSERT_EQ(found.size(), 1u) << "expected one [" << rule << "] diagnostic" << dump(r);
    EXPECT_EQ(found[0]->severity, Severity::Warning) << found[0]->describe();
    EXPECT_EQ(found[0]->offset, offset) << found[0]->describe();
}

// True when `text` names "byte N" (and not a longer number that starts with N).
bool names_byte(const std::string& text, std::size_t n) {
    const std::string needle = "byte " + std::to_string(n);
    for (std::size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) {
        const std::size_t e = p + needle.size();
        if (e == text.size() || !std::isdigit(static_cast<unsigned char>(text[e]))) return true;
    }
    return false;
}

const Skeleton& skel() { return *Skeleton::default_skeleton(); }

Motion decode(const AnimSpec& s) {
    const ParseResult r = parse_anim(build(s).bytes);
    EXPECT_TRUE(r.ok()) << dump(r);
    return decode_motion(r.motion, skel());
}

// =============================================================================================
// Minimal file, layout and round trip

TEST(AnimFormat, MinimalFileLayoutMatchesSpec) {
    const Built b = build(AnimSpec{});
    // §1.2: 2+2+4+4 header, "" emote (1 byte), 5×4 loop/ease, hand pose, joint count, then
    // "mPelvis\0", priority, 1 rotation key, 1 position key, constraint count.
    EXPECT_EQ(b.off("emote"), 12);
    EXPECT_EQ(b.off("loop_in"), 13);
    EXPECT_EQ(b.off("hand_pose"), 33);
    EXPECT_EQ(b.off("num_joints"), 37);
    EXPECT_EQ(b.off("joint0.name"), 41);
    EXPECT_EQ(b.off("joint0.priority"), 49);
    EXPECT_EQ(b.off("joint0.rot0"), 57);
    EXPECT_EQ(b.off("joint0.pos0"), 69);
    EXPECT_EQ(b.off("num_constraints"), 77);
    EXPECT_EQ(b.bytes.size(), 81u);
    // Little-endian: version 1 is 01 00, duration 1.0f is 00 00 80 3F.
    EXPECT_EQ(b.bytes[0], 1);
    EXPECT_EQ(b.bytes[1], 0);
    EXPECT_EQ(b.bytes[11], 0x3F);
    EXPECT_EQ(b.bytes[10], 0x80);
}

TEST(AnimFormat, MinimalFileParsesAndWritesBackByteIdentical) {
    const Built b = build(AnimSpec{});
    const ParseResult r = parse(b);
    ASSERT_TRUE(r.ok()) << dump(r);
    EXPECT_TRUE(r.has_motion);
    EXPECT_TRUE(r.diagnostics.empty()) << dump(r);
    const RawMotion& m = r.motion;
    EXPECT_EQ(m.version, 1);
    EXPECT_EQ(m.sub_version, 0);
    EXPECT_EQ(m.base_priority, 3);
    EXPECT_EQ(m.duration, 1.f);
    EXPECT_EQ(m.emote_name, "");
    EXPECT_EQ(m.loop_out, 1.f);
    EXPECT_EQ(m.ease_in, 0.5f);
    EXPECT_EQ(m.hand_pose, 1u);
    ASSERT_EQ(m.joints.size(), 1u);
    EXPECT_EQ(m.joints[0].name, "mPelvis");
    EXPECT_EQ(m.joints[0].priority, 3);
    ASSERT_EQ(m.joints[0].rot_keys.size(), 1u);
    EXPECT_EQ(m.joints[0].rot_keys[0], (RawKey{0, 32767, 32767, 32767}));
    EXPECT_EQ(m.joints[0].pos_keys.size(), 1u);
    EXPECT_EQ(m.num_constraints, 0);
    EXPECT_TRUE(m.trailing.empty());
    EXPECT_EQ(write_anim(m), b.bytes);
}

TEST(AnimFormat, RichFileRoundTripsByteIdentical) {
    // Constraints with junk after the NUL of the volume names, several joints and keys,
    // an emote, and trailing bytes: every byte must survive parse → write.
    AnimSpec s = constrained_spec(1);
    s.emote = "express_smile";
    s.loop = 1;
    s.loop_in = 0.25f;
    s.loop_out = 0.75f;
    s.constraints[0].source = {'L', '_', 'H', 'A', 'N', 'D', 0, 'j', 'u', 'n', 'k', 0, 0, 0, 0, 7};
    s.constraints[0].type = 1;
    ConstraintSpec c2;
    c2.chain_length = 0;
    c2.target = field16("R_HAND");
    s.constraints.push_back(c2);
    s.joints[0].rot = {{0, 100, 200, 300}, {30000, 40000, 30000, 33000}, {65535, 1, 2, 3}};
    s.joints[1].pos = {};
    s.trailing = {0xDE, 0xAD, 0xBE, 0xEF};
    const Built b = build(s);
    const ParseResult r = parse(b);
    ASSERT_TRUE(r.ok()) << dump(r);
    ASSERT_EQ(r.motion.constraints.size(), 2u);
    EXPECT_EQ(r.motion.constraints[0].source_name(), "L_HAND");
    EXPECT_EQ(r.motion.constraints[1].target_name(), "R_HAND");
    EXPECT_EQ(r.motion.trailing, s.trailing);
    EXPECT_EQ(write_anim(r.motion), b.bytes);
}

// =============================================================================================
// Reject rules, in the order of spec §1.5

TEST(AnimReject, Version) {
    for (auto [v, sv] : {std::pair<int, int>{2, 0}, {1, 1}, {0, 0}, {0, 2}, {256, 0}}) {
        AnimSpec s;
        s.version = static_cast<std::uint16_t>(v);
        s.sub_version = static_cast<std::uint16_t>(sv);
        const ParseResult r = parse(build(s));
        expect_reject(r, "version", 0);
        EXPECT_FALSE(r.has_motion) << v << "." << sv;  // structural: nothing else is read
        EXPECT_EQ(r.diagnostics.size(), 1u) << dump(r);
    }
}

TEST(AnimReject, BasePriorityBelowMinusOne) {
    AnimSpec s;
    s.base_priority = -2;
    const Built b = build(s);
    expect_reject(parse(b), "base-priority", b.off("base_priority"));
    s.base_priority = -1;  // −1 itself is allowed
    EXPECT_TRUE(parse(build(s)).ok());
}

TEST(AnimReject, Duration) {
    for (const float d : {60.0001f, 61.f, kNaN, kInf, -kInf}) {
        AnimSpec s;
        s.duration = d;
        const Built b = build(s);
        expect_reject(parse(b), "duration", b.off("duration"));
    }
    AnimSpec s;
    s.duration = 60.f;  // exactly the limit is fine
    EXPECT_TRUE(parse(build(s)).ok());
}

TEST(AnimReject, EmoteNamingTheMotionItself) {
    AnimSpec s;
    s.emote = "0123ABCD-0000-1111-2222-333344445555";
    ParseOptions opt;
    opt.asset_id = "0123abcd-0000-1111-2222-333344445555";  // compared case-insensitively
    const Built b = build(s);
    expect_reject(parse(b, opt), "emote-self", b.off("emote"));
    // Without the asset id it is just an emote that starts another asset.
    EXPECT_TRUE(parse(b).ok());
}

TEST(AnimReject, LoopPointsNotFinite) {
    {
        AnimSpec s;
        s.emote = "express_smile";  // moves the fields: offsets must follow
        s.loop_in = kNaN;
        const Built b = build(s);
        expect_reject(parse(b), "loop-in", b.off("loop_in"));
    }
    {
        AnimSpec s;
        s.loop_out = kNaN;
        const Built b = build(s);
        expect_reject(parse(b), "loop-out", b.off("loop_out"));
    }
    {
        AnimSpec s;
        s.loop_out = -kInf;
        const Built b = build(s);
        expect_reject(parse(b), "loop-out", b.off("loop_out"));
    }
}

TEST(AnimReject, EaseNotFinite) {
    {
        AnimSpec s;
        s.ease_in = kInf;
        const Built b = build(s);
        expect_reject(parse(b), "ease-in", b.off("ease_in"));
    }
    {
        AnimSpec s;
        s.ease_out = kNaN;
        const Built b = build(s);
        expect_reject(parse(b), "ease-out", b.off("ease_out"));
    }
}

TEST(AnimReject, HandPose) {
    AnimSpec s;
    s.hand_pose = 15;
    const Built b = build(s);
    expect_reject(parse(b), "hand-pose", b.off("hand_pose"));
    s.hand_pose = 0xFFFFFFFFu;
    expect_reject(parse(build(s)), "hand-pose", b.off("hand_pose"));
}

TEST(AnimReject, NumJoints) {
    {
        AnimSpec s;
        s.joints.clear();
        const Built b = build(s);
        const ParseResult r = parse(b);
        expect_reject(r, "num-joints", b.off("num_joints"));
        EXPECT_TRUE(r.has_motion);  // semantic: the rest of the file was still read
    }
    {
        AnimSpec s;
        s.num_joints = 217;  // only one joint follows: the read also ends up truncated
        const Built b = build(s);
        const ParseResult r = parse(b);
        expect_reject(r, "num-joints", b.off("num_joints"));
        EXPECT_EQ(r.first_error()->rule, "num-joints");
    }
    {
        AnimSpec s;
        s.joints.assign(216, JointSpec{});  // the limit itself is fine
        s.joints[0].name = "mTorso";
        const ParseResult r = parse(build(s));
        EXPECT_EQ(r.count(Severity::Error), 0u) << dump(r);
    }
}

TEST(AnimReject, SpecialJoints) {
    for (const char* name : {"mRoot", "mScreen"}) {
        AnimSpec s;
        s.joints.push_back(JointSpec{});
        s.joints[1].name = name;
        const Built b = build(s);
        const ParseResult r = parse(b);
        expect_reject(r, "joint-special", b.off("joint1.name"));
        EXPECT_EQ(with_rule(r, "joint-special")[0]->joint, 1);
    }
}

TEST(AnimReject, UnknownJointOnlyForUpload) {
    AnimSpec s;
    s.joints.push_back(JointSpec{});
    s.joints[1].name = "mNotABone";
    const Built b = build(s);
    // Playback (allow_invalid_joints = true, the default): a warning.
    expect_warning(parse(b), "joint-unknown", b.off("joint1.name"));
    // Upload (allow_invalid_joints = false): an error.
    ParseOptions upload;
    upload.allow_invalid_joints = false;
    expect_reject(parse(b, upload), "joint-unknown", b.off("joint1.name"));
    // Aliases, collision volumes and attachment points are joints, not unknown names.
    for (const char* name : {"hip", "avatar_mChest", "L_FOOT", "Left_Shoulder", "Chest"}) {
        s.joints[1].name = name;
        const ParseResult r = parse(build(s), upload);
        EXPECT_TRUE(r.ok()) << name << dump(r);
    }
}

TEST(AnimReject, JointPriorityBelowMinusOne) {
    AnimSpec s;
    s.joints.push_back(JointSpec{});
    s.joints[1].name = "mChest";
    s.joints[1].priority = -2;
    const Built b = build(s);
    expect_reject(parse(b), "joint-priority", b.off("joint1.priority"));
}

TEST(AnimReject, NegativeKeyCounts) {
    {
        AnimSpec s;
        s.joints[0].rot_count = -1;
        s.joints[0].rot.clear();
        const Built b = build(s);
        const ParseResult r = parse(b);
        expect_reject(r, "rot-key-count", b.off("joint0.num_rot"));
    }
    {
        AnimSpec s;
        s.joints[0].pos_count = std::numeric_limits<std::int32_t>::min();
        s.joints[0].pos.clear();
        const Built b = build(s);
        expect_reject(parse(b), "pos-key-count", b.off("joint0.num_pos"));
    }
}

TEST(AnimReject, RotationKeyTimeOutsideDuration) {
    // A negative duration passes the duration check (no lower bound), but then no key time
    // is inside [0, duration]: code 65535 decodes to −1 s (< 0), code 0 to 0 s (> duration).
    AnimSpec s;
    s.duration = -1.f;
    s.joints[0].rot = {{65535, 32767, 32767, 32767}, {0, 32767, 32767, 32767}};
    const Built b = build(s);
    const ParseResult r = parse(b);
    EXPECT_FALSE(r.ok());
    const auto found = with_rule(r, "rot-key-time");
    ASSERT_EQ(found.size(), 2u) << dump(r);
    for (int k = 0; k < 2; ++k) {
        EXPECT_EQ(found[k]->severity, Severity::Error);
        EXPECT_EQ(found[k]->joint, 0);
        EXPECT_EQ(found[k]->key, k);
        EXPECT_EQ(found[k]->offset, b.off("joint0.rot" + std::to_string(k)));
    }
    EXPECT_NE(found[0]->message.find("-1 s"), std::string::npos) << found[0]->describe();
    EXPECT_EQ(with_rule(r, "duration-negative").size(), 1u);
    // With a positive duration every code is inside [0, duration].
    s.duration = 1.f;
    EXPECT_TRUE(parse(build(s)).ok());
    // Position key times are not range-checked (§1.5 step 13).
    s.joints[0].rot = {};
    s.joints[0].pos = {{0, 1, 2, 3}, {65535, 1, 2, 3}};
    EXPECT_EQ(parse(build(s)).count(Severity::Error), 0u);
}

TEST(AnimReject, ConstraintChainLongerThanTheMotion) {
    AnimSpec s = constrained_spec(1);
    s.constraints[0].chain_length = 3;  // > 2 joints
    const Built b = build(s);
    expect_reject(parse(b), "constraint-chain-length", b.off("c0.chain_length"));
}

TEST(AnimReject, ConstraintType) {
    AnimSpec s = constrained_spec(1);
    s.constraints[0].type = 2;
    const Built b = build(s);
    expect_reject(parse(b), "constraint-type", b.off("c0.type"));
    s.constraints[0].type = 1;  // PLANE
    EXPECT_TRUE(parse(build(s)).ok());
}

TEST(AnimReject, ConstraintVolumes) {
    {
        AnimSpec s = constrained_spec(1);
        s.constraints[0].source = field16("L_HANDS");
        const Built b = build(s);
        expect_reject(parse(b), "constraint-source-volume", b.off("c0.source_volume"));
    }
    {
        // GROUND is only a target, never a source.
        AnimSpec s = constrained_spec(1);
        s.constraints[0].source = field16("GROUND");
        const Built b = build(s);
        expect_reject(parse(b), "constraint-source-volume", b.off("c0.source_volume"));
    }
    {
        AnimSpec s = constrained_spec(1);
        s.constraints[0].target = field16("ground");
        const Built b = build(s);
        expect_reject(parse(b), "constraint-target-volume", b.off("c0.target_volume"));
        s.constraints[0].target = field16("R_FOOT");
        EXPECT_TRUE(parse(build(s)).ok());
    }
    {
        // The 16 bytes are NUL-terminated at 16: a full field with no NUL is a 16-character
        // name, which no volume has.
        AnimSpec s = constrained_spec(1);
        s.constraints[0].target = field16("RIGHT_HANDLE____");
        const Built b = build(s);
        expect_reject(parse(b), "constraint-target-volume", b.off("c0.target_volume"));
    }
}

TEST(AnimReject, ConstraintValuesNotFinite) {
    const std::vector<std::pair<const char*, void (*)(ConstraintSpec&)>> cases = {
        {"c0.source_offset", [](ConstraintSpec& c) { c.source_offset.y = kNaN; }},
        {"c0.target_offset", [](ConstraintSpec& c) { c.target_offset.z = kInf; }},
        {"c0.target_dir", [](ConstraintSpec& c) { c.target_dir.x = kNaN; }},
        {"c0.ease_in_start", [](ConstraintSpec& c) { c.ease_in_start = kNaN; }},
        {"c0.ease_in_stop", [](ConstraintSpec& c) { c.ease_in_stop = -kInf; }},
        {"c0.ease_out_start", [](ConstraintSpec& c) { c.ease_out_start = kNaN; }},
        {"c0.ease_out_stop", [](ConstraintSpec& c) { c.ease_out_stop = kInf; }},
    };
    for (const auto& [field, mutate] : cases) {
        SCOPED_TRACE(field);
        AnimSpec s = constrained_spec(1);
        mutate(s.constraints[0]);
        const Built b = build(s);
        const ParseResult r = parse(b);
        expect_reject(r, "constraint-finite", b.off(field));
        EXPECT_EQ(with_rule(r, "constraint-finite")[0]->constraint, 0);
    }
}

TEST(AnimReject, ConstraintChainJointNotAnimated) {
    AnimSpec s = constrained_spec(2);
    // Drop mShoulderLeft (third ancestor) but keep three joints so the chain length is legal.
    s.joints[2].name = "mHead";
    const Built b = build(s);
    const ParseResult r = parse(b);
    expect_reject(r, "constraint-chain-joint", b.off("c0.source_volume"));
    EXPECT_NE(with_rule(r, "constraint-chain-joint")[0]->message.find("mShoulderLeft"),
              std::string::npos)
        << dump(r);
}

TEST(AnimReject, ConstraintWithAnUnknownJointInTheMotion) {
    AnimSpec s = constrained_spec(1);
    JointSpec unknown;
    unknown.name = "mNotABone";
    s.joints.insert(s.joints.begin(), unknown);
    const Built b = build(s);
    const ParseResult r = parse(b);  // playback: the unknown joint alone is only a warning
    EXPECT_EQ(with_rule(r, "joint-unknown").size(), 1u);
    EXPECT_EQ(with_rule(r, "joint-unknown")[0]->severity, Severity::Warning);
    expect_reject(r, "constraint-invalid-joint", b.off("c0.source_volume"));
}

TEST(AnimReject, SemanticErrorsAreAllListedInFileOrder) {
    AnimSpec s;
    s.base_priority = -5;
    s.hand_pose = 99;
    s.joints[0].priority = -3;
    const Built b = build(s);
    const ParseResult r = parse(b);
    EXPECT_TRUE(r.has_motion);
    ASSERT_EQ(r.count(Severity::Error), 3u) << dump(r);
    EXPECT_EQ(r.first_error()->rule, "base-priority");
    EXPECT_EQ(r.diagnostics[1].rule, "hand-pose");
    EXPECT_EQ(r.diagnostics[2].rule, "joint-priority");
}

// =============================================================================================
// Truncation

TEST(AnimTruncation, EveryPrefixOfTheMinimalFileIsATruncationAtItsEnd) {
    const Built b = build(AnimSpec{});
    // Every field start, keys as whole fields: a truncated field is reported at its start.
    std::vector<std::size_t> starts;
    for (const auto& [name, off] : b.at) starts.push_back(off);
    std::sort(starts.begin(), starts.end());
    for (std::size_t n = 0; n < b.bytes.size(); ++n) {
        SCOPED_TRACE("truncated at byte " + std::to_string(n));
        const ParseResult r =
            parse_anim(std::span<const std::uint8_t>(b.bytes.data(), n));
        EXPECT_FALSE(r.ok());
        EXPECT_FALSE(r.has_motion);
        const auto t = with_rule(r, "truncated");
        ASSERT_EQ(t.size(), 1u) << dump(r);
        EXPECT_EQ(t[0]->severity, Severity::Error);
        EXPECT_TRUE(names_byte(t[0]->describe(), n)) << t[0]->describe();
        const auto field = std::upper_bound(starts.begin(), starts.end(), n) - 1;
        EXPECT_EQ(t[0]->offset, static_cast<long long>(*field)) << t[0]->describe();
    }
}

TEST(AnimTruncation, HugeCountsInATinyFileAreTruncationsNotAllocations) {
    {
        AnimSpec s;
        s.num_joints = 200;  // legal count, but only one joint follows
        const Built b = build(s);
        const ParseResult r = parse(b);
        const auto t = with_rule(r, "truncated");
        ASSERT_EQ(t.size(), 1u) << dump(r);
        // The constraint count's zero bytes read as joint 1's empty name; its priority is cut.
        EXPECT_EQ(t[0]->joint, 1);
        EXPECT_EQ(t[0]->offset, b.off("num_constraints") + 1);
        EXPECT_TRUE(names_byte(t[0]->describe(), b.bytes.size())) << t[0]->describe();
    }
    {
        AnimSpec s;
        s.joints[0].rot_count = std::numeric_limits<std::int32_t>::max();
        const Built b = build(s);
        const ParseResult r = parse(b);
        const auto t = with_rule(r, "truncated");
        ASSERT_EQ(t.size(), 1u) << dump(r);
        EXPECT_TRUE(names_byte(t[0]->describe(), b.bytes.size())) << t[0]->describe();
        // The file holds 3 whole keys' worth of bytes after the count: key 3 does not fit.
        EXPECT_EQ(t[0]->key, 3);
        EXPECT_EQ(t[0]->offset, b.off("joint0.rot0") + 3 * 8);
    }
    {
        AnimSpec s = constrained_spec(1);
        s.num_constraints = 10;
        const Built b = build(s);
        const ParseResult r = parse(b);
        ASSERT_EQ(with_rule(r, "truncated").size(), 1u) << dump(r);
        EXPECT_EQ(with_rule(r, "truncated")[0]->constraint, 1);
    }
}

TEST(AnimTruncation, ANameWithoutNulIsATruncation) {
    std::vector<std::uint8_t> bytes = build(AnimSpec{}).bytes;
    bytes.resize(12);
    for (char c : std::string_view("express_smile")) bytes.push_back(static_cast<std::uint8_t>(c));
    const ParseResult r = parse_anim(bytes);
    const auto t = with_rule(r, "truncated");
    ASSERT_EQ(t.size(), 1u) << dump(r);
    EXPECT_EQ(t[0]->offset, 12);
    EXPECT_TRUE(names_byte(t[0]->describe(), bytes.size())) << t[0]->describe();
}

// =============================================================================================
// Warnings: accepted, but changed or ignored by the viewer

TEST(AnimWarn, BasePriorityClamped) {
    AnimSpec s;
    s.base_priority = 7;
    const Built b = build(s);
    expect_warning(parse(b), "base-priority-clamped", b.off("base_priority"));
    s.base_priority = 6;
    EXPECT_TRUE(with_rule(parse(build(s)), "base-priority-clamped").empty());
}

TEST(AnimWarn, HandPose14) {
    AnimSpec s;
    s.hand_pose = 14;
    const Built b = build(s);
    expect_warning(parse(b), "hand-pose-14", b.off("hand_pose"));
    s.hand_pose = 13;
    EXPECT_TRUE(parse(build(s)).diagnostics.empty());
}

TEST(AnimWarn, LoopZeroLength) {
    AnimSpec s;
    s.loop = 1;
    s.loop_in = s.loop_out = 0.5f;
    const Built b = build(s);
    expect_warning(parse(b), "loop-zero-length", b.off("loop_in"));
    s.loop = 0;  // only looping motions hold the pose
    EXPECT_TRUE(parse(build(s)).diagnostics.empty());
}

TEST(AnimWarn, ConstraintCountOutOfRangeIgnoresAllConstraintDataAndRoundTrips) {
    for (const std::int32_t count : {11, -1, std::numeric_limits<std::int32_t>::min()}) {
        SCOPED_TRACE(count);
        AnimSpec s = constrained_spec(1);
        s.num_constraints = count;
        s.constraints[0].type = 9;  // would be an error if it were read
        const Built b = build(s);
        const ParseResult r = parse(b);
        expect_warning(r, "constraints-ignored", b.off("num_constraints"));
        EXPECT_EQ(r.motion.num_constraints, count);
        EXPECT_TRUE(r.motion.constraints.empty());
        const auto cstart = static_cast<std::size_t>(b.off("c0.chain_length"));
        EXPECT_EQ(r.motion.trailing.size(), b.bytes.size() - cstart);
        // The ignored bytes are kept as trailing bytes (and reported as such).
        ASSERT_EQ(with_rule(r, "trailing-bytes").size(), 1u);
        EXPECT_EQ(with_rule(r, "trailing-bytes")[0]->offset, static_cast<long long>(cstart));
        EXPECT_EQ(write_anim(r.motion), b.bytes);
        EXPECT_TRUE(decode_motion(r.motion, skel()).constraints.empty());
    }
}

TEST(AnimWarn, ConstraintChainOverflow) {
    {
        AnimSpec s = constrained_spec(3);  // MAX_CHAIN_LENGTH − 1: fine
        EXPECT_TRUE(parse(build(s)).diagnostics.empty()) << dump(parse(build(s)));
    }
    for (const int chain : {4, 5}) {
        AnimSpec s = constrained_spec(chain);
        const Built b = build(s);
        expect_warning(parse(b), "constraint-chain-overflow", b.off("c0.chain_length"));
    }
}

TEST(AnimWarn, DuplicateKeyTime) {
    AnimSpec s;
    s.joints[0].rot = {{100, 30001, 32767, 32767},
                       {50, 30002, 32767, 32767},
                       {100, 30003, 32767, 32767},
                       {50, 30004, 32767, 32767}};
    const Built b = build(s);
    const ParseResult r = parse(b);
    expect_warning(r, "duplicate-key-time", b.off("joint0.rot2"));  // first repeated time
    EXPECT_NE(with_rule(r, "duplicate-key-time")[0]->message.find("2 rotation key"),
              std::string::npos)
        << dump(r);
    EXPECT_EQ(r.motion.joints[0].rot_keys.size(), 4u);  // the raw model keeps every key
    EXPECT_EQ(write_anim(r.motion), b.bytes);
}

TEST(AnimWarn, JointPriorities) {
    {
        AnimSpec s;
        s.joints[0].priority = 7;
        const Built b = build(s);
        expect_warning(parse(b), "joint-priority-high", b.off("joint0.priority"));
    }
    {
        AnimSpec s;
        s.base_priority = -1;
        s.joints[0].priority = -1;
        const Built b = build(s);
        expect_warning(parse(b), "priority-unresolved", b.off("joint0.priority"));
        s.base_priority = 0;  // resolvable
        EXPECT_TRUE(parse(build(s)).diagnostics.empty());
    }
}

TEST(AnimWarn, RotationKeyOverlong) {
    AnimSpec s;
    s.joints[0].rot = {{0, 65535, 65535, 65535}};  // (1, 1, 1): |xyz|² = 3
    const Built b = build(s);
    expect_warning(parse(b), "rot-key-overlong", b.off("joint0.rot0") + 2);
    s.joints[0].rot = {{0, 65535, 32767, 32767}};  // (1, 0, 0): exactly unit, fine
    EXPECT_TRUE(parse(build(s)).diagnostics.empty());
}

TEST(AnimWarn, Emotes) {
    {
        AnimSpec s;
        s.emote = "not_an_animation";
        const Built b = build(s);
        expect_warning(parse(b), "emote-unknown", b.off("emote"));
    }
    {
        AnimSpec s;
        s.emote = "6a9a173b-61fa-3ad5-01fa-a851cfc5f66a";
        const Built b = build(s);
        expect_warning(parse(b), "emote-uuid", b.off("emote"));
    }
    {
        AnimSpec s;
        s.emote = "Closed_Mouth";
        const Built b = build(s);
        expect_warning(parse(b), "emote-cleared", b.off("emote"));
    }
    {
        AnimSpec s;
        s.emote = "Express_Smile";  // built-in names match case-insensitively
        EXPECT_TRUE(parse(build(s)).diagnostics.empty()) << dump(parse(build(s)));
    }
}

TEST(AnimWarn, TrailingBytes) {
    AnimSpec s;
    s.trailing = {1, 2, 3};
    const Built b = build(s);
    const ParseResult r = parse(b);
    expect_warning(r, "trailing-bytes", b.off("trailing"));
    EXPECT_EQ(r.motion.trailing, s.trailing);
    EXPECT_EQ(write_anim(r.motion), b.bytes);
}

// =============================================================================================
// Decode rules (decode_motion)

TEST(AnimDecode, ZeroSnapAndWRebuiltFromXyz) {
    AnimSpec s;
    const std::uint16_t c06 = f32_to_u16(0.6f, -1.f, 1.f);
    s.joints[0].rot = {{0, 32767, 32768, 32767}, {65535, c06, 32767, 32768}};
    s.joints[0].pos = {{0, 32767, 32768, 65535}};
    const Motion m = decode(s);
    ASSERT_EQ(m.joints[0].rot_keys.size(), 2u);
    // Codes 32767 and 32768 both decode to exactly 0 (|v| < 2/65535).
    EXPECT_EQ(m.joints[0].rot_keys[0].value, Quat::identity());
    const Quat q = m.joints[0].rot_keys[1].value;
    const float x = u16_to_f32(c06, -1.f, 1.f);
    EXPECT_NEAR(x, 0.6f, 2.f / 65535.f);
    EXPECT_EQ(q.x, x);
    EXPECT_EQ(q.y, 0.f);
    EXPECT_EQ(q.z, 0.f);
    EXPECT_FLOAT_EQ(q.w, std::sqrt(1.f - x * x));
    EXPECT_EQ(m.joints[0].rot_keys[1].time, u16_to_f32(65535, 0.f, 1.f));
    EXPECT_NEAR(m.joints[0].rot_keys[1].time, 1.f, 1e-6f);
    // Positions: ±5 m range, same zero snap.
    ASSERT_EQ(m.joints[0].pos_keys.size(), 1u);
    EXPECT_EQ(m.joints[0].pos_keys[0].value.x, 0.f);
    EXPECT_EQ(m.joints[0].pos_keys[0].value.y, 0.f);
    EXPECT_NEAR(m.joints[0].pos_keys[0].value.z, 5.f, 1e-6f);
}

TEST(AnimDecode, OverlongKeyUnpacksWithWZero) {
    AnimSpec s;
    s.joints[0].rot = {{0, 65535, 65535, 32767}};
    const ParseResult r = parse_anim(build(s).bytes);
    const Motion m = decode_motion(r.motion, skel());
    const float one = u16_to_f32(65535, -1.f, 1.f);
    EXPECT_NEAR(one, 1.f, 1e-6f);
    EXPECT_EQ(m.joints[0].rot_keys[0].value, (Quat{one, one, 0.f, 0.f}));  // not normalized
    // The runtime clip normalizes it (spec §11.2).
    const auto clip = MotionClip::build(m, skel());
    ASSERT_EQ(clip->rot_values().size(), 1u);
    EXPECT_NEAR(dot(clip->rot_values()[0], clip->rot_values()[0]), 1.f, 1e-6f);
}

TEST(AnimDecode, DuplicateTimesLastKeyWinsAndKeysAreSorted) {
    AnimSpec s;
    s.duration = 2.f;
    s.joints[0].rot = {{40000, 40000, 32767, 32767},
                       {10000, 20000, 32767, 32767},
                       {40000, 32767, 45000, 32767},
                       {20000, 32767, 32767, 21000}};
    s.joints[0].pos = {{500, 40000, 0, 0}, {100, 1, 2, 3}, {500, 32768, 65535, 32768}};
    const Motion m = decode(s);
    const MotionJoint& j = m.joints[0];
    ASSERT_EQ(j.rot_keys.size(), 3u);
    EXPECT_EQ(j.rot_keys[0].time, u16_to_f32(10000, 0.f, 2.f));
    EXPECT_EQ(j.rot_keys[1].time, u16_to_f32(20000, 0.f, 2.f));
    EXPECT_EQ(j.rot_keys[2].time, u16_to_f32(40000, 0.f, 2.f));
    EXPECT_EQ(j.rot_keys[2].value.x, 0.f);  // from the third key, not the first
    EXPECT_EQ(j.rot_keys[2].value.y, u16_to_f32(45000, -1.f, 1.f));
    ASSERT_EQ(j.pos_keys.size(), 2u);
    EXPECT_LT(j.pos_keys[0].time, j.pos_keys[1].time);
    EXPECT_EQ(j.pos_keys[1].value, (Vec3{0.f, u16_to_f32(65535, -5.f, 5.f), 0.f}));
}

TEST(AnimDecode, AliasesResolveToCanonicalNames) {
    AnimSpec s;
    s.joints.assign(4, JointSpec{});
    s.joints[0].name = "hip";
    s.joints[1].name = "avatar_mChest";
    s.joints[2].name = "lForeArm";
    s.joints[3].name = "mNotABone";
    const Motion m = decode(s);
    ASSERT_EQ(m.joints.size(), 4u);
    EXPECT_EQ(m.joints[0].name, "mPelvis");
    EXPECT_EQ(m.joints[0].joint, skel().find("mPelvis"));
    EXPECT_EQ(m.joints[1].name, "mChest");
    EXPECT_EQ(m.joints[1].joint, skel().find("mChest"));
    EXPECT_EQ(m.joints[2].name, "mElbowLeft");
    EXPECT_EQ(m.joints[3].name, "mNotABone");  // kept as a dummy
    EXPECT_EQ(m.joints[3].joint, -1);
    EXPECT_EQ(MotionClip::build(m, skel())->tracks().size(), 3u);
}

TEST(AnimDecode, BasePriorityClampAndMaxPriority) {
    {
        AnimSpec s;
        s.base_priority = 7;
        s.joints[0].priority = 2;
        const Motion m = decode(s);
        EXPECT_EQ(m.base_priority, 6);
        EXPECT_EQ(m.max_priority, 6);
    }
    {
        AnimSpec s;
        s.base_priority = 2;
        s.joints.assign(3, JointSpec{});
        s.joints[0].priority = 3;
        s.joints[1].priority = 5;
        s.joints[1].name = "mTorso";
        s.joints[2].priority = -1;
        s.joints[2].name = "mChest";
        const Motion m = decode(s);
        EXPECT_EQ(m.base_priority, 2);
        EXPECT_EQ(m.max_priority, 5);
        EXPECT_EQ(m.joints[2].priority, -1);
    }
    {
        // mMaxPriority ignores an unclamped base priority: all joints −1 arbitrates at LOW.
        AnimSpec s;
        s.base_priority = 4;
        s.joints[0].priority = -1;
        const Motion m = decode(s);
        EXPECT_EQ(m.max_priority, 0);
    }
}

TEST(AnimDecode, Emotes) {
    auto emote = [](const char* name) {
        AnimSpec s;
        s.emote = name;
        return decode(s).emote_name;
    };
    EXPECT_EQ(emote("Closed_Mouth"), "");
    EXPECT_EQ(emote("not_an_animation"), "");
    EXPECT_EQ(emote("express_smile"), "express_smile");
    EXPECT_EQ(emote("6a9a173b-61fa-3ad5-01fa-a851cfc5f66a"), "6a9a173b-61fa-3ad5-01fa-a851cfc5f66a");
}

TEST(AnimDecode, HeaderAndConstraints) {
    AnimSpec s = constrained_spec(1);
    s.loop = 5;  // any non-zero value
    s.loop_in = 0.2f;
    s.loop_out = 0.8f;
    ConstraintSpec c2;
    c2.chain_length = 0;
    c2.type = 1;
    c2.target = field16("R_HAND");
    s.constraints.push_back(c2);
    const Motion m = decode(s);
    EXPECT_TRUE(m.loop);
    EXPECT_EQ(m.loop_in, 0.2f);
    EXPECT_EQ(m.duration, 1.f);
    ASSERT_EQ(m.constraints.size(), 2u);  // file order
    EXPECT_EQ(m.constraints[0].source_volume, "L_HAND");
    EXPECT_TRUE(m.constraints[0].target_ground);
    EXPECT_EQ(m.constraints[0].target_volume, "");
    EXPECT_EQ(m.constraints[0].type, ConstraintType::Point);
    EXPECT_EQ(m.constraints[1].type, ConstraintType::Plane);
    EXPECT_FALSE(m.constraints[1].target_ground);
    EXPECT_EQ(m.constraints[1].target_volume, "R_HAND");
    EXPECT_EQ(m.constraints[1].ease_out_stop, 1.f);
}

// =============================================================================================
// Legacy format 0.1

AnimSpec legacy_spec() {
    AnimSpec s;
    s.version = 0;
    s.sub_version = 1;
    s.duration = 2.f;
    s.joints[0].name = "mChest";
    s.joints[0].legacy_rot = {{0.f, {10.f, 20.f, 30.f}}, {1.5f, {-45.f, 90.f, 170.f}}};
    s.joints[0].legacy_pos = {{0.5f, {1.f, -7.f, 6.f}}, {0.25f, {0.1f, 0.2f, -0.3f}}};
    return s;
}

TEST(AnimLegacy, ParsesF32KeysAndDecodesMayaZyxDegrees) {
    const Built b = build(legacy_spec());
    EXPECT_EQ(b.off("joint0.rot1"), b.off("joint0.rot0") + 16);  // F32 time + 3 F32
    const ParseResult r = parse(b);
    ASSERT_TRUE(r.ok()) << dump(r);
    EXPECT_TRUE(r.motion.is_legacy());
    const RawJoint& rj = r.motion.joints[0];
    ASSERT_EQ(rj.legacy_rot_keys.size(), 2u);
    EXPECT_EQ(rj.legacy_rot_keys[1], (LegacyKey{1.5f, {-45.f, 90.f, 170.f}}));
    EXPECT_TRUE(rj.rot_keys.empty());
    // The out-of-range position is a warning; the value is clamped when decoded.
    ASSERT_EQ(with_rule(r, "pos-key-clamped").size(), 1u) << dump(r);
    EXPECT_EQ(with_rule(r, "pos-key-clamped")[0]->offset, b.off("joint0.pos0") + 4);

    const Motion m = decode_motion(r.motion, skel());
    const MotionJoint& j = m.joints[0];
    ASSERT_EQ(j.rot_keys.size(), 2u);
    EXPECT_EQ(j.rot_keys[0].time, 0.f);
    EXPECT_EQ(j.rot_keys[0].value, maya_q(10.f, 20.f, 30.f, EulerOrder::ZYX));
    EXPECT_EQ(j.rot_keys[1].time, 1.5f);
    EXPECT_EQ(j.rot_keys[1].value, maya_q(-45.f, 90.f, 170.f, EulerOrder::ZYX));
    EXPECT_NE(j.rot_keys[0].value, maya_q(10.f, 20.f, 30.f, EulerOrder::XYZ));  // order matters
    ASSERT_EQ(j.pos_keys.size(), 2u);  // sorted by time
    EXPECT_EQ(j.pos_keys[0].time, 0.25f);
    EXPECT_EQ(j.pos_keys[0].value, (Vec3{0.1f, 0.2f, -0.3f}));
    EXPECT_EQ(j.pos_keys[1].value, (Vec3{1.f, -5.f, 5.f}));
}

TEST(AnimLegacy, NonFiniteLegacyKeysAreRejected) {
    {
        AnimSpec s = legacy_spec();
        s.joints[0].legacy_rot[1].t = kNaN;
        const Built b = build(s);
        expect_reject(parse(b), "rot-key-time", b.off("joint0.rot1"));
    }
    {
        AnimSpec s = legacy_spec();
        s.joints[0].legacy_pos[1].v.y = kInf;
        const Built b = build(s);
        expect_reject(parse(b), "pos-key-finite", b.off("joint0.pos1") + 4);
    }
}

TEST(AnimLegacy, WriteProducesVersion10ThatParses) {
    const ParseResult r = parse(build(legacy_spec()));
    ASSERT_TRUE(r.ok()) << dump(r);
    const std::vector<std::uint8_t> out = write_anim(r.motion);
    ASSERT_GE(out.size(), 4u);
    EXPECT_EQ(out[0], 1);  // version 1.0
    EXPECT_EQ(out[2], 0);
    const ParseResult r2 = parse_anim(out);
    ASSERT_TRUE(r2.ok()) << dump(r2);
    EXPECT_FALSE(r2.motion.is_legacy());
    EXPECT_EQ(r2.motion, upgrade_legacy(r.motion));
    EXPECT_EQ(write_anim(r2.motion), out);

    // The 1.0 file decodes to the legacy values within the quantization steps.
    const Motion a = decode_motion(r.motion, skel());
    const Motion c = decode_motion(r2.motion, skel());
    ASSERT_EQ(c.joints.size(), 1u);
    EXPECT_EQ(c.joints[0].name, "mChest");
    ASSERT_EQ(c.joints[0].rot_keys.size(), a.joints[0].rot_keys.size());
    for (std::size_t k = 0; k < a.joints[0].rot_keys.size(); ++k) {
        const Quat p = a.joints[0].rot_keys[k].value, q = c.joints[0].rot_keys[k].value;
        EXPECT_NEAR(std::fabs(dot(p, q)), 1.f, 1e-4f);
        EXPECT_NEAR(c.joints[0].rot_keys[k].time, a.joints[0].rot_keys[k].time, 2.f * 2.f / 65535.f);
    }
    ASSERT_EQ(c.joints[0].pos_keys.size(), 2u);
    EXPECT_NEAR(c.joints[0].pos_keys[1].value.y, -5.f, 1e-3f);
    EXPECT_NEAR(c.joints[0].pos_keys[1].value.z, 5.f, 1e-3f);
}

// =============================================================================================
// Quantization (spec §1.4)

TEST(AnimQuantize, EncodeIsFloorDecodeSnapsZero) {
    // Exactly between codes 100 and 101 (and just below 101's boundary): floor gives 100.
    const float mid = -1.f + 2.f * (100.5f / 65535.f);
    EXPECT_EQ(f32_to_u16(mid, -1.f, 1.f), 100);
    const float boundary = -5.f + 10.f * (1001.f / 65535.f);
    EXPECT_EQ(f32_to_u16(std::nextafter(boundary, -10.f), -5.f, 5.f), 1000);
    EXPECT_EQ(f32_to_u16(0.99999f, 0.f, 1.f), 65534);  // floor(65534.34)
    EXPECT_EQ(f32_to_u16(0.5f, 0.f, 1.f), 32767);      // floor(32767.5): round would give 32768
    EXPECT_EQ(f32_to_u16(-0.f, -5.f, 5.f), 32767);
    EXPECT_EQ(u16_to_f32(32767, -1.f, 1.f), 0.f);
    EXPECT_EQ(u16_to_f32(32768, -1.f, 1.f), 0.f);
    EXPECT_EQ(u16_to_f32(32767, -5.f, 5.f), 0.f);
    EXPECT_EQ(u16_to_f32(32768, -5.f, 5.f), 0.f);
    EXPECT_NE(u16_to_f32(32766, -1.f, 1.f), 0.f);
    EXPECT_NE(u16_to_f32(32769, -5.f, 5.f), 0.f);
    EXPECT_EQ(u16_to_f32(0, -5.f, 5.f), -5.f);
    EXPECT_EQ(u16_to_f32(65535, -5.f, 5.f), 5.f);
}

// A raw motion with one key per code: positions sweep every code, time codes 0..65535.
RawMotion sweep_motion() {
    RawMotion raw;
    raw.duration = 60.f;
    RawJoint j;
    j.name = "mPelvis";
    for (std::uint32_t c = 0; c < 65536; ++c) {
        const auto code = static_cast<std::uint16_t>(c);
        j.pos_keys.push_back({code, code, static_cast<std::uint16_t>(65535 - c),
                              static_cast<std::uint16_t>((c * 7) & 0xFFFFu)});
    }
    // Rotations: x sweeps every code, y and z at 0, so the quaternion stays unit.
    for (std::uint32_t c = 0; c < 65536; ++c) {
        const auto code = static_cast<std::uint16_t>(c);
        j.rot_keys.push_back({code, code, 32767, 32768});
    }
    raw.joints.push_back(std::move(j));
    return raw;
}

TEST(AnimQuantize, EncodeReproducesTheViewersDoubleQuantizationDrift) {
    const RawMotion raw = sweep_motion();
    const Motion decoded = decode_motion(raw, skel());
    ASSERT_EQ(decoded.joints[0].pos_keys.size(), 65536u);  // all times distinct
    ASSERT_EQ(decoded.joints[0].rot_keys.size(), 65536u);
    const RawMotion enc = encode_motion(decoded);
    ASSERT_EQ(enc.joints.size(), 1u);
    ASSERT_EQ(enc.joints[0].pos_keys.size(), 65536u);
    ASSERT_EQ(enc.joints[0].rot_keys.size(), 65536u);

    // Per component: how many codes moved, and the extreme moves (after − before).
    struct Drift {
        int moved = 0, by2 = 0, lo = 0, hi = 0;
        void add(std::uint16_t before, std::uint16_t after) {
            const int d = int{after} - int{before};
            moved += d != 0;
            by2 += d == -2;
            lo = std::min(lo, d);
            hi = std::max(hi, d);
        }
    };
    Drift time, pos_x, pos_yz, rot_x;
    bool rot_yz_zero = true;
    for (std::size_t k = 0; k < 65536; ++k) {
        const RawKey& a = raw.joints[0].pos_keys[k];
        const RawKey& b = enc.joints[0].pos_keys[k];
        time.add(a.time, b.time);
        pos_x.add(a.x, b.x);
        pos_yz.add(a.y, b.y);
        pos_yz.add(a.z, b.z);
        const RawKey& ra = raw.joints[0].rot_keys[k];
        const RawKey& rb = enc.joints[0].rot_keys[k];
        rot_x.add(ra.x, rb.x);
        // 0 encodes as floor(32767.5) = 32767: code 32768 (also 0) comes back as 32767.
        rot_yz_zero = rot_yz_zero && rb.y == 32767 && rb.z == 32767;
    }
    std::cout << "[ drift    ] codes moved by decode -> encode (of 65536): time " << time.moved
              << ", pos.x " << pos_x.moved << " (" << pos_x.by2 << " by -2), rot.x " << rot_x.moved
              << " (" << rot_x.by2 << " by -2, range " << rot_x.lo << ".." << rot_x.hi << ")\n";
    EXPECT_TRUE(rot_yz_zero);

    // Times are encoded once (F32_to_U16 of the decoded time): floor makes some codes come back
    // one lower, never higher. The count is the one of spec §1.4 (2,544 codes for 60 s).
    EXPECT_EQ(time.lo, -1);
    EXPECT_EQ(time.hi, 0);
    EXPECT_EQ(time.moved, 2544);
    // Positions go through quantize16 and then F32_to_U16 again: the same 9,150 codes of spec
    // §1.4 move, and because a drifting code's lower neighbour mostly drifts as well, the second
    // quantization usually takes them down a second step. So a viewer load → save moves a
    // position key by up to −2 LSB (spec §1.4's "−1 LSB" is the single decode → encode step).
    EXPECT_EQ(pos_x.moved, 9150);
    EXPECT_EQ(pos_x.lo, -2);
    EXPECT_EQ(pos_x.hi, 0);
    EXPECT_GT(pos_x.by2, 0);
    EXPECT_EQ(pos_yz.lo, -2);
    EXPECT_EQ(pos_yz.hi, 0);
    // Rotations: the same double quantization after packToVector3, which divides by |q|
    // (1 ± an ulp after the unpack) and so moves a few more codes than the 5,653 single-step
    // drifters of the ±1 range (spec §1.4); still never up and never more than 2 LSB down.
    EXPECT_EQ(rot_x.lo, -2);
    EXPECT_EQ(rot_x.hi, 0);
    EXPECT_GT(rot_x.moved, 5653);
    EXPECT_LT(rot_x.moved, 8000);

    // So decode(encode(decode(raw))) is not decode(raw) ...
    const Motion again = decode_motion(enc, skel());
    EXPECT_NE(again, decoded);
    // ... and encode of a value that already went through encode is stable for most codes but
    // drifts again for some: the drift accumulates over load → save cycles.
    const RawMotion enc2 = encode_motion(again);
    EXPECT_NE(enc2, enc);
}

TEST(AnimQuantize, EncodeClampsAndPacksTheWPositiveHemisphere) {
    Motion m;
    m.duration = 1.f;
    MotionJoint j;
    j.name = "mHead";
    const Quat q = maya_q(0.f, 0.f, 270.f, EulerOrder::XYZ);  // w < 0 as computed
    j.rot_keys.push_back({0.5f, Quat{-q.x, -q.y, -q.z, -q.w}});
    j.rot_keys.push_back({2.f, q});  // time beyond the duration clamps to 65535
    j.pos_keys.push_back({0.f, Vec3{9.f, -9.f, 0.f}});
    m.joints.push_back(j);
    const RawMotion r = encode_motion(m);
    const RawKey& k0 = r.joints[0].rot_keys[0];
    const RawKey& k1 = r.joints[0].rot_keys[1];
    EXPECT_EQ(k0.x, k1.x);  // q and −q pack to the same code
    EXPECT_EQ(k0.z, k1.z);
    EXPECT_EQ(k1.time, 65535);
    EXPECT_EQ(k0.time, f32_to_u16(0.5f, 0.f, 1.f));
    EXPECT_EQ(r.joints[0].pos_keys[0].x, 65535);
    EXPECT_EQ(r.joints[0].pos_keys[0].y, 0);
    const Motion d = decode_motion(r, skel());
    EXPECT_GE(d.joints[0].rot_keys[0].value.w, 0.f);
    EXPECT_NEAR(std::fabs(dot(d.joints[0].rot_keys[0].value, q)), 1.f, 1e-4f);
}

}  // namespace
}  // namespace slanim
