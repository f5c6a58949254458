// SPDX-License-Identifier: MIT
// The motions of a `slanim crowd` run (slanim/runtime/crowd.hpp, CrowdMix): which files or
// generated motions the settled or churn crowd plays, loaded for the crowd's skeleton.
#pragma once

#include <iosfwd>
#include <optional>

#include "crowd_command.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/runtime/crowd.hpp"

namespace slanim::cli {

/// Fills `mix` for `o` (its mode from --settled) and says on `err` what the crowd plays.
///  - settled: the FILEs, each made looping, or the built-in crowd mix of four generated motions;
///  - churn: base motions (one per avatar, looped) = the FILEs, else the Linden mix of the
///    reference animations beside --character (DIR/../anims/linden: ANIM_AGENT_FEMALE_WALK_NEW,
///    DANCE1, ANIM_AGENT_BENTO_IDLE) when all are there, else the built-in mix; gestures (not
///    looped) = the --gesture files, else BLOWKISS from the same folder, else the generated
///    demo_gesture (slanim/runtime/demo_motions.hpp).
/// Returns nullopt on success, else the exit status (1: a file that does not load, named in the
/// message on `err`).
std::optional<int> load_crowd_mix(std::ostream& err, const CrowdOptions& o, const Skeleton& skel, CrowdMix& mix);

}  // namespace slanim::cli
