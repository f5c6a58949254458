// SPDX-License-Identifier: MIT
// `slanim convert IN -o OUT`: rewrites a motion (.anim → .anim, byte-exact re-encode), imports
// BVH like the viewer's uploader, converts between the creator formats (.anim, .bvh, .bvj, poser
// .xml; convert_formats.hpp), exports .anim to glTF (gltf_export.hpp) and imports glTF
// animations (gltf_import.hpp). The route is chosen by the extensions of IN and OUT.
#pragma once

#include <iosfwd>
#include <string>

#include "convert_formats.hpp"
#include "gltf_export.hpp"
#include "slanim/formats/bvh_import.hpp"

namespace CLI {
class App;
}

namespace slanim::cli {

struct ConvertOptions {
    std::string input, output;
    bool force = false;  ///< allow the output to be the input
    // BVH (and glTF) import; negative or empty: the importer's default.
    BvhImportOptions bvh;  ///< --skip-unknown and --all-frames land here directly
    int priority = -1, hand_pose = -1;
    double loop_in = -1, loop_out = -1, ease_in = -1, ease_out = -1;  ///< seconds
    bool loop = false;
    std::string emote;
    std::string importer = "current";     ///< current or linden-legacy
    std::string pelvis_origin = "rest";   ///< linden-legacy: rest or first-frame
    double hip_turn_deg = 0.0;            ///< linden-legacy: the hip's offset about Z, degrees
    ConvertFormatOptions formats;         ///< to BVH / BVJ
    GltfConvertOptions gltf;              ///< to glTF (input and output are set when running)
    std::string gltf_animation;           ///< from glTF: by name or index; empty: the first
    bool keep_times = false;              ///< from glTF: keep the key times (no rebase to 0)
    double gltf_scale = 1.0;              ///< from glTF: multiplies every translation
    /// The registered subcommand (set by add_convert_subcommand): which options were given.
    const CLI::App* app = nullptr;
};

/// Registers the `convert` subcommand on `app`, filling `o` (which must outlive the run).
CLI::App* add_convert_subcommand(CLI::App& app, ConvertOptions& o);

/// Runs it. Outputs are written atomically. Exit status: 0 success, 1 failure (unreadable or
/// invalid input, unwritable output), 2 usage error (an option that does not apply to the
/// route, an output that is the input without --force).
int cmd_convert(std::ostream& out, std::ostream& err, const ConvertOptions& o);

}  // namespace slanim::cli
