// SPDX-License-Identifier: MIT
// The relay load generator (what `slanim relay-load` and `scripts/grid.sh --agents A --seconds S`
// run; docs/relay.md "Load test"): simulated agents against a running grid of relays on
// 127.0.0.1. Each agent gets its credentials from its region's admin endpoint, opens its circuit
// from its own UDP socket, reports a fixed position and sends a webcam capture
// (../shared/puppetry) as puppetry blocks at a fixed rate, each block stamped with the send time
// in milliseconds. The generator counts the blocks every agent receives from senders within
// 25 m (across region borders too), their latency, and sends spoofed datagrams (a live agent's
// id from another socket, or an issued agent that never opened its circuit) that must all be
// dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "slanim/core/result.hpp"

namespace slanim {

/// One region's relay, on 127.0.0.1.
struct RelayLoadRegion {
    std::string name;
    double origin_x = 0, origin_y = 0;  ///< the region's south-west corner, grid metres
    int admin_port = 0, udp_port = 0;
};

/// `NAME,GRID_X,GRID_Y,ADMIN_PORT,UDP_PORT` (grid coordinates in regions, ports 0..65535).
/// The error quotes the text as `--relay '...'`.
Result<RelayLoadRegion> parse_relay_load_region(const std::string& text);

struct RelayLoadConfig {
    std::vector<RelayLoadRegion> regions;  ///< at least one
    int agents = 1000;          ///< simulated agents, spread over the regions, [1, 20000]
    double seconds = 30.0;      ///< sending time, (0, 3600]
    double rate_hz = 5.0;       ///< datagrams per agent per second, (0, 50]
    double spoof_per_s = 100.0; ///< spoofed datagrams per second, [0, 10000]
    int tick_ms = 50;           ///< the relays' tick: the drain time after sending, and reported
    std::string capture;        ///< webcam capture file (default ../shared/puppetry/…)
    unsigned seed = 1;          ///< positions and spoof victims
};

/// The figures of one run.
struct RelayLoadReport {
    std::size_t regions = 0, agents = 0;
    std::size_t pairs = 0;          ///< ordered in-range (sender, receiver) pairs
    std::size_t cross = 0;          ///< of which across a region border
    std::uint64_t sent_blocks = 0;
    std::uint64_t expected = 0;     ///< blocks owed to in-range receivers
    std::uint64_t delivered = 0;    ///< of those, received
    std::uint64_t unexpected = 0;   ///< received from a sender out of range (or unknown)
    std::uint64_t leaked = 0;       ///< spoofed blocks received by some agent
    std::uint64_t spoofs = 0;       ///< spoofed datagrams sent
    std::uint64_t dropped = 0;      ///< the relays' datagrams_spoofed + datagrams_no_circuit
    std::uint64_t rate_limited = 0; ///< the relays' datagrams_rate_limited
    double cpu_s = 0;               ///< the generator's CPU time (user + system), seconds
    double p99_ms = 0;              ///< latency p99, upper edge of its 0.5 ms bin
    /// delivered / expected (1 when nothing was expected).
    [[nodiscard]] double ratio() const {
        return expected ? static_cast<double>(delivered) / static_cast<double>(expected) : 1.0;
    }
};

/// Runs the load for `config.seconds` plus a drain of max(0.5 s, 10 ticks), blocking. Errors
/// (setup only): an unreadable or empty capture, too few file descriptors for the agents, a
/// socket that cannot be opened, an admin endpoint that does not issue credentials, a /stats
/// that does not answer in LLSD. Not thread-safe with itself (it raises RLIMIT_NOFILE).
Result<RelayLoadReport> run_relay_load(const RelayLoadConfig& config);

}  // namespace slanim
