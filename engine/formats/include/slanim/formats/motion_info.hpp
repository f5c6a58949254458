// SPDX-License-Identifier: MIT
// The one-line description of a motion that `slanim info` prints (animDump style), shared by
// the command (tools/slanim/describe.cpp) and the C API (slanim_anim_info_line), so that the
// page and the command print the same text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "slanim/core/motion.hpp"
#include "slanim/formats/anim.hpp"

namespace slanim {

/// The bounding box of a motion's position keys (metres, each joint's parent frame).
struct PositionRange {
    Vec3 lo{};    ///< per-axis minimum (valid when `any`)
    Vec3 hi{};    ///< per-axis maximum (valid when `any`)
    bool any = false;  ///< false: the motion has no position key
};

/// The bounding box of every position key of `motion`. Pure; any thread.
PositionRange position_range(const Motion& motion);

/// Name of a hand pose value (`LLHandMotion::eHandPose`), e.g. "relaxed"; "invalid" past 14.
const char* hand_pose_name(std::uint32_t pose);

/// `FILE: v1.0 prio 3 | 12 joints (12 rot/340 keys, 1 pos/30 keys) | pos [..]x[..]x[..] m |
/// 0 constraint(s) | ease 0.300/0.300 s | 4.000 s | loop 0.000-4.000 s | hand relaxed(1) |
/// emote none`: the file's header version and priority (with the file's value when the
/// viewer clamped it), the decoded joints and keys, the range of the position keys (metres),
/// ease in/out, duration and loop points (seconds, 3 decimals), hand pose and emote.
/// `raw` is the parsed file, `motion` its decoding (decode_motion). Pure; any thread.
std::string motion_info_line(std::string_view file, const RawMotion& raw, const Motion& motion);

}  // namespace slanim
