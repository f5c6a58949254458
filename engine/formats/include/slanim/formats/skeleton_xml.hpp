// SPDX-License-Identifier: MIT
// Reading the SL skeleton from a viewer character folder: avatar_skeleton.xml and the
// <attachment_point> elements of avatar_lad.xml (spec §7.1, `LLAvatarSkeletonInfo::parseXml`).
// The runtime Skeleton itself and the embedded default are slanim::core (skeleton.hpp).
#pragma once

#include <filesystem>
#include <memory>
#include <string_view>

#include "slanim/core/result.hpp"
#include "slanim/core/skeleton.hpp"

namespace slanim {

/// Parses avatar_skeleton.xml text. Errors name the element and attribute (and the line).
Result<SkeletonDesc> parse_skeleton_xml(std::string_view xml_text);
/// Adds the `<attachment_point>` elements of avatar_lad.xml text to `desc` (replacing any).
Result<bool> parse_attachment_points(std::string_view lad_text, SkeletonDesc& desc);
/// Loads avatar_skeleton.xml and avatar_lad.xml from a viewer character folder.
Result<SkeletonDesc> load_skeleton_desc(const std::filesystem::path& character_dir);
/// Loads a character folder and builds the runtime skeleton from it (load_skeleton_desc, then
/// Skeleton::build). Errors name the file and the element.
Result<std::shared_ptr<const Skeleton>> load_skeleton(const std::filesystem::path& character_dir);

}  // namespace slanim
