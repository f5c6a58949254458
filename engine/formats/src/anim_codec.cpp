// SPDX-License-Identifier: MIT
#include "slanim/core/motion.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "slanim/core/quantize.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/formats/anim_codec_nearest.hpp"

namespace slanim {

namespace {

template <class Key, class Value>
std::vector<Key> collapse(const std::map<float, Value>& keys) {
    std::vector<Key> out;
    out.reserve(keys.size());
    for (const auto& [t, v] : keys) out.push_back(Key{t, v});
    return out;
}

Vec3 clamp_offset(Vec3 v) {
    auto c = [](float f) { return std::clamp(f, -kMaxPelvisOffset, kMaxPelvisOffset); };
    return {c(v.x), c(v.y), c(v.z)};
}

}  // namespace

Motion decode_motion(const RawMotion& raw, const Skeleton& skeleton) {
    Motion m;
    m.base_priority = raw.base_priority;
    m.max_priority = 0;  // LLJoint::LOW_PRIORITY
    if (m.base_priority >= 7) {
        m.base_priority = 6;
        m.max_priority = 6;
    }
    m.duration = raw.duration;
    m.emote_name = raw.emote_name;
    if (m.emote_name == "Closed_Mouth" ||
        (!m.emote_name.empty() && !is_builtin_animation_name(m.emote_name) &&
         !is_uuid_string(m.emote_name)))
        m.emote_name.clear();
    m.loop_in = raw.loop_in;
    m.loop_out = raw.loop_out;
    m.loop = raw.loop != 0;
    m.ease_in = raw.ease_in;
    m.ease_out = raw.ease_out;
    m.hand_pose = raw.hand_pose;

    const bool legacy = raw.is_legacy();
    m.joints.reserve(raw.joints.size());
    for (const RawJoint& rj : raw.joints) {
        MotionJoint j;
        const int idx = skeleton.find(rj.name);
        if (idx >= 0 && skeleton.joint_num(idx) < kMaxAnimatedJoints) {
            j.joint = idx;
            j.name = skeleton.name(idx);
        } else {
            j.name = idx >= 0 ? skeleton.name(idx) : rj.name;
        }
        j.priority = rj.priority;
        if (rj.priority != -1 && rj.priority > m.max_priority) m.max_priority = rj.priority;

        std::map<float, Quat> rots;
        std::map<float, Vec3> poss;
        if (legacy) {
            for (const LegacyKey& k : rj.legacy_rot_keys)
                rots[k.time] = maya_q(k.value.x, k.value.y, k.value.z, EulerOrder::ZYX);
            for (const LegacyKey& k : rj.legacy_pos_keys) poss[k.time] = clamp_offset(k.value);
        } else {
            for (const RawKey& k : rj.rot_keys) {
                const Vec3 v{u16_to_f32(k.x, kRotMin, kRotMax), u16_to_f32(k.y, kRotMin, kRotMax),
                             u16_to_f32(k.z, kRotMin, kRotMax)};
                rots[u16_to_f32(k.time, 0.f, raw.duration)] = unpack_from_vector3(v);
            }
            for (const RawKey& k : rj.pos_keys) {
                poss[u16_to_f32(k.time, 0.f, raw.duration)] =
                    Vec3{u16_to_f32(k.x, -kMaxPelvisOffset, kMaxPelvisOffset),
                         u16_to_f32(k.y, -kMaxPelvisOffset, kMaxPelvisOffset),
                         u16_to_f32(k.z, -kMaxPelvisOffset, kMaxPelvisOffset)};
            }
        }
        j.rot_keys = collapse<RotKey>(rots);
        j.pos_keys = collapse<PosKey>(poss);
        m.joints.push_back(std::move(j));
    }

    const bool constraints_ignored = raw.num_constraints < 0 || raw.num_constraints > 10;
    if (!constraints_ignored) {
        for (const RawConstraint& rc : raw.constraints) {
            MotionConstraint c;
            c.chain_length = rc.chain_length;
            c.type = rc.type == 1 ? ConstraintType::Plane : ConstraintType::Point;
            c.source_volume = rc.source_name();
            c.source_offset = rc.source_offset;
            const std::string target = rc.target_name();
            c.target_ground = target == "GROUND";
            if (!c.target_ground) c.target_volume = target;
            c.target_offset = rc.target_offset;
            c.target_dir = rc.target_dir;
            c.ease_in_start = rc.ease_in_start;
            c.ease_in_stop = rc.ease_in_stop;
            c.ease_out_start = rc.ease_out_start;
            c.ease_out_stop = rc.ease_out_stop;
            m.constraints.push_back(std::move(c));
        }
    }
    return m;
}

RawMotion encode_motion(const Motion& m) {
    RawMotion r;
    r.version = 1;
    r.sub_version = 0;
    r.base_priority = m.base_priority;
    r.duration = m.duration;
    r.emote_name = m.emote_name;
    r.loop_in = m.loop_in;
    r.loop_out = m.loop_out;
    r.loop = m.loop ? 1 : 0;
    r.ease_in = m.ease_in;
    r.ease_out = m.ease_out;
    r.hand_pose = m.hand_pose;
    const float d = m.duration;
    for (const MotionJoint& j : m.joints) {
        RawJoint rj;
        rj.name = j.name;
        rj.priority = j.priority;
        for (const RotKey& k : j.rot_keys) {
            // serialize: packToVector3, quantize16(−1, 1), then F32_to_U16 (floor) again.
            const Vec3 v = quantize16(pack_to_vector3(k.value), kRotMin, kRotMax);
            rj.rot_keys.push_back({f32_to_u16(k.time, 0.f, d), f32_to_u16(v.x, kRotMin, kRotMax),
                                   f32_to_u16(v.y, kRotMin, kRotMax),
                                   f32_to_u16(v.z, kRotMin, kRotMax)});
        }
        for (const PosKey& k : j.pos_keys) {
            const Vec3 v = quantize16(k.value, -kMaxPelvisOffset, kMaxPelvisOffset);
            rj.pos_keys.push_back({f32_to_u16(k.time, 0.f, d),
                                   f32_to_u16(v.x, -kMaxPelvisOffset, kMaxPelvisOffset),
                                   f32_to_u16(v.y, -kMaxPelvisOffset, kMaxPelvisOffset),
                                   f32_to_u16(v.z, -kMaxPelvisOffset, kMaxPelvisOffset)});
        }
        r.joints.push_back(std::move(rj));
    }
    r.num_constraints = static_cast<std::int32_t>(m.constraints.size());
    for (const MotionConstraint& c : m.constraints) {
        RawConstraint rc;
        rc.chain_length = static_cast<std::uint8_t>(c.chain_length);
        rc.type = static_cast<std::uint8_t>(c.type);
        rc.source_volume = make_volume_field(c.source_volume);
        rc.source_offset = c.source_offset;
        rc.target_volume = make_volume_field(c.target_ground ? "GROUND" : c.target_volume);
        rc.target_offset = c.target_offset;
        rc.target_dir = c.target_dir;
        rc.ease_in_start = c.ease_in_start;
        rc.ease_in_stop = c.ease_in_stop;
        rc.ease_out_start = c.ease_out_start;
        rc.ease_out_stop = c.ease_out_stop;
        r.constraints.push_back(rc);
    }
    return r;
}

namespace {

Result<bool> check_joint_keys(const MotionJoint& j, float d) {
    constexpr float kTimeSlack = 1e-6f;
    const auto bad_time = [&](float t, const char* kind) -> Result<bool> {
        return Error{fmt::format("joint {}: a {} key time {} s is outside the motion's [0, {}] s (the .anim "
                                 "stores times over the duration)", j.name, kind, t, d)};
    };
    for (const RotKey& k : j.rot_keys) {
        if (!std::isfinite(k.time) || k.time < -kTimeSlack || k.time > d + kTimeSlack) return bad_time(k.time, "rotation");
        if (!std::isfinite(k.value.x) || !std::isfinite(k.value.y) || !std::isfinite(k.value.z) ||
            !std::isfinite(k.value.w))
            return Error{fmt::format("joint {}: the rotation key at {} s is not finite", j.name, k.time)};
    }
    for (const PosKey& k : j.pos_keys) {
        if (!std::isfinite(k.time) || k.time < -kTimeSlack || k.time > d + kTimeSlack) return bad_time(k.time, "position");
        for (const float c : {k.value.x, k.value.y, k.value.z})
            if (!std::isfinite(c) || std::abs(c) > kMaxPelvisOffset)
                return Error{fmt::format("joint {}: the position key at {} s, ({}, {}, {}) m, is outside the .anim's "
                                         "±{} m range (check the armature's scale)", j.name, k.time, k.value.x,
                                         k.value.y, k.value.z, kMaxPelvisOffset)};
    }
    return true;
}

Result<bool> check_constraint(const MotionConstraint& c, std::size_t i) {
    if (c.chain_length < 0 || c.chain_length > 255)
        return Error{fmt::format("constraint {}: chain length {} is outside 0..255", i, c.chain_length)};
    for (const std::string* v : {&c.source_volume, &c.target_volume})
        if (v->size() > 15)
            return Error{fmt::format("constraint {}: volume name \"{}\" is longer than 15 characters", i, *v)};
    return true;
}

}  // namespace

Result<bool> check_encodable(const Motion& m) {
    if (!std::isfinite(m.duration) || m.duration < 0.f)
        return Error{fmt::format("the duration {} s is not a finite time ≥ 0", m.duration)};
    for (const float v : {m.ease_in, m.ease_out, m.loop_in, m.loop_out})
        if (!std::isfinite(v)) return Error{"an ease or loop point is not finite"};
    for (const MotionJoint& j : m.joints)
        if (auto r = check_joint_keys(j, m.duration); !r) return r;
    for (std::size_t i = 0; i < m.constraints.size(); ++i)
        if (auto r = check_constraint(m.constraints[i], i); !r) return r;
    return true;
}

Result<RawMotion> encode_motion_checked(const Motion& m) {
    if (auto r = check_encodable(m); !r) return r.error();
    return encode_motion(m);
}

namespace {

/// The code whose decoded value lies nearest `v` (rounding where F32_to_U16 floors); a NaN or a
/// zero-width range gives 0.
std::uint16_t nearest_code(float v, float lo, float hi) {
    if (std::isnan(v) || !(hi > lo)) return 0;
    const double x = (double{std::clamp(v, lo, hi)} - lo) / (double{hi} - lo) * 65535.0;
    return static_cast<std::uint16_t>(std::clamp(std::round(x), 0.0, 65535.0));
}

}  // namespace

Result<RawMotion> encode_motion_nearest_checked(const Motion& m) {
    auto r = encode_motion_checked(m);
    if (!r) return r;
    const float d = m.duration;
    for (std::size_t j = 0; j < m.joints.size(); ++j) {
        const MotionJoint& mj = m.joints[j];
        RawJoint& rj = r->joints[j];
        for (std::size_t k = 0; k < mj.rot_keys.size(); ++k) {
            const Vec3 v = pack_to_vector3(mj.rot_keys[k].value);
            rj.rot_keys[k] = {nearest_code(mj.rot_keys[k].time, 0.f, d), nearest_code(v.x, kRotMin, kRotMax),
                              nearest_code(v.y, kRotMin, kRotMax), nearest_code(v.z, kRotMin, kRotMax)};
        }
        for (std::size_t k = 0; k < mj.pos_keys.size(); ++k) {
            const Vec3 v = mj.pos_keys[k].value;
            rj.pos_keys[k] = {nearest_code(mj.pos_keys[k].time, 0.f, d),
                              nearest_code(v.x, -kMaxPelvisOffset, kMaxPelvisOffset),
                              nearest_code(v.y, -kMaxPelvisOffset, kMaxPelvisOffset),
                              nearest_code(v.z, -kMaxPelvisOffset, kMaxPelvisOffset)};
        }
    }
    return r;
}

RawMotion upgrade_legacy(const RawMotion& raw) {
    if (!raw.is_legacy()) return raw;
    return encode_motion(decode_motion(raw, *Skeleton::default_skeleton()));
}

Result<Motion> load_motion(const std::string& path, const Skeleton& skeleton) {
    auto bytes = read_file_bytes(path);
    if (!bytes) return bytes.error();
    ParseOptions opt;
    opt.skeleton = &skeleton;
    ParseResult pr = parse_anim(*bytes, opt);
    if (const Diagnostic* e = pr.first_error())
        return Error{fmt::format("{}: {}", path, e->describe()), e->offset};
    if (!pr.has_motion) return Error{fmt::format("{}: not a motion", path)};
    return decode_motion(pr.motion, skeleton);
}

}  // namespace slanim
