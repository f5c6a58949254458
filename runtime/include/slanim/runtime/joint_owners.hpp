// SPDX-License-Identifier: MIT
// Which playing motion owns each joint after a step: the owner overlay of `slanim view`
// (tools/gfx) and slanim_avatar_joint_owners (the C API, the browser page's overlay) both read it.
#pragma once

#include <string>
#include <vector>

#include "slanim/runtime/motion_controller.hpp"

namespace slanim {

/// Which evaluated motion owns each joint this frame.
///
/// Rule: among the controller's active instances that were evaluated this frame
/// (MotionInstance::evaluate) with a pose weight > 0, the owner of joint j is the one whose
/// clip has a track on j (rotation or position keys) with the highest track priority
/// (ClipTrack::priority: the joint priority, or the base priority when it is −1). Ties go to
/// the larger pose weight, then to the newest instance. This is the motion whose joint state
/// the pose blender gives the most say (`LLJointStateBlender::blendJointStates` applies
/// states from the highest priority down, and lower priorities only fill what is left).
/// Joints no evaluated motion animates have no owner (they keep their previous transform).
struct JointOwners {
    struct Owner {
        std::string name;    ///< the clip's name ("(unnamed)" when empty)
        int base_priority = 0;
        int min_priority = 0, max_priority = 0;  ///< over the joints it owns
        int joints = 0;      ///< joints owned
        const MotionInstance* instance = nullptr;
    };
    std::vector<Owner> owners;         ///< in the controller's order (newest first); owns ≥ 1 joint
    std::vector<int> joint_owner;      ///< per skeleton joint: index in `owners`, or −1
    std::vector<int> joint_priority;   ///< per skeleton joint: the owning track's priority, or −1
    int unowned_bones = 0;             ///< bones (not volumes or attachments) without an owner
};

/// The owners of `controller`'s skeleton joints after its last step (see JointOwners).
/// Reads the controller only; allocates the result. Not thread-safe against a step of the
/// same controller.
JointOwners compute_joint_owners(const MotionController& controller);

}  // namespace slanim
