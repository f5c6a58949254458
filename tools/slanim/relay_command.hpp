// SPDX-License-Identifier: MIT
// `slanim relay`: runs the puppetry relay service (slanim::relay_server, tools/net/relay_server)
// until a signal or --duration. docs/relay.md describes endpoints, bodies, framing, rules,
// limits and counters.
#pragma once

#include <iosfwd>

#include "slanim/relay_server/relay_server.hpp"

namespace CLI {
class App;
}

namespace slanim::cli {

struct RelayOptions {
    RelayServerOptions server;
    double duration_s = 0.0;  ///< > 0: stop after this many seconds; 0: until a signal
    /// The broker credentials and TLS files (read into server.nats_auth by cmd_relay).
    RelayNatsSecretSources nats_secrets;
};

/// Registers the `relay` subcommand on `app`, filling `o`.
CLI::App* add_relay_subcommand(CLI::App& app, RelayOptions& o);

/// Runs it: starts the server, prints `http HOST:PORT`, `udp HOST:PORT` and `admin HOST:PORT`
/// lines (and `region NAME` with --nats) on `out`
/// (flushed, so a parent process can read the chosen ports), serves until SIGINT/SIGTERM or
/// `duration_s`, then prints the counters on `out` as one `stats {...}` JSON line. Broker
/// warnings (refusals, permission violations) go to `err`, one line each.
/// Exit status: 0 after a clean stop, 1 when a socket cannot be bound (or the grid, NATS URL,
/// credentials or TLS files are wrong, or the URL carries credentials), 2 usage error.
int cmd_relay(std::ostream& out, std::ostream& err, const RelayOptions& o);

}  // namespace slanim::cli
