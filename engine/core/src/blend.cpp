// SPDX-License-Identifier: MIT
#include "slanim/core/blend.hpp"

#include <algorithm>

#include "slanim/core/clip.hpp"

namespace slanim {

void PoseBlender::resize(int n) {
    slots_.assign(static_cast<std::size_t>(n) * kSlots, JointStateRef{});
    counts_.assign(static_cast<std::size_t>(n), 0);
    active_.clear();
    active_.reserve(static_cast<std::size_t>(n));
}

bool PoseBlender::add(int joint, const JointStateRef& st) {
    if (joint < 0 || joint >= num_joints()) return false;
    JointStateRef* s = &slots_[static_cast<std::size_t>(joint) * kSlots];
    std::uint8_t& n = counts_[joint];
    if (n == 0) active_.push_back(static_cast<std::int16_t>(joint));
    for (int i = 0; i < kSlots; ++i) {
        if (i == n) {  // first empty slot
            s[i] = st;
            ++n;
            return true;
        }
        if (st.priority > s[i].priority) {  // strictly higher: shift the rest down
            const int last = std::min<int>(n, kSlots - 1);
            for (int j = last; j > i; --j) s[j] = s[j - 1];
            s[i] = st;
            if (n < kSlots) ++n;
            return true;
        }
    }
    return false;
}

void PoseBlender::blend_and_apply(const LocalPoseView& pose) {
    for (const std::int16_t joint : active_) {
        const JointStateRef* s = &slots_[static_cast<std::size_t>(joint) * kSlots];
        const int n = counts_[joint];
        Vec3 blended_pos = pose.positions[joint];
        Quat blended_rot = pose.rotations[joint];
        Vec3 blended_scale = pose.scales[joint];
        float sum_pos = 0.f, sum_rot = 0.f, sum_scale = 0.f;
        std::uint8_t sum_usage = 0;
        Vec3 added_pos, added_scale;
        Quat added_rot = Quat::identity();

        bool scale_touched = false;
        for (int i = 0; i < n; ++i) {
            const JointStateRef& js = s[i];
            const float w = js.weight;
            if (w == 0.f) continue;
            scale_touched |= (js.usage & kUsageScale) != 0;
            if (js.additive) {
                if (js.usage & kUsagePos) {
                    const float nw = std::min(1.f, w + sum_pos);
                    added_pos += *js.position * (nw - sum_pos);
                }
                if (js.usage & kUsageScale) {
                    const float nw = std::min(1.f, w + sum_scale);
                    added_scale += *js.scale * (nw - sum_scale);
                }
                if (js.usage & kUsageRot) {
                    const float nw = std::min(1.f, w + sum_rot);
                    added_rot = ll_mul(ll_nlerp(nw - sum_rot, added_rot, *js.rotation), added_rot);
                }
            } else {
                if (js.usage & kUsagePos) {
                    if (sum_usage & kUsagePos) {
                        const float nw = std::min(1.f, w + sum_pos);
                        blended_pos = lerp(*js.position, blended_pos, sum_pos / nw);
                        sum_pos = nw;
                    } else {
                        blended_pos = *js.position;
                        sum_pos = w;
                    }
                }
                if (js.usage & kUsageScale) {
                    if (sum_usage & kUsageScale) {
                        const float nw = std::min(1.f, w + sum_scale);
                        blended_scale = lerp(*js.scale, blended_scale, sum_scale / nw);
                        sum_scale = nw;
                    } else {
                        blended_scale = *js.scale;
                        sum_scale = w;
                    }
                }
                if (js.usage & kUsageRot) {
                    if (sum_usage & kUsageRot) {
                        const float nw = std::min(1.f, w + sum_rot);
                        blended_rot = ll_nlerp(sum_rot / nw, *js.rotation, blended_rot);
                        sum_rot = nw;
                    } else {
                        blended_rot = *js.rotation;
                        sum_rot = w;
                    }
                }
                sum_usage = static_cast<std::uint8_t>(sum_usage | js.usage);
            }
        }
        if (!is_finite(added_scale)) added_scale = Vec3{};
        if (!is_finite(blended_scale)) blended_scale = Vec3{1.f, 1.f, 1.f};
        pose.positions[joint] = blended_pos + added_pos;
        // Scales are written only when a state carried one: otherwise the sum is the old value
        // (and the pose's scales may be shared rest scales, see slanim::LocalPose).
        if (scale_touched) pose.scales[joint] = blended_scale + added_scale;
        pose.rotations[joint] = ll_mul(added_rot, blended_rot);
        counts_[joint] = 0;
    }
    active_.clear();
}

}  // namespace slanim
