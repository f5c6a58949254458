// SPDX-License-Identifier: MIT
// The puppetry relay service (what `slanim relay` runs): the Puppetry capability over HTTP
// (cpp-httplib, LLSD XML bodies) and puppetry datagrams over UDP
// (slanim/puppetry/datagram.hpp), both on the relay state machine of slanim/net/relay.hpp,
// ticked at a fixed interval; with a NATS URL, federated with the neighbouring regions' relays
// (slanim/net/relay_bus.hpp). docs/relay.md describes endpoints, bodies, framing, rules, limits
// and counters.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "slanim/core/result.hpp"
#include "slanim/net/relay.hpp"
#include "slanim/relay_server/relay_nats.hpp"

namespace slanim {

/// Where and how a RelayServer serves. Error messages name the fields by their `slanim relay`
/// options (--http, --tick-ms, ...).
struct RelayServerOptions {
    std::string http = "127.0.0.1:0";  ///< HOST:PORT (IPv4) for HTTP; port 0 picks a free one
    std::string udp = "127.0.0.1:0";   ///< HOST:PORT (IPv4) for UDP; port 0 picks a free one
    /// HOST:PORT for the admin endpoint (issues credentials); the host must be a loopback
    /// address (127.0.0.0/8); port 0 picks a free one.
    std::string admin = "127.0.0.1:0";
    int tick_ms = 50;                  ///< forwarding interval, milliseconds, [1, 10000]
    RelayConfig config;                ///< limits and defaults
    /// Federation (docs/relay.md "Federation"): a NATS URL (nats://127.0.0.1:4222); empty:
    /// the relay works alone. Needs `region` and `grid_file`.
    std::string nats_url;
    std::string region;     ///< this relay's region: a name in the grid file
    std::string grid_file;  ///< the grid file (slanim/net/relay_bus.hpp); sets config origin
    /// Credentials and TLS for the broker (relay_nats.hpp); the URL may carry credentials too
    /// (`slanim relay` refuses that on its command line).
    RelayNatsAuth nats_auth;
    /// Warnings about the broker (refused credentials, TLS failures, permission violations), one
    /// line each, at most one per kind per 10 s; called from the NATS client's threads. Empty:
    /// dropped (the counters still count).
    std::function<void(const std::string&)> log;
};

/// A running relay: both sockets bound, an HTTP server thread (pool) and one UDP thread that
/// receives datagrams and ticks the relay. With `nats_url`, a NATS connection (the C client's
/// own threads) publishes each tick's accepted blocks on the region's subject and delivers the
/// neighbours' messages; it connects in the background, retries and reconnects forever (every
/// 250 ms; after a refusal — credentials, TLS — waiting up to 4 s), so the relay serves its
/// own region whether or not the broker is up or accepts it; refusals are counted
/// (bus_connect_failures, bus_auth_failures, bus_tls_failures, bus_permission_errors) and
/// reported through `log`. All access to
/// the state machine is serialised by one mutex. Stopped (connection closed, threads joined,
/// sockets closed) by stop() or the destructor.
class RelayServer {
public:
    /// Binds both sockets and starts the threads. Errors: a malformed HOST:PORT, a tick outside
    /// [1, 10000] ms, an invalid config, a socket that cannot be bound, an admin address that
    /// is not loopback; with `nats_url`: no
    /// region or grid file, an unreadable or malformed grid file, a region it does not list, a
    /// URL the NATS client refuses, a TLS file (CA, certificate, key) it cannot load or a
    /// credentials file it refuses. What the broker answers is not an error here (see above).
    static Result<std::unique_ptr<RelayServer>> start(const RelayServerOptions& options);
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

}  // namespace slanim
