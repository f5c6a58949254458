// SPDX-License-Identifier: MIT
// Joint chains for the IK solvers (constraint jobs build on this; spec §4.1).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "slanim/core/result.hpp"

namespace slanim {
class Skeleton;
}

namespace slanim::ik {

/// The viewer's constraint chains are at most 4 joints above the end effector
/// (`MAX_CHAIN_LENGTH`, llkeyframemotion.h).
inline constexpr int kMaxViewerChainLength = 4;

/// A chain of skeleton joints from the end joint up to the chain root, J[0] = end joint,
/// J[k] = its k-th ancestor (spec §4.1 notation).
struct Chain {
    std::vector<int> joints;
    [[nodiscard]] int length() const { return static_cast<int>(joints.size()) - 1; }
};

/// Builds the chain of `length` ancestors above `end_joint` (so length + 1 joints). Errors name
/// the joint where the skeleton has no further parent.
Result<Chain> make_chain(const Skeleton& skeleton, int end_joint, int length);

/// Checks that every joint's successor is its parent in `skeleton`.
Result<bool> validate_chain(const Skeleton& skeleton, const Chain& chain);

}  // namespace slanim::ik
