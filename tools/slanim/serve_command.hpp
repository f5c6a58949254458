// SPDX-License-Identifier: MIT
// `slanim serve`: serves the browser page (docs/web.md; built by scripts/build-web.sh into
// build-web/web/) on the loopback interface, as static files, until SIGINT or SIGTERM.
#pragma once

#include <iosfwd>
#include <string>

namespace CLI {
class App;
}

namespace slanim::cli {

struct ServeOptions {
    int port = 8080;              ///< TCP port on 127.0.0.1; 0: any free port
    std::string dir = "build-web/web";  ///< the built page's folder
    double duration_s = 0.0;      ///< > 0: stop after this many seconds; 0: until a signal
};

/// Registers the `serve` subcommand on `app`, filling `o`.
CLI::App* add_serve_subcommand(CLI::App& app, ServeOptions& o);

/// Runs it: binds 127.0.0.1 only (never another interface), prints one line
/// `http://127.0.0.1:PORT/` on `out` (flushed: a parent process reads the port chosen for 0),
/// serves the files below `dir` (GET and HEAD; MIME types by extension, .wasm as
/// application/wasm, .js/.mjs as text/javascript; a path outside the folder, through `..` or a
/// symbolic link, is 404) until SIGINT/SIGTERM or `duration_s`.
/// Exit status: 0 after a clean stop, 1 when the folder has no index.html or the port cannot
/// be bound, 2 usage error.
int cmd_serve(std::ostream& out, std::ostream& err, const ServeOptions& o);

}  // namespace slanim::cli
