// SPDX-License-Identifier: MIT
// CustomMotionType: validation and the shape clip the controller reads (custom_motion.hpp).
#include "slanim/runtime/custom_motion.hpp"

#include <fmt/format.h>

#include <cmath>

namespace slanim {

Result<std::shared_ptr<const CustomMotionType>> CustomMotionType::create(CustomMotionSpec spec, const Skeleton& skeleton,
                                                                         Factory factory, std::string name) {
    const std::string who = name.empty() ? std::string("custom motion") : fmt::format("custom motion '{}'", name);
    if (!factory) return Error{fmt::format("{}: no factory (nothing creates its instances)", who)};
    if (spec.priority < 0 || spec.priority > 6)
        return Error{fmt::format("{}: priority {} outside [0, 6]", who, spec.priority)};
    const auto bad_time = [](float t) { return !std::isfinite(t) || t < 0.f; };
    if (bad_time(spec.ease_in) || bad_time(spec.ease_out) || bad_time(spec.duration))
        return Error{fmt::format("{}: ease in {}, ease out {} and duration {} must be finite and >= 0 s", who,
                                 spec.ease_in, spec.ease_out, spec.duration)};
    if (!std::isfinite(spec.min_pixel_area))
        return Error{fmt::format("{}: min pixel area {} is not finite", who, spec.min_pixel_area)};
    if (spec.joints.empty()) return Error{fmt::format("{}: no joints", who)};
    std::vector<bool> seen(static_cast<std::size_t>(skeleton.num_joints()), false);
    auto type = std::shared_ptr<CustomMotionType>(new CustomMotionType());
    Motion shape;
    shape.base_priority = spec.priority;
    shape.max_priority = spec.priority;
    shape.duration = spec.duration;
    shape.loop = spec.loop;
    shape.loop_in = 0.f;
    shape.loop_out = spec.duration;  // LLMotion::setStopTime: no deferral of the stop
    shape.ease_in = spec.ease_in;
    shape.ease_out = spec.ease_out;
    for (std::size_t k = 0; k < spec.joints.size(); ++k) {
        const CustomJoint& j = spec.joints[k];
        if (j.joint < 0 || j.joint >= skeleton.num_joints())
            return Error{fmt::format("{}: joints[{}]: joint index {} outside [0, {})", who, k, j.joint,
                                     skeleton.num_joints())};
        if (seen[static_cast<std::size_t>(j.joint)])
            return Error{fmt::format("{}: joints[{}]: joint {} ({}) given twice", who, k, j.joint,
                                     skeleton.name(j.joint))};
        seen[static_cast<std::size_t>(j.joint)] = true;
        if (j.usage == 0 || (j.usage & ~(kUsagePos | kUsageRot | kUsageScale)) != 0)
            return Error{fmt::format("{}: joints[{}] ({}): usage {} is not a non-empty set of pos (1), rot (2), scale (4)",
                                     who, k, skeleton.name(j.joint), j.usage)};
        if (j.priority < -1 || j.priority > 6)
            return Error{fmt::format("{}: joints[{}] ({}): priority {} outside [-1, 6]", who, k,
                                     skeleton.name(j.joint), j.priority)};
        type->priorities_.push_back(static_cast<std::int8_t>(j.priority == -1 ? spec.priority : j.priority));
        MotionJoint mj;
        mj.name = skeleton.name(j.joint);
        mj.joint = j.joint;
        mj.priority = j.priority;
        if (j.usage & kUsageRot) mj.rot_keys.push_back({0.f, Quat::identity()});
        if (j.usage & kUsagePos) mj.pos_keys.push_back({0.f, Vec3{}});
        shape.joints.push_back(std::move(mj));
    }
    type->shape_ = MotionClip::build(shape, skeleton, std::move(name));
    type->spec_ = std::move(spec);
    type->factory_ = std::move(factory);
    return std::shared_ptr<const CustomMotionType>(std::move(type));
}

}  // namespace slanim
