// SPDX-License-Identifier: MIT
#include "slanim/engine/clip.hpp"

#include <algorithm>
#include <cmath>

#include "slanim/engine/skeleton.hpp"

namespace slanim {

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
    return clip;
}

void SamplingCursor::reset(const MotionClip& c) {
    clip = &c;
    rot.assign(c.tracks().size(), 0);
    pos.assign(c.tracks().size(), 0);
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
