// SPDX-License-Identifier: MIT
#include "slanim/ik/chain.hpp"

#include <string>

#include "slanim/core/skeleton.hpp"

namespace slanim::ik {

Result<Chain> make_chain(const Skeleton& skeleton, int end_joint, int length) {
    if (end_joint < 0 || end_joint >= skeleton.num_joints())
        return Error{"chain end joint " + std::to_string(end_joint) + " is not in the skeleton"};
    if (length < 0) return Error{"chain length " + std::to_string(length) + " is negative"};
    Chain c;
    c.joints.push_back(end_joint);
    int j = end_joint;
    for (int k = 0; k < length; ++k) {
        const int p = skeleton.parent(j);
        if (p < 0)
            return Error{"chain of length " + std::to_string(length) + " above '" +
                         skeleton.name(end_joint) + "' runs past the root at '" + skeleton.name(j) +
                         "'"};
        c.joints.push_back(p);
        j = p;
    }
    return c;
}

Result<bool> validate_chain(const Skeleton& skeleton, const Chain& chain) {
    if (chain.joints.empty()) return Error{"empty chain"};
    for (std::size_t k = 0; k + 1 < chain.joints.size(); ++k) {
        const int j = chain.joints[k];
        if (j < 0 || j >= skeleton.num_joints()) return Error{"chain joint out of range"};
        if (skeleton.parent(j) != chain.joints[k + 1])
            return Error{"chain joint '" + skeleton.name(j) + "' is not followed by its parent"};
    }
    return true;
}

}  // namespace slanim::ik
