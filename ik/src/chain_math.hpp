// SPDX-License-Identifier: MIT
// Private helpers shared by the chain solvers: forward kinematics of a ChainPose into fixed-size
// scratch arrays (no allocation), and the pose checks every job's validate() makes.
#pragma once

#include <array>

#include "slanim/ik/solvers.hpp"

namespace slanim::ik::detail {

/// World transforms of J[0..n−1] and the effector, computed from a ChainPose.
struct ChainWorld {
    int n = 0;
    std::array<Vec3, kMaxSolverJoints> pos{};
    std::array<Quat, kMaxSolverJoints> rot{};
    Vec3 effector;
};

/// World rotation of J[L]'s parent is pose.root_parent_rotation; J[k]'s world rotation is
/// ll_mul(local[k], world[k+1]); J[k]'s position is pos[k+1] + rotate(offsets[k], rot[k+1]).
void forward_kinematics(const ChainPose& pose, ChainWorld& out);

/// Recomputes positions and rotations of J[from−1..0] and the effector after J[from] changed
/// (pos[from] and rot[from] must be current).
void update_below(const ChainPose& pose, ChainWorld& w, int from);

/// Shared part of validate(): spans sized n with 2 ≤ n ≤ kMaxSolverJoints, finite inputs.
bool valid_pose(const ChainPose& pose);
bool valid_limits(std::span<const JointLimit> limits, std::size_t n);
bool valid_target(const Target& target);

/// Sets J[0]'s local rotation after its ancestors changed: Keep → the world rotation it had
/// before (`saved_world`), expressed under its new parent world rotation; Follow → unchanged.
void finish_end_rotation(const ChainPose& pose, const ChainWorld& w, EndRotation mode,
                         Quat saved_world);

}  // namespace slanim::ik::detail
