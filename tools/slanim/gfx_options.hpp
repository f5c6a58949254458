// SPDX-License-Identifier: MIT
// The options `slanim view` and `slanim render` share (gfx_setup.hpp uses them).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace slanim::cli {

/// Options shared by `view` and `render`.
struct GfxOptions {
    std::vector<std::string> files;     ///< .anim files, all started at t = 0 (none: the demo)
    std::string character;              ///< viewer character folder (default: embedded skeleton)
    std::vector<std::string> wearables; ///< LLWearable files (body parts applied; needs character)
    std::string solver = "ccd";         ///< ccd, fabrik, viewer or none
    /// --puppetry SOURCE (slanim/net/puppetry_sources.hpp); empty: none. `render` takes only
    /// `replay:FILE` (a picture at time T must be reproducible).
    std::string puppetry;
    double fps = 30.0;                  ///< fixed simulation rate, (0, 10000]
    std::string procedural;             ///< --procedural LIST (loading.hpp), empty: none
    std::string look_at;                ///< --look-at X,Y,Z (avatar-root frame), empty: none
    bool skeleton = false, owners = false, constraints = false;  ///< overlays at start
    std::optional<double> yaw_deg, pitch_deg, distance;          ///< camera (default: 25°, 9°, 4 m)
    // render only
    std::optional<double> time;         ///< seconds, required
    std::string size = "800x600";       ///< WxH pixels
    std::string output;                 ///< PNG path, required
    // view only
    int quit_after = 0;                 ///< > 0: close after this many frames (scripted checks)
};

}  // namespace slanim::cli
