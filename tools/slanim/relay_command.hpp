// SPDX-License-Identifier: MIT
// `slanim relay`: the puppetry relay service. The Puppetry capability over HTTP (cpp-httplib,
// LLSD XML bodies) and puppetry datagrams over UDP (slanim/puppetry/datagram.hpp), both on
// the relay state machine of slanim/runtime/puppetry_relay.hpp, ticked at a fixed interval.
// docs/relay.md describes endpoints, bodies, framing, rules, limits and counters.
#pragma once

#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>

#include "slanim/core/result.hpp"
#include "slanim/net/relay.hpp"

namespace CLI {
class App;
}

namespace slanim::cli {

struct RelayOptions {
    std::string http = "127.0.0.1:0";  ///< HOST:PORT (IPv4) for HTTP; port 0 picks a free one
    std::string udp = "127.0.0.1:0";   ///< HOST:PORT (IPv4) for UDP; port 0 picks a free one
    /// HOST:PORT for the admin endpoint (issues credentials); the host must be a loopback
    /// address (127.0.0.0/8); port 0 picks a free one.
    std::string admin = "127.0.0.1:0";
    int tick_ms = 50;                  ///< forwarding interval, milliseconds, [1, 10000]
    double duration_s = 0.0;           ///< > 0: stop after this many seconds; 0: until a signal
    RelayConfig config;                ///< limits and defaults
    /// Federation (docs/relay.md "Federation"): a NATS URL (nats://127.0.0.1:4222); empty:
    /// the relay works alone. Needs `region` and `grid_file`.
    std::string nats_url;
    std::string region;     ///< this relay's region: a name in the grid file
    std::string grid_file;  ///< the grid file (slanim/net/relay_bus.hpp); sets config origin
};

/// A running relay: both sockets bound, an HTTP server thread (pool) and one UDP thread that
/// receives datagrams and ticks the relay. With `nats_url`, a NATS connection (the C client's
/// own threads) publishes each tick's accepted blocks on the region's subject and delivers the
/// neighbours' messages; it connects in the background, retries and reconnects forever (every
/// 250 ms), so the relay serves its own region whether or not the broker is up. All access to
/// the state machine is serialised by one mutex. Stopped (connection closed, threads joined,
/// sockets closed) by stop() or the destructor.
class RelayServer {
public:
    /// Binds both sockets and starts the threads. Errors: a malformed HOST:PORT, a tick outside
    /// [1, 10000] ms, an invalid config, a socket that cannot be bound, an admin address that
    /// is not loopback; with `nats_url`: no
    /// region or grid file, an unreadable or malformed grid file, a region it does not list, a
    /// URL the NATS client refuses.
    static Result<std::unique_ptr<RelayServer>> start(const RelayOptions& options);
    ~RelayServer();
    RelayServer(const RelayServer&) = delete;
    RelayServer& operator=(const RelayServer&) = delete;

    [[nodiscard]] int http_port() const;
    [[nodiscard]] int udp_port() const;
    [[nodiscard]] int admin_port() const;
    /// A consistent copy of the relay's counters.
    [[nodiscard]] RelayCounters counters() const;
    /// UDP send failures (sendto errors other than a full buffer are counted too).
    [[nodiscard]] std::uint64_t send_errors() const;
    /// Stops and joins the threads. Idempotent.
    void stop();

    struct Impl;

private:
    explicit RelayServer(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

/// Registers the `relay` subcommand on `app`, filling `o`.
CLI::App* add_relay_subcommand(CLI::App& app, RelayOptions& o);

/// Runs it: starts the server, prints `http HOST:PORT`, `udp HOST:PORT` and `admin HOST:PORT`
/// lines (and `region NAME` with --nats) on `out`
/// (flushed, so a parent process can read the chosen ports), serves until SIGINT/SIGTERM or
/// `duration_s`, then prints the counters on `out` as one `stats {...}` JSON line.
/// Exit status: 0 after a clean stop, 1 when a socket cannot be bound, 2 usage error.
int cmd_relay(std::ostream& out, std::ostream& err, const RelayOptions& o);

}  // namespace slanim::cli
