// SPDX-License-Identifier: MIT
// `slanim view`: motions played on one avatar in an SDL2/OpenGL window, with the skeleton,
// joint-owner and constraint overlays, keyboard and mouse controls (gfx_setup.hpp has what it
// shares with `slanim render`). See docs/view-and-render.md.
#pragma once

#include <iosfwd>

#include "gfx_options.hpp"

namespace CLI {
class App;
}

namespace slanim::cli {

/// Registers the `view` subcommand on `app`, filling `o` (which must outlive the parse).
CLI::App* add_view_subcommand(CLI::App& app, GfxOptions& o);

/// Runs it until the window closes (or --quit-after frames). Exit status: 0 success, 1 failure
/// (bad file, no window or GL context), 2 usage error.
int cmd_view(std::ostream& out, std::ostream& err, const GfxOptions& o);

}  // namespace slanim::cli
