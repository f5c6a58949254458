// SPDX-License-Identifier: MIT
// `slanim edit`: bulk edits of `.anim` files (priority, joint priorities, dropping joints and
// keys, ease, loop, speed, hand pose, emote, left/right mirror), applied in command-line order
// and written as the viewer would write them (encode_motion, atomically).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "slanim/formats/motion_edit.hpp"

namespace CLI {
class App;
}

namespace slanim::cli {

/// One edit of the command line, already checked for syntax and range.
struct EditOp {
    enum class Kind {
        Priority,       ///< --priority N
        JointPriority,  ///< --joint-priority GLOB=N
        DropJoint,      ///< --drop-joint GLOB
        DropPos,        ///< --drop-pos [GLOB]
        DropRot,        ///< --drop-rot GLOB
        DropEmpty,      ///< --drop-empty
        EaseIn,         ///< --ease-in S
        EaseOut,        ///< --ease-out S
        Loop,           ///< --loop / --no-loop
        LoopPoints,     ///< --loop-in T and/or --loop-out T (adjacent ones are merged)
        Speed,          ///< --speed F
        HandPose,       ///< --hand-pose NAME|N
        Emote,          ///< --emote NAME
        Mirror,         ///< --mirror
    };
    Kind kind = Kind::Mirror;
    std::string label;  ///< the option as given, for messages ("--joint-priority mHip*=5")
    int priority = 0;
    std::string text;   ///< glob or emote name
    double number = 0.0;
    bool flag = false;
    std::optional<LoopPoint> loop_in, loop_out;
    std::uint32_t hand_pose = 0;
};

struct EditOptions {
    std::vector<std::string> files;
    std::vector<EditOp> ops;  ///< in command-line order
    std::string output;       ///< -o PATTERN: %n input stem, %p new base priority, %% a '%'
    bool in_place = false;
    std::string character;
};

/// Registers the `edit` subcommand on `app`, filling `o` (the edit options append to `o.ops`
/// as CLI11 parses them, so their order is the command line's; a bad value is a parse error,
/// CLI::ValidationError naming the option). `o` must outlive the parse.
CLI::App* add_edit_subcommand(CLI::App& app, EditOptions& o);

/// Expands an output pattern for one input: %n the input's stem, %p `priority`, %% a '%'.
/// Any other '%' sequence is an error.
Result<std::string> expand_output_pattern(const std::string& pattern, const std::string& input,
                                          int priority);

/// Runs it: per file, load, apply the edits in order, encode like the viewer, check that the
/// result loads in the viewer, then write atomically. One status line per file on `out`
/// ("FILE -> OUT: ok (N edits)" or "FILE: error: ..."). Outputs that would overwrite an
/// input (without --in-place) or that two inputs share are refused before anything is
/// written. Exit status: 0 all files ok, 1 some file failed, 2 usage error.
int cmd_edit(std::ostream& out, std::ostream& err, const EditOptions& o);

}  // namespace slanim::cli
