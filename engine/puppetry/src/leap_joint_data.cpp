// SPDX-License-Identifier: MIT
// Lenient reader of the puppetry pump's joint data (leap_joint_data.hpp; spec §9.4).
#include "slanim/puppetry/leap_joint_data.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string_view>

namespace slanim {

namespace {

constexpr float kRoundingImaginarySq = 1.0001f;

enum class Param : std::uint8_t { Unknown, Rotation, Position, Scale, DisableConstraint, Unsupported };

struct ParamMeaning {
    Param param = Param::Unknown;
    PuppetryRefFrame frame = PuppetryRefFrame::Parent;  // for Rotation and Position
};

ParamMeaning meaning(std::string_view key, LeapJointForm form) {
    using F = PuppetryRefFrame;
    if (form == LeapJointForm::Move) {
        if (key == "local_rot") return {Param::Rotation, F::Parent};
        if (key == "rot") return {Param::Rotation, F::Root};
        if (key == "pos" || key == "eff") return {Param::Position, F::Root};
        if (key == "scale") return {Param::Scale, F::Parent};
        if (key == "no_constraint") return {Param::DisableConstraint, F::Parent};
        if (key == "no_ik") return {Param::Unsupported, F::Parent};
        return {};
    }
    const F frame = form == LeapJointForm::InverseKinematics ? F::Root : F::Parent;
    if (key == "rotation" || key == "r") return {Param::Rotation, frame};
    if (key == "position" || key == "p") return {Param::Position, frame};
    if (key == "scale" || key == "s") return {Param::Scale, F::Parent};
    if (key == "disable_constraint" || key == "d") return {Param::DisableConstraint, F::Parent};
    return {};
}

/// The first three numbers of an array of at least 3 numbers; nullopt with `why` otherwise.
std::optional<Vec3> read_vector(const Llsd& v, std::string& why, std::string& kind) {
    const Llsd::Array* a = v.if_array();
    if (a == nullptr || a->size() < 3) {
        why = fmt::format("expected an array of 3 numbers, found {}{}", llsd_type_name(v.type()),
                          a ? fmt::format(" of {}", a->size()) : std::string());
        kind = "not a vector";
        return std::nullopt;
    }
    float f[3];
    for (std::size_t i = 0; i < 3; ++i) {
        const std::optional<double> d = (*a)[i].to_number();
        if (!d) {
            why = fmt::format("component {} is {}, not a number", i, llsd_type_name((*a)[i].type()));
            kind = "not a vector";
            return std::nullopt;
        }
        if (!std::isfinite(*d) || std::fabs(*d) > std::numeric_limits<float>::max()) {
            why = fmt::format("component {} is {} (not a finite number)", i, *d);
            kind = "non-finite";
            return std::nullopt;
        }
        f[i] = static_cast<float>(*d);
    }
    return Vec3{f[0], f[1], f[2]};
}

/// The unit quaternion whose imaginary part is `xyz` (w ≥ 0), normalised like the viewer when
/// |xyz|² > 1; `note` is set when that is beyond rounding.
Quat unpack_rotation(Vec3 xyz, std::string& note) {
    const float len_sq = dot(xyz, xyz);
    if (len_sq > 1.f) {
        if (len_sq > kRoundingImaginarySq)
            note = fmt::format("|xyz|² = {:.6g} > 1: not the imaginary part of a unit quaternion; "
                               "normalised with w = 0 as the viewer does", len_sq);
        const float len = std::sqrt(len_sq);
        return {xyz.x / len, xyz.y / len, xyz.z / len, 0.f};
    }
    return {xyz.x, xyz.y, xyz.z, std::sqrt(1.f - len_sq)};
}

bool says_something(const PuppetryJointTarget& t) {
    return t.position || t.rotation || t.scale || t.disable_constraint;
}

// One joint's parameter map into its Parent and Root entries.
void read_joint(const std::string& joint, const Llsd::Map& params, LeapJointForm form,
                const std::string& path, std::vector<PuppetryJointTarget>& out,
                std::vector<LeapJointIssue>& issues) {
    PuppetryJointTarget parent{joint, PuppetryRefFrame::Parent, {}, {}, {}, false};
    PuppetryJointTarget root{joint, PuppetryRefFrame::Root, {}, {}, {}, false};
    for (const auto& [key, value] : params) {
        const std::string at = path + "." + key;
        const ParamMeaning m = meaning(key, form);
        PuppetryJointTarget& dst = m.frame == PuppetryRefFrame::Root ? root : parent;
        switch (m.param) {
            case Param::Unknown:
                issues.push_back({at, "unknown parameter", true, key});
                continue;
            case Param::Unsupported:
                issues.push_back({at, "not supported by slanim (ignored)", true, key});
                continue;
            case Param::DisableConstraint:
                if (form == LeapJointForm::Move) {
                    const bool* b = value.if_boolean();
                    if (b == nullptr && !value.to_number()) {
                        issues.push_back({at, "expected a boolean", true, "not a boolean"});
                        continue;
                    }
                    dst.disable_constraint = b ? *b : *value.to_number() != 0.0;
                } else if (value.is_array() && value.size() >= 3) {
                    // The viewer's vector branch swallows it: no effect.
                    issues.push_back({at, "a vector does not disable the constraint", true, key});
                } else {
                    dst.disable_constraint = true;
                }
                continue;
            default: break;
        }
        std::string why, kind;
        const std::optional<Vec3> v = read_vector(value, why, kind);
        if (!v) {
            issues.push_back({at, why, true, kind});
            continue;
        }
        if (m.param == Param::Rotation) {
            std::string note;
            dst.rotation = unpack_rotation(*v, note);
            if (!note.empty()) issues.push_back({at, note, false, "rotation |xyz| > 1"});
        } else if (m.param == Param::Position) {
            dst.position = *v;
        } else {
            dst.scale = *v;
        }
    }
    if (says_something(parent)) out.push_back(std::move(parent));
    if (says_something(root)) out.push_back(std::move(root));
}

bool move_bookkeeping(std::string_view key) {
    return key == "command" || key == "reply" || key == "reqid" || key == "time";
}

}  // namespace

void read_leap_joint_map(const Llsd& joints, LeapJointForm form, const std::string& prefix,
                         std::vector<PuppetryJointTarget>& out, std::vector<LeapJointIssue>& issues) {
    const Llsd::Map* m = joints.if_map();
    if (m == nullptr) {
        issues.push_back({prefix, fmt::format("expected a map of joints, found {}",
                                              llsd_type_name(joints.type())),
                          true, "not a map"});
        return;
    }
    for (const auto& [joint, params] : *m) {
        if (form == LeapJointForm::Move && move_bookkeeping(joint)) continue;
        const std::string path = prefix.empty() ? joint : prefix + "." + joint;
        if (joint.empty()) {
            issues.push_back({path, "empty joint key", true, "empty joint key"});
            continue;
        }
        const Llsd::Map* pm = params.if_map();
        if (pm == nullptr) {
            issues.push_back({path, fmt::format("expected a map of joint parameters, found {}",
                                                llsd_type_name(params.type())),
                              true, joint});
            continue;
        }
        read_joint(joint, *pm, form, path, out, issues);
    }
}

}  // namespace slanim
