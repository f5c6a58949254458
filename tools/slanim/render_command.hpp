// SPDX-License-Identifier: MIT
// `slanim render`: the picture of `slanim view` at time T, drawn offscreen to a PNG
// (gfx_setup.hpp has what the two share). See docs/view-and-render.md and docs/mesh-output.md.
#pragma once

#include <iosfwd>

#include "gfx_options.hpp"

namespace CLI {
class App;
}

namespace slanim::cli {

/// Registers the `render` subcommand on `app`, filling `o` (which must outlive the parse).
CLI::App* add_render_subcommand(CLI::App& app, GfxOptions& o);

/// Runs it. Exit status: 0 success, 1 failure (bad file, no GL context, unwritable output),
/// 2 usage error.
int cmd_render(std::ostream& out, std::ostream& err, const GfxOptions& o);

}  // namespace slanim::cli
