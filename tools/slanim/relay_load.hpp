// SPDX-License-Identifier: MIT
// `slanim relay-load`: drives simulated agents against a running grid of relays (what
// `scripts/grid.sh --agents A --seconds S` runs; docs/relay.md "Load test"). Each agent gets
// its credentials from its region's admin endpoint, opens its circuit from its own UDP socket,
// reports a fixed position and sends a webcam capture (../shared/puppetry) as puppetry blocks at
// a fixed rate, each block stamped with the send time in milliseconds. The command counts the
// blocks every agent receives from senders within 25 m (across region borders too), their
// latency, and sends spoofed datagrams (a live agent's id from another socket, or an issued
// agent that never opened its circuit) that must all be dropped. It ends with one line:
//   grid: R regions, A agents, delivered D/E in-range blocks (ratio), p99 latency L ms,
//   spoofed dropped S/T
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace slanim::cli {

struct RelayLoadOptions {
    /// One per region: `NAME,GRID_X,GRID_Y,ADMIN_PORT,UDP_PORT` (relays on 127.0.0.1).
    std::vector<std::string> relays;
    int agents = 1000;          ///< simulated agents, spread over the regions, [1, 20000]
    double seconds = 30.0;      ///< sending time, (0, 3600]
    double rate_hz = 5.0;       ///< datagrams per agent per second, (0, 50]
    double spoof_per_s = 100.0; ///< spoofed datagrams per second, [0, 10000]
    int tick_ms = 50;           ///< the relays' tick (reported only)
    std::string capture;        ///< webcam capture file (default ../shared/puppetry/…)
    unsigned seed = 1;          ///< positions
};

CLI::App* add_relay_load_subcommand(CLI::App& app, RelayLoadOptions& o);

/// Runs the load; prints informational lines then the `grid:` line on `out`. Exit status 0
/// when the run completed (whatever the figures), 1 on a setup error (relay unreachable,
/// capture unreadable, too few file descriptors), 2 on a usage error.
int cmd_relay_load(std::ostream& out, std::ostream& err, const RelayLoadOptions& o);

}  // namespace slanim::cli
