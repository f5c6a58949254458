// SPDX-License-Identifier: MIT
// Runtime skeleton: joint numbering, rest pose and name aliases (spec §7.1, §7.2, §7.4;
// `LLAvatarAppearance::setupBone/makeJointAliases`, `LLVOAvatar::loadSkeletonNode/getJoint`).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "slanim/core/skeleton.hpp"

namespace slanim {
namespace {

/// llmath.h `DEG_TO_RAD` (F32).
constexpr float kDegToRad = 0.017453292519943295769236907684886f;

const char* kind_name(JointKind k) {
    switch (k) {
        case JointKind::Bone: return "bone";
        case JointKind::CollisionVolume: return "collision volume";
        case JointKind::AttachmentPoint: return "attachment point";
    }
    return "joint";
}

std::string describe(const JointDesc& j) {
    std::string s = std::string(kind_name(j.kind)) + " '" + j.name + "'";
    if (j.kind == JointKind::AttachmentPoint) s += " (id " + std::to_string(j.attachment_id) + ")";
    return s;
}

}  // namespace

bool operator==(const JointDesc& a, const JointDesc& b) {
    return a.kind == b.kind && a.name == b.name && a.parent == b.parent && a.aliases == b.aliases &&
           a.position == b.position && a.rotation_deg == b.rotation_deg && a.scale == b.scale &&
           a.pivot == b.pivot && a.end == b.end && a.extended == b.extended && a.group == b.group &&
           a.attachment_id == b.attachment_id && a.attachment_group == b.attachment_group &&
           a.hud == b.hud;
}

bool operator==(const SkeletonDesc& a, const SkeletonDesc& b) {
    return a.bones == b.bones && a.volumes == b.volumes && a.attachments == b.attachments;
}

Result<std::shared_ptr<const Skeleton>> Skeleton::build(const SkeletonDesc& desc) {
    const std::size_t nb = desc.bones.size(), nv = desc.volumes.size(), na = desc.attachments.size();
    if (nb == 0) return Error{"skeleton has no bones"};
    if (nb + nv + na > static_cast<std::size_t>(kMaxAnimatedJoints))
        return Error{"skeleton has " + std::to_string(nb + nv + na) + " joints; at most " +
                     std::to_string(kMaxAnimatedJoints) + " can be animated"};

    // Joint order: bones, volumes, attachment points by id.
    std::vector<const JointDesc*> order;
    order.reserve(nb + nv + na);
    for (const JointDesc& j : desc.bones) order.push_back(&j);
    for (const JointDesc& j : desc.volumes) order.push_back(&j);
    const auto first_attachment = static_cast<std::ptrdiff_t>(order.size());
    for (const JointDesc& j : desc.attachments) order.push_back(&j);
    std::stable_sort(order.begin() + first_attachment, order.end(),
                     [](const JointDesc* a, const JointDesc* b) { return a->attachment_id < b->attachment_id; });

    std::shared_ptr<Skeleton> sk(new Skeleton());
    sk->num_bones_ = static_cast<int>(nb);
    sk->num_volumes_ = static_cast<int>(nv);
    const int n = static_cast<int>(order.size());
    std::unordered_map<std::string, int> by_name;  // canonical names
    by_name.reserve(order.size());
    for (int i = 0; i < n; ++i) {
        const JointDesc& j = *order[i];
        const JointKind kind = i < sk->num_bones_                    ? JointKind::Bone
                               : i < sk->num_bones_ + sk->num_volumes_ ? JointKind::CollisionVolume
                                                                       : JointKind::AttachmentPoint;
        if (j.kind != kind)
            return Error{describe(j) + " is listed among the " + kind_name(kind) + "s"};
        if (j.name.empty()) return Error{std::string("a ") + kind_name(kind) + " has an empty name"};
        if (!by_name.emplace(j.name, i).second) return Error{"duplicate joint name '" + j.name + "'"};
        int num = i;
        if (kind == JointKind::AttachmentPoint) {
            if (j.attachment_id < 1) return Error{describe(j) + ": id must be >= 1"};
            if (i > first_attachment && order[i - 1]->attachment_id == j.attachment_id)
                return Error{describe(j) + ": duplicate attachment id"};
            num = sk->num_bones_ + sk->num_volumes_ + j.attachment_id - 1;
        }
        if (num >= kMaxAnimatedJoints)
            return Error{describe(j) + ": joint number " + std::to_string(num) + " is not below " +
                         std::to_string(kMaxAnimatedJoints)};
        sk->names_.push_back(j.name);
        sk->kinds_.push_back(kind);
        sk->joint_nums_.push_back(static_cast<std::int16_t>(num));
        sk->descs_.push_back(j);
    }

    // Alias map, in the viewer's precedence: bone names and `aliases` tokens in order (a later
    // duplicate wins), attachment names with spaces → '_', then exact volume/attachment names
    // (found by the viewer's tree search only when no alias claims them).
    for (int i = 0; i < sk->num_bones_; ++i) {
        sk->aliases_[sk->names_[i]] = i;
        for (const std::string& a : sk->descs_[i].aliases) sk->aliases_[a] = i;
    }
    for (int i = sk->num_bones_ + sk->num_volumes_; i < n; ++i) {
        std::string underscored = sk->names_[i];
        std::replace(underscored.begin(), underscored.end(), ' ', '_');
        sk->aliases_[underscored] = i;
    }
    for (int i = sk->num_bones_; i < n; ++i) sk->aliases_.emplace(sk->names_[i], i);
    for (int i = sk->num_bones_; i < sk->num_bones_ + sk->num_volumes_; ++i) sk->volumes_.emplace(sk->names_[i], i);

    // Parents (each must precede its child, which rules out cycles) and rest pose.
    for (int i = 0; i < n; ++i) {
        const JointDesc& j = sk->descs_[i];
        int parent = -1;
        if (i == 0) {
            if (!j.parent.empty())
                return Error{"the first bone '" + j.name + "' must be the root (no parent), not a child of '" +
                             j.parent + "'"};
        } else if (j.kind == JointKind::AttachmentPoint) {
            if (j.parent != "mRoot" && j.parent != "mScreen") {
                parent = sk->find(j.parent);  // the viewer resolves it with getJoint
                if (parent < 0 || parent >= sk->num_bones_ + sk->num_volumes_)
                    return Error{describe(j) + ": unknown parent joint '" + j.parent + "'"};
            }
        } else if (j.parent.empty()) {
            return Error{describe(j) + " has no parent; only the first bone can be the root"};
        } else {
            const auto it = by_name.find(j.parent);
            if (it == by_name.end() || it->second >= sk->num_bones_)
                return Error{describe(j) + ": unknown parent bone '" + j.parent + "'"};
            parent = it->second;
        }
        if (parent >= i) return Error{describe(j) + ": parent '" + j.parent + "' must come before it"};
        sk->parents_.push_back(static_cast<std::int16_t>(parent));

        const Vec3 r = j.rotation_deg;
        sk->rest_rotations_.push_back(
            j.kind == JointKind::AttachmentPoint
                ? quat_from_roll_pitch_yaw(r.x * kDegToRad, r.y * kDegToRad, r.z * kDegToRad)
                : maya_q(r.x, r.y, r.z, EulerOrder::XYZ));
        sk->rest_positions_.push_back(i == 0 ? Vec3{} : j.position);
        sk->default_positions_.push_back(j.position);
        sk->rest_scales_.push_back(j.scale);
        sk->pivots_.push_back(j.pivot);
    }
    // Joints by depth (roots first, index order within a depth): the joints of one depth are
    // independent once the shallower ones are done, so kernels may process them together.
    const std::size_t count = sk->parents_.size();
    std::vector<int> depth(count, 0);
    int max_depth = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const int p = sk->parents_[i];
        depth[i] = p < 0 ? 0 : depth[static_cast<std::size_t>(p)] + 1;
        max_depth = std::max(max_depth, depth[i]);
    }
    sk->depth_starts_.assign(static_cast<std::size_t>(max_depth) + 2, 0);
    for (std::size_t i = 0; i < count; ++i) ++sk->depth_starts_[static_cast<std::size_t>(depth[i]) + 1];
    for (std::size_t d = 1; d < sk->depth_starts_.size(); ++d) sk->depth_starts_[d] += sk->depth_starts_[d - 1];
    sk->depth_order_.resize(count);
    std::vector<std::uint16_t> fill(sk->depth_starts_.begin(), sk->depth_starts_.end() - 1);
    for (std::size_t i = 0; i < count; ++i)
        sk->depth_order_[fill[static_cast<std::size_t>(depth[i])]++] = static_cast<std::int16_t>(i);
    return std::shared_ptr<const Skeleton>(std::move(sk));
}

std::shared_ptr<const Skeleton> Skeleton::default_skeleton() {
    static const std::shared_ptr<const Skeleton> skeleton = [] {
        Result<std::shared_ptr<const Skeleton>> r = build(default_skeleton_desc());
        if (!r) {  // the embedded table is generated and tested: this cannot happen
            std::fprintf(stderr, "slanim: invalid embedded default skeleton: %s\n",
                         r.error().describe().c_str());
            std::abort();
        }
        return std::move(r).value();
    }();
    return skeleton;
}

int Skeleton::find(std::string_view name) const {
    const auto it = aliases_.find(std::string(name));
    return it == aliases_.end() ? -1 : it->second;
}

int Skeleton::find_collision_volume(std::string_view name) const {
    const auto it = volumes_.find(std::string(name));
    return it == volumes_.end() ? -1 : it->second;
}

}  // namespace slanim
