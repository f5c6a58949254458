// SPDX-License-Identifier: MIT
#include "slanim/runtime/joint_owners.hpp"

#include <algorithm>
#include <cstddef>

#include "slanim/core/clip.hpp"

namespace slanim {

JointOwners compute_joint_owners(const MotionController& controller) {
    const Skeleton& sk = controller.skeleton();
    const auto n = static_cast<std::size_t>(sk.num_joints());
    struct Best {
        int priority = -1;
        float weight = 0.f;
        int instance = -1;
    };
    std::vector<Best> best(n);
    const auto active = controller.active();
    for (std::size_t k = 0; k < active.size(); ++k) {
        const MotionInstance& m = *active[k];
        if (!m.evaluate || !(m.pose_weight > 0.f) || !m.clip) continue;
        for (const ClipTrack& t : m.clip->tracks()) {
            if (t.joint < 0 || static_cast<std::size_t>(t.joint) >= n) continue;
            if (!(t.usage & (kUsagePos | kUsageRot))) continue;
            Best& b = best[static_cast<std::size_t>(t.joint)];
            // Newest first: a full tie keeps the newer instance already there.
            if (b.instance < 0 || t.priority > b.priority ||
                (t.priority == b.priority && m.pose_weight > b.weight))
                b = {t.priority, m.pose_weight, static_cast<int>(k)};
        }
    }
    JointOwners out;
    out.joint_owner.assign(n, -1);
    out.joint_priority.assign(n, -1);
    // Owners in the controller's order (newest first), numbered from 0.
    std::vector<int> owner_of_instance(active.size(), -1);
    for (const Best& b : best)
        if (b.instance >= 0) owner_of_instance[static_cast<std::size_t>(b.instance)] = 0;
    for (std::size_t k = 0; k < active.size(); ++k) {
        if (owner_of_instance[k] < 0) continue;
        const MotionInstance& m = *active[k];
        JointOwners::Owner o;
        o.name = m.clip->name().empty() ? "(unnamed)" : m.clip->name();
        o.base_priority = m.clip->base_priority();
        o.min_priority = 7;
        o.max_priority = -1;
        o.instance = &m;
        owner_of_instance[k] = static_cast<int>(out.owners.size());
        out.owners.push_back(std::move(o));
    }
    for (std::size_t j = 0; j < n; ++j) {
        const Best& b = best[j];
        if (b.instance < 0) continue;
        const int o = owner_of_instance[static_cast<std::size_t>(b.instance)];
        out.joint_owner[j] = o;
        out.joint_priority[j] = b.priority;
        JointOwners::Owner& ow = out.owners[static_cast<std::size_t>(o)];
        ow.joints += 1;
        ow.min_priority = std::min(ow.min_priority, b.priority);
        ow.max_priority = std::max(ow.max_priority, b.priority);
    }
    for (int j = 0; j < sk.num_bones(); ++j)
        if (out.joint_owner[static_cast<std::size_t>(j)] < 0) ++out.unowned_bones;
    return out;
}

}  // namespace slanim
