// SPDX-License-Identifier: MIT
#include "chain_math.hpp"

#include <cmath>

namespace slanim::ik::detail {

void forward_kinematics(const ChainPose& pose, ChainWorld& w) {
    const int n = static_cast<int>(pose.local_rotations.size());
    w.n = n;
    w.pos[n - 1] = pose.root_position;
    w.rot[n - 1] = ll_mul(pose.local_rotations[n - 1], pose.root_parent_rotation);
    update_below(pose, w, n - 1);
}

void update_below(const ChainPose& pose, ChainWorld& w, int from) {
    for (int k = from - 1; k >= 0; --k) {
        w.pos[k] = w.pos[k + 1] + rotate(pose.offsets[k], w.rot[k + 1]);
        w.rot[k] = ll_mul(pose.local_rotations[k], w.rot[k + 1]);
    }
    w.effector = w.pos[0] + rotate(pose.effector, w.rot[0]);
}

bool valid_pose(const ChainPose& pose) {
    const std::size_t n = pose.local_rotations.size();
    if (n < 2 || n > static_cast<std::size_t>(kMaxSolverJoints)) return false;
    if (pose.offsets.size() != n) return false;
    for (std::size_t k = 0; k < n; ++k) {
        if (!is_finite(pose.local_rotations[k])) return false;
        if (k + 1 < n && !is_finite(pose.offsets[k])) return false;
    }
    return is_finite(pose.root_position) && is_finite(pose.root_parent_rotation) &&
           is_finite(pose.effector);
}

bool valid_limits(std::span<const JointLimit> limits, std::size_t n) {
    if (limits.empty()) return true;
    if (limits.size() != n) return false;
    for (const JointLimit& l : limits) {
        if (!l.enabled) continue;
        if (!is_finite(l.forward) || length(l.forward) < 1e-6f) return false;
        if (!(l.cone >= 0.f && l.cone <= kPi)) return false;
        if (!(l.min_twist >= -kPi && l.min_twist <= l.max_twist && l.max_twist <= kPi)) return false;
    }
    return true;
}

bool valid_target(const Target& t) {
    if (!is_finite(t.point)) return false;
    if (t.kind == TargetKind::Plane && (!is_finite(t.normal) || length(t.normal) < 1e-6f))
        return false;
    return true;
}

void finish_end_rotation(const ChainPose& pose, const ChainWorld& w, EndRotation mode,
                         Quat saved_world) {
    if (mode == EndRotation::Follow) return;
    // local = saved_world · ~parent_world (viewer order), as applyConstraint's end_local_rot.
    pose.local_rotations[0] = ll_mul(saved_world, conjugate(w.rot[1]));
}

}  // namespace slanim::ik::detail

namespace slanim::ik {

Vec3 effector_position(const ChainPose& pose) {
    detail::ChainWorld w;
    detail::forward_kinematics(pose, w);
    return w.effector;
}

float target_error(const Target& target, Vec3 effector) {
    if (target.kind == TargetKind::Plane) {
        const float len = length(target.normal);
        const Vec3 n = target.normal * (1.f / len);
        return std::fabs(dot(effector - target.point, n));
    }
    return length(effector - target.point);
}

}  // namespace slanim::ik
