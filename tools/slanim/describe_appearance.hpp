// SPDX-License-Identifier: MIT
// `slanim info` for the avatar appearance files: `.llm` meshes, `LLWearable` assets (`.dat`)
// and avatar_lad.xml.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "slanim/core/result.hpp"

namespace slanim::cli {

/// The kind of appearance file a path names, from its name: ".llm", ".dat" or "avatar_lad.xml".
enum class AppearanceFile { None, Mesh, Wearable, AvatarDefinition };
AppearanceFile appearance_file_kind(const std::string& path);

/// Loads and describes one appearance file. Text: one dense line; `verbose` adds one line per
/// morph (meshes), parameter and texture (wearables), or mesh entry and skipped element
/// (avatar definitions). A mesh's layout (base or LOD) comes from the avatar_lad.xml next to
/// it when there is one (its `<mesh reference>`); else a name ending in "_<digits>" is read as
/// an LOD (falling back to base) and any other name as a base mesh.
/// The error names the file.
Result<std::string> describe_appearance_text(const std::string& path, bool verbose);
/// The same facts as JSON (counts, names; `verbose` adds the per-item lists).
Result<nlohmann::ordered_json> describe_appearance_json(const std::string& path, bool verbose);

}  // namespace slanim::cli
