// SPDX-License-Identifier: MIT
// What `slanim view` (an SDL2/OpenGL window, view_command.hpp) and `slanim render` (the same
// picture offscreen, to a PNG, render_command.hpp) share: motions played on one avatar — the
// real avatar mesh of --character DIR (morphed and skinned on the CPU, --wearable applied), else
// a generated body — with the skeleton, joint-owner and constraint overlays. See docs/view-and-render.md
// and docs/mesh-output.md.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "appearance_loading.hpp"
#include "gfx_options.hpp"
#include "slanim/gfx/avatar_scene.hpp"
#include "slanim/gfx/playback.hpp"
#include "slanim/gfx/renderer.hpp"
#include "slanim/runtime/puppetry.hpp"

namespace slanim::cli {

class AvatarMeshBody;

/// What both commands need before drawing: the skeleton, the clips, the playback and, with
/// --character, the avatar mesh.
struct GfxSetup {
    GfxSetup();
    ~GfxSetup();
    GfxSetup(const GfxSetup&) = delete;
    GfxSetup& operator=(const GfxSetup&) = delete;

    std::shared_ptr<const Skeleton> skeleton;
    std::unique_ptr<gfx::Playback> playback;
    std::shared_ptr<const LoadedAppearance> appearance;  ///< null without --character
    std::unique_ptr<AvatarMeshBody> mesh;               ///< null without --character
    std::string title;  ///< the files' stems, for captions
    /// The puppetry runtime of the current world (replaced when a fresh world is set up) and
    /// its source, for the counters printed on exit; null without --puppetry.
    std::shared_ptr<std::shared_ptr<PuppetryRuntime>> puppetry =
        std::make_shared<std::shared_ptr<PuppetryRuntime>>();
};

/// Loads the skeleton, appearance and motions like `slanim play` (no FILE: the built-in demo)
/// and builds the playback whose every fresh world gets them; `cmd` ("view" or "render")
/// names the command in messages. Returns the exit status on failure (1 a file or setup
/// failure, 2 a usage error).
std::optional<int> setup_playback(const char* cmd, std::ostream& err, const GfxOptions& o, GfxSetup& s);

/// Checks --yaw, --pitch and --distance (usage errors: 2).
std::optional<int> check_camera(const char* cmd, std::ostream& err, const GfxOptions& o);
/// The camera of the options (the defaults where none is given).
gfx::OrbitCamera initial_camera(const GfxOptions& o);

/// Fills `scene` for the playback's current frame: the avatar mesh when there is one (and the
/// world's avatar has its appearance), else the generated body; the camera follows the pelvis.
void build_frame(gfx::Scene& scene, gfx::Playback& pb, gfx::GeneratedBody& body, AvatarMeshBody* mesh,
                 const gfx::OverlayOptions& overlays, gfx::OrbitCamera& cam);

/// Legend text size for a picture `height` pixels tall (stb_easy_font: ~12 px per line at 1).
float label_scale(int height);

}  // namespace slanim::cli
