// SPDX-License-Identifier: MIT
// Human and machine descriptions of motions for `slanim info`.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "slanim/formats/anim.hpp"
#include "slanim/core/motion.hpp"

namespace slanim::cli {

/// Name of a hand pose value (`LLHandMotion::eHandPose`), e.g. "relaxed"; "invalid" past 14.
const char* hand_pose_name(std::uint32_t pose);

/// One dense line (animDump style): slanim::motion_info_line (slanim/formats/motion_info.hpp).
std::string info_line(const std::string& file, const RawMotion& raw, const Motion& m);
/// Per-joint table lines for -v (text) or a Markdown table (md).
std::string joint_table(const Motion& m, bool markdown);
/// Every header field, joints and constraints as JSON (seconds, metres, quaternions x,y,z,w).
nlohmann::ordered_json info_json(const std::string& file, const RawMotion& raw, const Motion& m,
                                 bool with_keys);

}  // namespace slanim::cli
