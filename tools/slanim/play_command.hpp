// SPDX-License-Identifier: MIT
// `slanim play`: plays motions (and optionally a puppetry stream, the viewer's procedural
// motions, wearables) on one avatar and writes every bone's world pose per frame as CSV or JSON
// lines; with --mesh-out, the skinned avatar mesh of chosen frames (mesh_export.hpp).
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace slanim::cli {

struct PlayOptions {
    std::vector<std::string> files;
    std::string character;
    double fps = 30.0;
    std::optional<double> duration, stop_at;  ///< seconds; a negative value on the command line: unset
    std::string format = "csv";
    std::string output;
    bool pelvis_fix = false;
    std::string solver = "ccd";
    std::string puppetry;  // --puppetry SOURCE (slanim/net/puppetry_sources.hpp), empty: none
    std::vector<std::string> wearables;  // --wearable FILE... (appearance_loading.hpp)
    std::string mesh_out, mesh_frames, mesh_format;  // --mesh-out PATTERN (mesh_export.hpp)
    std::string procedural;  // --procedural LIST (slanim/runtime/procedural.hpp), empty: none
    std::string look_at;     // --look-at X,Y,Z (avatar-root frame), empty: no target
};

/// Registers the `play` subcommand on `app`, filling `o`.
CLI::App* add_play_subcommand(CLI::App& app, PlayOptions& o);

/// Runs it. With -o FILE the frames stream into an atomic write: FILE is replaced only once
/// every frame is written; SIGINT/SIGTERM stop between frames, leave the old FILE and end as
/// the signal would. Exit status: 0 success, 1 failure (bad file, unwritable output), 2 usage
/// error, 128 + N after signal N.
int cmd_play(std::ostream& out, std::ostream& err, const PlayOptions& o);

}  // namespace slanim::cli
