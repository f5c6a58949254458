// SPDX-License-Identifier: MIT
// Firestorm poser poses → motion (FSPoserAnimator / FSJointPose conventions).
#include "slanim/formats/poser.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "slanim/formats/llsd.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/formats/anim_codec.hpp"

namespace slanim {

namespace {

Result<Vec3> triple(const Llsd& v, const std::string& where) {
    const Llsd::Array* a = v.if_array();
    std::optional<double> x, y, z;
    if (a && a->size() == 3) {
        x = (*a)[0].to_number();
        y = (*a)[1].to_number();
        z = (*a)[2].to_number();
    }
    if (!x || !y || !z || !std::isfinite(*x) || !std::isfinite(*y) || !std::isfinite(*z) ||
        std::fabs(*x) > 3e38 || std::fabs(*y) > 3e38 || std::fabs(*z) > 3e38)
        return Error{fmt::format("{}: expected an array of 3 finite reals, found {}", where,
                                 llsd_type_name(v.type()))};
    return Vec3{static_cast<float>(*x), static_cast<float>(*y), static_cast<float>(*z)};
}

Result<bool> flag(const Llsd& v, const std::string& where) {
    if (const bool* b = v.if_boolean()) return *b;
    if (const std::int32_t* i = v.if_integer()) return *i != 0;
    return Error{fmt::format("{}: expected a boolean, found {}", where, llsd_type_name(v.type()))};
}

}  // namespace

Result<PoserPose> parse_poser_xml(std::string_view xml) {
    auto doc = parse_llsd_xml(xml);
    if (!doc) return doc.error();
    const Llsd::Map* top = doc->if_map();
    if (!top) return Error{fmt::format("the pose is not an LLSD map (found {})", llsd_type_name(doc->type()))};
    PoserPose pose;
    for (const auto& [key, v] : *top) {
        const Llsd::Map* e = v.if_map();
        if (!e) return Error{fmt::format("{}: expected a map, found {}", key, llsd_type_name(v.type()))};
        if (key == "version" || key == "startFromTeePose") {
            const Llsd* val = v.find("value");
            if (!val) return Error{fmt::format("{}: the 'value' key is missing", key)};
            if (key == "version") {
                const auto n = val->to_number();
                if (!n || std::floor(*n) != *n || *n < 0 || *n > 1e6)
                    return Error{fmt::format("version.value: expected an integer, found {}", llsd_type_name(val->type()))};
                pose.version = static_cast<int>(*n);
            } else {
                auto b = flag(*val, "startFromTeePose.value");
                if (!b) return b.error();
                pose.start_from_tee_pose = *b;
            }
            continue;
        }
        PoserJoint j;
        j.name = key;
        const Llsd* en = v.find("enabled");
        const Llsd* base = v.find("jointBaseRotationIsZero");
        const Llsd* rot = v.find("rotation");
        const Llsd* pos = v.find("position");
        const Llsd* scale = v.find("scale");
        if (!en && !rot && !pos && !scale)
            return Error{fmt::format("{}: not a poser joint (none of enabled, rotation, position, "
                                     "scale); is this a pose file?",
                                     key)};
        if (en) {
            auto b = flag(*en, key + ".enabled");
            if (!b) return b.error();
            j.enabled = *b;
        } else {
            j.enabled = rot || pos;
        }
        if (base) {
            auto b = flag(*base, key + ".jointBaseRotationIsZero");
            if (!b) return b.error();
            j.base_rotation_is_zero = *b;
        }
        for (const auto& [field, ptr, out] : {std::tuple{"rotation", rot, &j.rotation},
                                              std::tuple{"position", pos, &j.position},
                                              std::tuple{"scale", scale, &j.scale}}) {
            if (!ptr) continue;
            auto t = triple(*ptr, key + "." + field);
            if (!t) return t.error();
            *out = *t;
        }
        pose.joints.push_back(std::move(j));
    }
    return pose;
}

Result<PoserPose> load_poser_xml(const std::string& path) {
    auto bytes = read_file_bytes(path);
    if (!bytes) return bytes.error();
    auto p = parse_poser_xml(std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()));
    if (!p) return Error{fmt::format("{}: {}", path, p.error().message), p.error().offset, p.error().line};
    return p;
}

Quat poser_rotation(Vec3 e) {
    // LLMatrix3::setRot(roll, pitch, yaw) (m3math.cpp), float.
    const float cx = std::cos(e.x), sx = std::sin(e.x);
    const float cy = std::cos(e.y), sy = std::sin(e.y);
    const float cz = std::cos(e.z), sz = std::sin(e.z);
    const float cxsy = cx * sy, sxsy = sx * sy;
    float m[3][3];
    m[0][0] = cy * cz;
    m[1][0] = -cy * sz;
    m[2][0] = sy;
    m[0][1] = sxsy * cz + cx * sz;
    m[1][1] = -sxsy * sz + cx * cz;
    m[2][1] = -sx * cy;
    m[0][2] = -cxsy * cz + sx * sz;
    m[1][2] = cxsy * sz + sx * cz;
    m[2][2] = cx * cy;
    // LLQuaternion(const LLMatrix3&) and the loader both normalize.
    return ll_normalize(ll_normalize(matrix3_quaternion(m)));
}

Result<PoserConvertResult> poser_to_motion(const PoserPose& pose, const Skeleton& skeleton,
                                           const PoserConvertOptions& o) {
    if (o.priority < 0 || o.priority > 6) return Error{fmt::format("priority {} is outside 0..6", o.priority)};
    if (!(o.duration > 0.f && std::isfinite(o.duration)))
        return Error{fmt::format("duration {} s must be > 0", o.duration)};
    if (!(o.ease_in >= 0.f && o.ease_out >= 0.f)) return Error{"ease durations must be >= 0 s"};
    if (o.hand_pose > 14) return Error{fmt::format("hand pose {} is outside 0..14", o.hand_pose)};
    PoserConvertResult out;
    Motion& m = out.motion;
    m.base_priority = m.max_priority = o.priority;
    m.duration = o.duration;
    m.loop = true;
    m.loop_in = 0.f;
    m.loop_out = o.duration;
    m.ease_in = o.ease_in;
    m.ease_out = o.ease_out;
    m.hand_pose = o.hand_pose;
    const int pelvis = skeleton.pelvis();
    for (const PoserJoint& pj : pose.joints) {
        if (!pj.enabled) continue;
        const bool rotates = !(pj.rotation == Vec3{});
        const bool moves = !(pj.position == Vec3{});
        if (!rotates && !moves) {
            if (!(pj.scale == Vec3{}))
                out.warnings.push_back(fmt::format("{}: a scale change only; .anim has no scale, not written", pj.name));
            continue;
        }
        const int sj = skeleton.find(pj.name);
        if (sj < 0) {
            if (!o.skip_unknown_joints)
                return Error{fmt::format("{}: not a joint of the skeleton (use skip_unknown_joints / "
                                         "--skip-unknown to drop it)",
                                         pj.name)};
            out.warnings.push_back(fmt::format("{}: not a joint of the skeleton, dropped", pj.name));
            continue;
        }
        if (!(pj.scale == Vec3{}))
            out.warnings.push_back(fmt::format("{}: scale change dropped (.anim has no scale)", pj.name));
        if (rotates && !pj.base_rotation_is_zero)
            out.warnings.push_back(fmt::format("{}: the rotation was made on top of another pose "
                                               "(jointBaseRotationIsZero false); written on the rest pose",
                                               pj.name));
        MotionJoint mj;
        mj.name = skeleton.name(sj);
        mj.joint = sj;
        mj.priority = o.priority;
        // Target rotation = rotation * base (LL order) with a zero base: the rotation itself.
        if (rotates) mj.rot_keys.push_back({0.f, poser_rotation(pj.rotation)});
        if (moves) {
            const Vec3 p = sj == pelvis ? pj.position : skeleton.rest_positions()[static_cast<std::size_t>(sj)] + pj.position;
            mj.pos_keys.push_back({0.f, p});
        }
        m.joints.push_back(std::move(mj));
    }
    if (m.joints.empty()) return Error{"no enabled joint of the pose changes anything: nothing to write"};
    m = decode_motion(encode_motion(m), skeleton);
    return out;
}

}  // namespace slanim
