// SPDX-License-Identifier: MIT
#include "slanim/core/clip.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <type_traits>

#include "sampling_plan.hpp"
#include "slanim/core/skeleton.hpp"

namespace slanim {

namespace {

constexpr std::uint32_t kMinGroupCurves = 4;

// Splits the animated curves of one kind (rotations when Value is Quat) into key-sharing groups
// and single curves; see detail::SamplingPlan.
template <class Value>
void plan_animated(const std::vector<ClipTrack>& tracks, const std::vector<float>& times,
                   const std::vector<Value>& values, detail::SamplingPlan& plan) {
    constexpr bool kRot = std::is_same_v<Value, Quat>;
    constexpr std::uint32_t kComponents = kRot ? 4 : 3;
    // Curves by their exact key-time bit patterns, groups in order of first appearance.
    std::map<std::vector<std::uint32_t>, std::size_t> index;
    std::vector<std::vector<std::uint32_t>> members;  // track indices
    for (std::uint32_t k = 0; k < tracks.size(); ++k) {
        const std::uint32_t first = kRot ? tracks[k].rot_first : tracks[k].pos_first;
        const std::uint32_t count = kRot ? tracks[k].rot_count : tracks[k].pos_count;
        if (count < 2) continue;
        std::vector<std::uint32_t> bits(count);
        std::memcpy(bits.data(), times.data() + first, count * sizeof(float));
        const auto [it, inserted] = index.try_emplace(std::move(bits), members.size());
        if (inserted) members.emplace_back();
        members[it->second].push_back(k);
    }
    auto& curves = kRot ? plan.rot_curves : plan.pos_curves;
    auto& groups = kRot ? plan.rot_groups : plan.pos_groups;
    auto& soa = kRot ? plan.rot_soa : plan.pos_soa;
    for (const auto& m : members) {
        if (m.size() < kMinGroupCurves) {
            for (const std::uint32_t k : m) {
                const ClipTrack& t = tracks[k];
                std::uint32_t& slots = kRot ? plan.rot_cursors : plan.pos_cursors;
                curves.push_back(kRot ? detail::PlanCurve{k, t.rot_first, t.rot_count, slots}
                                      : detail::PlanCurve{k, t.pos_first, t.pos_count, slots});
                ++slots;
            }
            continue;
        }
        const ClipTrack& lead = tracks[m.front()];
        detail::PlanGroup g;
        g.times_first = kRot ? lead.rot_first : lead.pos_first;
        g.num_keys = kRot ? lead.rot_count : lead.pos_count;
        g.cursor = (kRot ? plan.rot_cursors : plan.pos_cursors)++;
        g.tracks_first = static_cast<std::uint32_t>(plan.group_tracks.size());
        g.num_curves = static_cast<std::uint32_t>(m.size());
        g.values_first = static_cast<std::uint32_t>(soa.size());
        const std::uint32_t lanes = (g.num_curves + 3u) & ~3u;
        plan.group_tracks.insert(plan.group_tracks.end(), m.begin(), m.end());
        plan.group_tracks.resize(g.tracks_first + lanes, detail::SamplingPlan::kNoTrack);
        soa.resize(soa.size() + static_cast<std::size_t>(g.num_keys) * kComponents * lanes, 0.f);
        for (std::uint32_t key = 0; key < g.num_keys; ++key) {
            float* row = soa.data() + g.values_first + key * kComponents * lanes;
            for (std::uint32_t lane = 0; lane < lanes; ++lane) {
                if (lane >= g.num_curves) {
                    if constexpr (kRot) row[3 * lanes + lane] = 1.f;  // identity padding
                    continue;
                }
                const ClipTrack& t = tracks[m[lane]];
                const Value v = values[(kRot ? t.rot_first : t.pos_first) + key];
                row[lane] = v.x;
                row[lanes + lane] = v.y;
                row[2 * lanes + lane] = v.z;
                if constexpr (kRot) row[3 * lanes + lane] = v.w;
            }
        }
        groups.push_back(g);
    }
}

}  // namespace

MotionClip::MotionClip() : plan_(std::make_unique<detail::SamplingPlan>()) {}
MotionClip::~MotionClip() = default;

std::shared_ptr<const MotionClip> MotionClip::build(const Motion& m, const Skeleton& skeleton,
                                                    std::string name) {
    auto clip = std::shared_ptr<MotionClip>(new MotionClip());
    MotionClip& c = *clip;
    c.name_ = std::move(name);
    c.motion_ = m;
    c.duration_ = m.duration;
    c.loop_ = m.loop;
    c.loop_in_ = m.loop_in;
    c.loop_out_ = m.loop_out;
    c.ease_in_ = m.ease_in;
    c.ease_out_ = m.ease_out;
    c.base_priority_ = m.base_priority;
    c.max_priority_ = m.max_priority;
    c.hand_pose_ = m.hand_pose;
    c.emote_ = m.emote_name;
    c.num_skeleton_joints_ = skeleton.num_joints();

    std::vector<bool> seen(static_cast<std::size_t>(skeleton.num_joints()), false);
    for (const MotionJoint& j : m.joints) {
        if (j.joint < 0 || j.joint >= skeleton.num_joints()) continue;
        int prio = j.priority == -1 ? m.base_priority : j.priority;
        prio = std::clamp(prio, 0, 6);
        const std::uint8_t usage = static_cast<std::uint8_t>((j.rot_keys.empty() ? 0 : kUsageRot) |
                                                             (j.pos_keys.empty() ? 0 : kUsagePos));
        const int num = skeleton.joint_num(j.joint);
        if (num >= 0 && num < kMaxAnimatedJoints) {
            const auto sig = static_cast<std::uint8_t>(0xFFu >> (7 - prio));
            c.signature_[0][num] = (usage & kUsagePos) ? sig : 0;
            c.signature_[1][num] = (usage & kUsageRot) ? sig : 0;
        }
        if (seen[j.joint]) continue;  // LLPose: first state for a joint wins
        seen[j.joint] = true;

        ClipTrack t;
        t.joint = static_cast<std::int16_t>(j.joint);
        t.priority = static_cast<std::int8_t>(prio);
        t.usage = usage;
        t.rot_first = static_cast<std::uint32_t>(c.rot_times_.size());
        t.rot_count = static_cast<std::uint32_t>(j.rot_keys.size());
        for (const RotKey& k : j.rot_keys) {
            c.rot_times_.push_back(k.time);
            Quat q = k.value;
            // Over-long packed keys unpack with w = 0 and |q| > 1 (spec §11.2): normalize them.
            const float n2 = dot(q, q);
            if (n2 > 1.f + 1e-5f) {
                const float inv = 1.f / std::sqrt(n2);
                q = {q.x * inv, q.y * inv, q.z * inv, q.w * inv};
            }
            c.rot_values_.push_back(q);
        }
        t.pos_first = static_cast<std::uint32_t>(c.pos_times_.size());
        t.pos_count = static_cast<std::uint32_t>(j.pos_keys.size());
        for (const PosKey& k : j.pos_keys) {
            c.pos_times_.push_back(k.time);
            c.pos_values_.push_back(k.value);
        }
        c.tracks_.push_back(t);
    }
    // Tracks in joint order: the blender takes a motion as one layer of joint-sorted states
    // (PoseBlender::add_layer). Each joint has one track, so the order changes no result.
    std::sort(c.tracks_.begin(), c.tracks_.end(), [](const ClipTrack& a, const ClipTrack& b) { return a.joint < b.joint; });
    {
        std::vector<std::int16_t> joints;
        std::vector<std::int8_t> priorities;
        std::vector<std::uint8_t> usages;
        for (const ClipTrack& t : c.tracks_)
            joints.push_back(t.joint), priorities.push_back(t.priority), usages.push_back(t.usage);
        c.layer_shape_.build(joints, priorities, usages);  // joints ascend, priorities in [0, 6]
    }

    // Sampling plan: constants apart, then key-sharing groups and single animated curves.
    for (std::uint32_t k = 0; k < c.tracks_.size(); ++k) {
        const ClipTrack& t = c.tracks_[k];
        if (t.rot_count == 1) {
            c.plan_->const_rot_tracks.push_back(k);
            c.plan_->const_rot_values.push_back(c.rot_values_[t.rot_first]);
        }
        if (t.pos_count == 1) {
            c.plan_->const_pos_tracks.push_back(k);
            c.plan_->const_pos_values.push_back(c.pos_values_[t.pos_first]);
        }
    }
    plan_animated(c.tracks_, c.rot_times_, c.rot_values_, *c.plan_);
    plan_animated(c.tracks_, c.pos_times_, c.pos_values_, *c.plan_);
    return clip;
}

float motion_time_to_curve_time(const MotionClip& clip, float time, bool stopped, LoopState& s,
                                bool& alive) {
    time = std::max(0.f, time);
    if (clip.loop()) {
        if (clip.duration() == 0.f) {
            time = 0.f;
            s.last_looped = 0.f;
        } else if (stopped) {
            s.last_looped = std::min(clip.duration(), s.last_looped + time - s.last_update);
        } else if (time > clip.loop_out()) {
            if ((clip.loop_out() - clip.loop_in()) == 0.f)
                s.last_looped = clip.loop_out();
            else
                s.last_looped = clip.loop_in() + std::fmod(time - clip.loop_out(),
                                                           clip.loop_out() - clip.loop_in());
        } else {
            s.last_looped = time;
        }
    } else {
        s.last_looped = time;
    }
    s.last_update = time;
    alive = s.last_looped <= clip.duration();
    return s.last_looped;
}

}  // namespace slanim
