// SPDX-License-Identifier: MIT
#include "slanim/formats/motion_info.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <limits>

namespace slanim {

PositionRange position_range(const Motion& m) {
    PositionRange r;
    for (const auto& j : m.joints)
        for (const auto& k : j.pos_keys) {
            const Vec3 v = k.value;
            r.lo = r.any ? Vec3{std::min(r.lo.x, v.x), std::min(r.lo.y, v.y), std::min(r.lo.z, v.z)} : v;
            r.hi = r.any ? Vec3{std::max(r.hi.x, v.x), std::max(r.hi.y, v.y), std::max(r.hi.z, v.z)} : v;
            r.any = true;
        }
    return r;
}

const char* hand_pose_name(std::uint32_t pose) {
    static constexpr const char* kNames[] = {
        "spread", "relaxed", "point", "fist", "relaxed_l", "point_l", "fist_l", "relaxed_r",
        "point_r", "fist_r", "salute_r", "typing", "peace_r", "palm_r", "num_hand_poses(14)"};
    return pose < std::size(kNames) ? kNames[pose] : "invalid";
}

std::string motion_info_line(std::string_view file, const RawMotion& raw, const Motion& m) {
    std::size_t rot_joints = 0, pos_joints = 0, rot_keys = 0, pos_keys = 0;
    for (const auto& j : m.joints) {
        rot_joints += !j.rot_keys.empty();
        pos_joints += !j.pos_keys.empty();
        rot_keys += j.rot_keys.size();
        pos_keys += j.pos_keys.size();
    }
    const PositionRange r = position_range(m);
    std::string pos = r.any ? fmt::format("pos [{:.3f},{:.3f}]x[{:.3f},{:.3f}]x[{:.3f},{:.3f}] m",
                                          r.lo.x, r.hi.x, r.lo.y, r.hi.y, r.lo.z, r.hi.z)
                            : "pos none";
    std::string loop = m.loop ? fmt::format("loop {:.3f}-{:.3f} s", m.loop_in, m.loop_out) : "no loop";
    return fmt::format(
        "{}: v{}.{} prio {}{} | {} joints ({} rot/{} keys, {} pos/{} keys) | {} | {} constraint(s) | "
        "ease {:.3f}/{:.3f} s | {:.3f} s | {} | hand {}({}) | emote {}",
        file, raw.version, raw.sub_version, m.base_priority,
        raw.base_priority != m.base_priority ? fmt::format(" (file {})", raw.base_priority) : "",
        m.joints.size(), rot_joints, rot_keys, pos_joints, pos_keys, pos, m.constraints.size(),
        m.ease_in, m.ease_out, m.duration, loop, hand_pose_name(m.hand_pose), m.hand_pose,
        m.emote_name.empty() ? "none" : m.emote_name);
}

}  // namespace slanim
