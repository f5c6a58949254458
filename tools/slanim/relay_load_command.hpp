// SPDX-License-Identifier: MIT
// `slanim relay-load`: drives simulated agents against a running grid of relays (what
// `scripts/grid.sh --agents A --seconds S` runs; docs/relay.md "Load test"); the generator is
// slanim::run_relay_load (tools/net/relay_server, slanim/relay_server/relay_load.hpp). It ends
// with one line:
//   grid: R regions, A agents, delivered D/E in-range blocks (ratio), p99 latency L ms,
//   spoofed dropped S/T
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "slanim/relay_server/relay_load.hpp"

namespace CLI {
class App;
}

namespace slanim::cli {

struct RelayLoadOptions {
    /// One per region: `NAME,GRID_X,GRID_Y,ADMIN_PORT,UDP_PORT` (relays on 127.0.0.1).
    std::vector<std::string> relays;
    RelayLoadConfig load;  ///< everything but the regions, which come from `relays`
};

CLI::App* add_relay_load_subcommand(CLI::App& app, RelayLoadOptions& o);

/// Runs the load; prints a `load:` line then the `grid:` line on `out`. Exit status 0
/// when the run completed (whatever the figures), 1 on a setup error (relay unreachable,
/// capture unreadable, too few file descriptors), 2 on a usage error.
int cmd_relay_load(std::ostream& out, std::ostream& err, const RelayLoadOptions& o);

}  // namespace slanim::cli
