// SPDX-License-Identifier: MIT
// Loading shared by the `slanim` subcommands.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "slanim/formats/anim.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/result.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/runtime/world.hpp"
#include "slanim/runtime/procedural.hpp"

namespace slanim::cli {

/// The embedded default skeleton when `character_dir` is empty, else the viewer character
/// folder's avatar_skeleton.xml + avatar_lad.xml.
Result<std::shared_ptr<const Skeleton>> pick_skeleton(const std::string& character_dir);

/// One parsed and decoded file.
struct Loaded {
    RawMotion raw;
    Motion motion;
    std::vector<Diagnostic> diagnostics;
};
/// Reads, parses (the viewer's rules; `upload` makes unknown joints errors) and decodes a file.
/// The error names the file, the rule and the byte offset.
Result<Loaded> load(const std::string& path, const Skeleton& skel, bool upload = false);

/// `--procedural LIST`: a comma list of breathe, body_noise (or body-noise), head_rot (or
/// head-rot), eye, or `all` / `none`. The error names the unknown entry and the accepted ones.
Result<ProceduralSet> parse_procedural_set(const std::string& list);
/// `--look-at X,Y,Z`: three finite numbers (metres, avatar-root frame: X forward, Y left, Z up).
Result<Vec3> parse_look_at(const std::string& text);

}  // namespace slanim::cli
