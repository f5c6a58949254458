// SPDX-License-Identifier: MIT
// A relay's connection to its NATS broker (private to slanim::relay_server): credentials and TLS
// (relay_nats.hpp), one subscription per neighbour's subject, publication on the region's own
// subject, and a thread that (re)connects for as long as the link lives, reporting and
// counting what the broker refuses (docs/relay.md "Federation" and "Security model").
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "slanim/core/result.hpp"
#include "slanim/net/relay.hpp"
#include "slanim/relay_server/relay_nats.hpp"

namespace slanim {

/// What the link tells its owner. Called from the link's thread and the NATS client's threads,
/// never with the link's own locks held; each must be thread-safe.
struct NatsLinkHandlers {
    /// A message on the subject subscribe[neighbour]; the bytes live for the call only.
    std::function<void(std::size_t neighbour, std::span<const std::uint8_t> bytes)> message;
    std::function<void(bool connected)> state;     ///< connected, or the connection is gone
    std::function<void(RelayBusFailure)> failure;  ///< one failed attempt or broker refusal
    /// A warning line (already rate limited: at most one per kind of failure per 10 s, with the
    /// number of the others); may be empty.
    std::function<void(const std::string&)> log;
};

/// The link. It connects on its own thread: a first attempt at once, then after each failure
/// or loss a new attempt 250 ms later (after a refusal — credentials, TLS, another broker
/// error — the wait doubles up to 4 s, so a misconfigured relay does not hammer the broker).
/// Each connection renews the subscriptions. Messages are published only while connected;
/// nothing is buffered.
class NatsLink {
public:
    /// Checks the URL and loads the credentials and TLS files into the client's options (errors
    /// name the option and carry the client's reason), then starts connecting.
    static Result<std::unique_ptr<NatsLink>> start(const std::string& url, const RelayNatsAuth& auth,
                                                   std::string publish_subject,
                                                   std::vector<std::string> subscribe_subjects,
                                                   NatsLinkHandlers handlers);
    /// Stops (stop()).
    ~NatsLink();
    NatsLink(const NatsLink&) = delete;
    NatsLink& operator=(const NatsLink&) = delete;

    /// Publishes on the region's subject; false when not connected or the client refuses.
    /// Thread-safe.
    bool publish(std::span<const std::uint8_t> bytes);
    /// Closes the connection, waits (at most 2 s) for the client's pending callbacks and joins
    /// the thread; afterwards no handler is called. Idempotent.
    void stop();

    struct Impl;

private:
    explicit NatsLink(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace slanim
