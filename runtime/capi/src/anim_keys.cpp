// SPDX-License-Identifier: MIT
// The C API: a motion's keys (slanim_motion_joint_entries, slanim_motion_joint,
// slanim_motion_joint_keys, slanim_motion_emote) and .anim bytes written from keys
// (slanim_anim_encode: encode_motion and write_anim, the viewer's quantization).

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "capi_internal.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/formats/anim_codec_nearest.hpp"

using namespace slanim;
using namespace slanim::capi;

namespace {

const MotionJoint& entry(const slanim_motion* motion, int32_t index) {
    const auto& joints = get(motion).clip->motion().joints;
    if (index < 0 || static_cast<std::size_t>(index) >= joints.size())
        fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("joint entry {} is not in [0, {})", index, joints.size()));
    return joints[static_cast<std::size_t>(index)];
}

/// The header checks that keep the file writable; the viewer's accept/reject rules (duration
/// limit, loop points, emote) are slanim_anim_validate's.
void check_header(const slanim_anim_header& h) {
    for (const float v : {h.duration, h.loop_in, h.loop_out, h.ease_in, h.ease_out})
        if (!std::isfinite(v)) fail(SLANIM_ERROR_OUT_OF_RANGE, "a header time is not finite");
    if (h.priority < 0 || h.priority > 6)
        fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("priority {} is not in [0, 6]", h.priority));
    if (h.duration < 0.f) fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("duration {} s is negative", h.duration));
    if (h.hand_pose < 0 || h.hand_pose > static_cast<int32_t>(kNumHandPoses))
        fail(SLANIM_ERROR_OUT_OF_RANGE,
             fmt::format("hand pose {} is not in [0, {}]", h.hand_pose, kNumHandPoses));
}

/// Checks one key's time (finite, in [0, duration], after the previous key's).
void check_time(const std::string& joint, const char* kind, float t, float previous, float duration) {
    if (!std::isfinite(t) || t < 0.f || t > duration)
        fail(SLANIM_ERROR_OUT_OF_RANGE,
             fmt::format("joint '{}': {} key time {} s is not in [0, {}] s", joint, kind, t, duration));
    if (t <= previous)
        fail(SLANIM_ERROR_OUT_OF_RANGE,
             fmt::format("joint '{}': {} key times must increase ({} s after {} s)", joint, kind, t, previous));
}

MotionJoint joint_from(const slanim_anim_joint& in, const Skeleton& sk, float duration) {
    if (!in.name) fail(SLANIM_ERROR_NULL_ARGUMENT, "a joint name is null");
    MotionJoint j;
    j.joint = sk.find(in.name);
    if (j.joint < 0 || j.joint >= sk.num_bones())
        fail(SLANIM_ERROR_INVALID_DATA, fmt::format("'{}' is not a bone of the skeleton", in.name));
    j.name = sk.name(j.joint);
    if (in.priority < -1 || in.priority > 6)
        fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("joint '{}': priority {} is not -1 or in [0, 6]", j.name,
                                                    in.priority));
    j.priority = in.priority;
    if ((in.num_rot_keys && !in.rot_keys) || (in.num_pos_keys && !in.pos_keys))
        fail(SLANIM_ERROR_NULL_ARGUMENT, fmt::format("joint '{}': keys are null", j.name));
    float previous = -1.f;
    for (std::size_t k = 0; k < in.num_rot_keys; ++k) {
        const float* v = in.rot_keys + 5 * k;
        check_time(j.name, "rotation", v[0], previous, duration);
        previous = v[0];
        const float n = std::sqrt(v[1] * v[1] + v[2] * v[2] + v[3] * v[3] + v[4] * v[4]);
        if (!std::isfinite(n))
            fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("joint '{}': rotation at {} s is not finite", j.name, v[0]));
        if (n < 1e-6f)
            fail(SLANIM_ERROR_INVALID_DATA, fmt::format("joint '{}': rotation at {} s is zero", j.name, v[0]));
        j.rot_keys.push_back({v[0], Quat{v[1] / n, v[2] / n, v[3] / n, v[4] / n}});
    }
    previous = -1.f;
    for (std::size_t k = 0; k < in.num_pos_keys; ++k) {
        const float* v = in.pos_keys + 4 * k;
        check_time(j.name, "position", v[0], previous, duration);
        previous = v[0];
        for (int a = 1; a <= 3; ++a)
            if (!std::isfinite(v[a]) || std::fabs(v[a]) > 5.f)
                fail(SLANIM_ERROR_OUT_OF_RANGE,
                     fmt::format("joint '{}': position ({}, {}, {}) m at {} s is outside the format's ±5 m", j.name,
                                 v[1], v[2], v[3], v[0]));
        j.pos_keys.push_back({v[0], Vec3{v[1], v[2], v[3]}});
    }
    return j;
}

/// slanim_anim_encode's body: `nearest` picks encode_motion_nearest_checked (editors) over the
/// viewer's floor encoding.
void encode(const slanim_anim_header* header, const slanim_anim_joint* joints, size_t num_joints,
            const slanim_skeleton* skeleton, uint8_t* anim, size_t capacity, size_t* needed, bool nearest) {
    need(header, "header");
    need(needed, "needed");
    if (num_joints > 0 && !joints) fail(SLANIM_ERROR_NULL_ARGUMENT, "joints is null");
    check_header(*header);
    const Skeleton& sk = skeleton ? *get(skeleton).skeleton : *Skeleton::default_skeleton();
    Motion m;
    m.base_priority = header->priority;
    m.duration = header->duration;
    m.loop = header->loop != 0;
    m.loop_in = header->loop_in;
    m.loop_out = header->loop_out;
    m.ease_in = header->ease_in;
    m.ease_out = header->ease_out;
    m.hand_pose = static_cast<std::uint32_t>(header->hand_pose);
    m.emote_name = header->emote ? header->emote : "";
    std::set<int> seen;
    for (std::size_t i = 0; i < num_joints; ++i) {
        MotionJoint j = joint_from(joints[i], sk, header->duration);
        if (!seen.insert(j.joint).second)
            fail(SLANIM_ERROR_INVALID_DATA, fmt::format("joint '{}' is given twice", j.name));
        m.joints.push_back(std::move(j));
    }
    // The checks above name the joint; the codec's is the last guard.
    auto raw = nearest ? encode_motion_nearest_checked(m) : encode_motion_checked(m);
    if (!raw) fail(SLANIM_ERROR_OUT_OF_RANGE, raw.error().message);
    const std::vector<std::uint8_t> bytes = write_anim(*raw);
    check_capacity(anim, capacity, bytes.size(), needed, "anim");
    std::copy(bytes.begin(), bytes.end(), anim);
}

}  // namespace

extern "C" {

slanim_status slanim_motion_joint_entries(const slanim_motion* motion, int32_t* count) {
    return guard(__func__, [&] {
        const slanim_motion& m = get(motion);
        need(count, "count");
        *count = static_cast<int32_t>(m.clip->motion().joints.size());
    });
}

slanim_status slanim_motion_joint(const slanim_motion* motion, int32_t index, slanim_motion_joint_info* info,
                                  char* name, size_t capacity, size_t* needed) {
    return guard(__func__, [&] {
        const MotionJoint& j = entry(motion, index);
        need(info, "info");
        copy_text(j.name, name, capacity, needed, "name");
        info->joint = j.joint;
        info->priority = j.priority;
        info->num_rot_keys = static_cast<int32_t>(j.rot_keys.size());
        info->num_pos_keys = static_cast<int32_t>(j.pos_keys.size());
    });
}

slanim_status slanim_motion_joint_keys(const slanim_motion* motion, int32_t index, float* rot_keys,
                                       size_t rot_capacity, float* pos_keys, size_t pos_capacity) {
    return guard(__func__, [&] {
        const MotionJoint& j = entry(motion, index);
        std::size_t needed = 0;
        check_capacity(rot_keys, rot_capacity, 5 * j.rot_keys.size(), &needed, "rot_keys");
        check_capacity(pos_keys, pos_capacity, 4 * j.pos_keys.size(), &needed, "pos_keys");
        for (std::size_t k = 0; k < j.rot_keys.size(); ++k) {
            const RotKey& r = j.rot_keys[k];
            float* o = rot_keys + 5 * k;
            o[0] = r.time, o[1] = r.value.x, o[2] = r.value.y, o[3] = r.value.z, o[4] = r.value.w;
        }
        for (std::size_t k = 0; k < j.pos_keys.size(); ++k) {
            const PosKey& p = j.pos_keys[k];
            float* o = pos_keys + 4 * k;
            o[0] = p.time, o[1] = p.value.x, o[2] = p.value.y, o[3] = p.value.z;
        }
    });
}

slanim_status slanim_motion_emote(const slanim_motion* motion, char* name, size_t capacity, size_t* needed) {
    return guard(__func__, [&] { copy_text(get(motion).clip->motion().emote_name, name, capacity, needed, "name"); });
}

slanim_status slanim_anim_encode(const slanim_anim_header* header, const slanim_anim_joint* joints,
                                 size_t num_joints, const slanim_skeleton* skeleton, uint8_t* anim,
                                 size_t capacity, size_t* needed) {
    return guard(__func__, [&] { encode(header, joints, num_joints, skeleton, anim, capacity, needed, false); });
}

slanim_status slanim_anim_encode_nearest(const slanim_anim_header* header, const slanim_anim_joint* joints,
                                         size_t num_joints, const slanim_skeleton* skeleton, uint8_t* anim,
                                         size_t capacity, size_t* needed) {
    return guard(__func__, [&] { encode(header, joints, num_joints, skeleton, anim, capacity, needed, true); });
}

}  // extern "C"
