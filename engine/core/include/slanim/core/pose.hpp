// SPDX-License-Identifier: MIT
// The pose views every job and component shares: one avatar's local pose (joint transforms in
// the parent frame) and model pose (joint transforms in the avatar-root frame), as spans over
// memory the owner keeps (the World's pose pool, a test's vectors, ...).
#pragma once

#include <span>
#include <vector>

#include "slanim/core/math.hpp"

namespace slanim {

/// Local joint transforms of one avatar, indexed by joint: positions in metres in the parent's
/// frame (SL axes: X forward, Y left, Z up), rotations relative to the parent, unitless scales.
/// A view: the owner keeps the memory; sizes are the skeleton's joint count (scales may be empty
/// for jobs that do not touch them). In a World, `scales` may view the world's rest scales shared
/// by several avatars until the avatar owns its own (see World::local_pose).
struct LocalPose {
    std::span<Vec3> positions;
    std::span<Quat> rotations;
    std::span<Vec3> scales;
};

/// Model-space joint transforms of one avatar: positions (metres) and rotations in the
/// avatar-root frame (X forward, Y left, Z up). A view, like LocalPose.
struct ModelPose {
    std::span<Vec3> positions;
    std::span<Quat> rotations;
};

/// An owned copy of a model pose (a ModelPose view dies with its owner), e.g. to keep frames
/// for a later comparison.
struct ModelPoseCopy {
    std::vector<Vec3> positions;
    std::vector<Quat> rotations;
    ModelPoseCopy() = default;
    explicit ModelPoseCopy(const ModelPose& p)
        : positions(p.positions.begin(), p.positions.end()), rotations(p.rotations.begin(), p.rotations.end()) {}
};

}  // namespace slanim
