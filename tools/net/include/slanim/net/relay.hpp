// SPDX-License-Identifier: MIT
// The puppetry relay: the region simulator's part of SL Puppetry (spec §9.1, §9.5), as a plain
// library class with no sockets and no threads, so every rule is testable directly.
// `slanim relay` (slanim::RelayServer, slanim/relay_server/relay_server.hpp) puts it behind HTTP and UDP.
//
// It keeps, per agent, the "Puppetry" capability state (transmit, receive, echo_back,
// event_size, range, subscriptions, mutes), the agent's last reported position and UDP
// endpoint, and at most kRelayBlocksPerSenderPerTick queued event blocks. Agents send datagrams
// in the framing of slanim/puppetry/datagram.hpp (blocks, position reports); tick() forwards
// each sender's queued blocks to every agent that should receive them, in the sender's
// framing (the datagram names the sender), and empties the queues.
//
// Forwarding rules, per sender S and candidate receiver R (docs/relay.md has the full text):
//   * S's blocks are discarded on arrival when S.transmit is off (spec §9.5 / "Puppetry
//     Network Control": the simulator discards puppetry data from a viewer that does not
//     transmit);
//   * R = S gets them only when S.echo_back is on (echo_back forces transmit and receive on);
//   * R ≠ S gets them when R.receive is on, R has not muted S, R has a known UDP endpoint, and
//     R subscribed to S or both positions are known and |pos(R) − pos(S)| ≤ R.range (the range
//     is the receiver's: an agent receives events from agents within its range);
//   * a block whose event payload exceeds the 200 bytes a viewer can receive (§9.2) is dropped
//     as malformed on arrival, and event_size is at most 210 (the 10-byte header + 200), so
//     no forwarded block overflows a viewer's receive buffer;
//   * a block longer than S.event_size (the block size the capability tells the sender to
//     pack to, §9.2 "per-block buffer = event_size") is truncated at a joint record boundary:
//     it keeps the leading events that fit whole and as many leading joint records of the
//     next event as fit (that event's joint count and payload length rewritten), so it stays
//     decodable; a block in which not even one record of its first event fits is dropped.
//     Both are counted.
//   * when more than kRelayBlocksPerSenderPerTick blocks arrive from one sender between two
//     ticks, only the newest ones are kept (slanim's own bound, the same as the playback's
//     PuppetryTiming::max_blocks_per_frame; the spec states no such limit: the viewer queues
//     every block it receives, §9.3); the older ones are dropped and counted.
//
// Authentication (docs/relay.md "Security"): agents exist only once credentials were issued to
// them (issue(), the admin endpoint): a random 128-bit capability token, the only way to reach
// the agent's capability over HTTP, and a circuit code; the agent's first datagram carries the
// code and binds its circuit to the source address, and its later datagrams from any other
// address are dropped and counted. Per-agent token buckets limit blocks/s and bytes/s.
//
// Federation (docs/relay.md "Federation", slanim/net/relay_bus.hpp): tick() can publish each
// sender's accepted blocks as one bus message; receive_bus_message() validates a neighbour's
// message and forwards its blocks at once by the same receiver rules, with global positions.
//
// Bounded memory and CPU under any input: at most RelayConfig::max_agents agents (each with
// fixed storage for its queued blocks, ≤ max_subscriptions + max_mutes ids), HTTP bodies of at
// most kRelayMaxHttpBody bytes, work per datagram linear in its size, work per tick
// O(senders with data × agents). Agents with no HTTP or UDP activity for idle_timeout_s are
// forgotten (their settings return to the defaults if they come back).
//
// Not thread-safe: one caller at a time (the command serialises HTTP, UDP and ticks with one
// mutex). Time is whatever monotonic clock the caller passes, in seconds.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slanim/formats/llsd.hpp"
#include "slanim/core/math.hpp"
#include "slanim/puppetry/event_block.hpp"
#include "slanim/puppetry/datagram.hpp"
#include "slanim/net/relay_bus.hpp"

namespace slanim {

/// Blocks kept per sender between two ticks: the newest ones. slanim's own bound (fixed memory
/// and work per sender under a flood), the same as PuppetryTiming::max_blocks_per_frame on the
/// receiving side; the spec gives no such limit (the viewer's handle_puppetry_data queues every
/// non-empty block, §9.3).
inline constexpr std::size_t kRelayBlocksPerSenderPerTick = 5;
/// Largest HTTP request body the capability accepts, bytes.
inline constexpr std::size_t kRelayMaxHttpBody = 64 * 1024;
/// Smallest event_size a POST may set: the viewer packs nothing below 30 bytes (§9.2).
inline constexpr int kRelayMinEventSize = 30;
/// Largest event_size: a 10-byte event header + the 200-byte payload a viewer can receive
/// (`PUPPET_MAX_EVENT_BYTES`, §9.2), below the 255 of the 1-byte TypeData length prefix (§9.1).
inline constexpr int kRelayMaxEventSize = static_cast<int>(kPuppetryMaxEventBlockBytes);

/// A capability token: 128 random bits, written in paths as 32 lowercase hex digits.
using RelayToken = std::array<std::uint8_t, 16>;

/// What the relay issues to an agent (docs/relay.md "Security"): its capability (the path
/// `/cap/<token hex>`, like the simulator's private capability URLs `.../cap/<uuid>` that the
/// viewer gets from its seed capability, LLViewerRegion::setSeedCapability) and the circuit
/// code its first datagram must carry (the viewer's UseCircuitCode, sent first to every
/// simulator it talks to: llstartup.cpp, process_teleport_finish).
struct RelayCredentials {
    RelayToken token{};
    std::uint32_t circuit_code = 0;
    /// `/cap/` followed by the token as 32 lowercase hex digits.
    [[nodiscard]] std::string capability_path() const;
};

/// Fresh credentials from the kernel's random source (getrandom(2), blocking until it is
/// seeded); an error only when the kernel refuses.
Result<RelayCredentials> random_relay_credentials();

/// One agent's Puppetry capability state, as GET returns it (spec §9.5).
struct RelayCapability {
    bool transmit = true;    ///< the relay accepts the agent's blocks
    bool receive = true;     ///< the relay forwards other agents' blocks to it
    bool echo_back = false;  ///< its own blocks come back to it (forces transmit and receive)
    int event_size = kRelayMaxEventSize;  ///< block size the agent packs to, bytes, [30, 210]
    double range = 25.0;     ///< metres: receives agents within this distance, [0, max_range_m]
};

/// Relay limits and defaults.
struct RelayConfig {
    RelayCapability defaults;         ///< capability of a new agent
    PuppetryLayout layout = PuppetryLayout::Viewer;  ///< how blocks are validated/truncated
    std::size_t max_agents = 1024;    ///< agents known at once; new ones are refused past it
    std::size_t max_subscriptions = 10;  ///< per agent (the capability's limit)
    std::size_t max_mutes = 100;      ///< per agent
    double max_range_m = 4096.0;      ///< largest range a POST may set, metres
    double idle_timeout_s = 60.0;     ///< an agent silent for this long (HTTP and UDP) is removed
    /// Per-agent rate limit on its datagrams (token buckets holding one second's worth): at most
    /// this many blocks per second (≥ 1) ...
    double max_blocks_per_s = 200.0;
    /// ... and this many datagram bytes per second (≥ one largest datagram, 65299). A datagram
    /// over either budget is dropped whole (datagrams_rate_limited, blocks_rate_limited).
    double max_bytes_per_s = 65536.0;
    /// Global metres of the region's south-west corner (federation: positions on the bus are
    /// region frame + origin; slanim/net/relay_bus.hpp). 0, 0 for a relay alone.
    double origin_x = 0.0, origin_y = 0.0;

    /// Error naming the first field out of range: defaults outside the POST ranges, zero
    /// limits, a non-finite or non-positive timeout or range cap.
    [[nodiscard]] Result<bool> validate() const;
};

/// An IPv4 UDP endpoint, host byte order (the relay only stores and returns it).
struct RelayEndpoint {
    std::uint32_t address = 0;
    std::uint16_t port = 0;
    friend bool operator==(const RelayEndpoint&, const RelayEndpoint&) = default;
};

/// Counters since construction (monotonic) and gauges (current values). A "delivery" is one
/// sender's blocks of one tick offered to one receiver.
struct RelayCounters {
    // UDP input.
    std::uint64_t datagrams_received = 0;      ///< every datagram passed to receive_datagram
    std::uint64_t datagrams_malformed = 0;     ///< framing errors (puppetry::decode_datagram), dropped whole
    // Authentication and rate limits (each datagram counted here is dropped whole).
    std::uint64_t credentials_issued = 0;      ///< issue() calls that succeeded
    std::uint64_t credentials_revoked = 0;     ///< revoke() calls that removed an agent
    std::uint64_t circuits_opened = 0;         ///< use-circuit-code datagrams with the issued code
    std::uint64_t circuits_refused = 0;        ///< ... with another code, or for an unknown agent
    std::uint64_t datagrams_unknown_agent = 0; ///< blocks/position datagrams of no issued agent
    std::uint64_t datagrams_no_circuit = 0;    ///< ... of an agent whose circuit is not open
    std::uint64_t datagrams_spoofed = 0;       ///< ... from an address other than its circuit's
    std::uint64_t datagrams_rate_limited = 0;  ///< ... over the agent's blocks/s or bytes/s
    std::uint64_t blocks_rate_limited = 0;     ///< blocks in the rate-limited datagrams
    std::uint64_t position_reports = 0;        ///< valid position reports
    std::uint64_t blocks_received = 0;         ///< blocks in valid blocks datagrams
    std::uint64_t blocks_malformed = 0;        ///< blocks the puppetry decoder rejects, dropped
    std::uint64_t blocks_not_transmitting = 0; ///< from a sender with transmit off, dropped
    std::uint64_t blocks_truncated = 0;        ///< over the sender's event_size, cut to fit
    std::uint64_t blocks_too_large = 0;        ///< over event_size with no joint fitting, dropped
    std::uint64_t blocks_overload_dropped = 0; ///< older than the newest 5 of a tick, dropped
    std::uint64_t blocks_queued = 0;           ///< accepted into a sender's queue
    // Forwarding (tick).
    std::uint64_t ticks = 0;
    std::uint64_t deliveries = 0;                 ///< (sender, receiver) pairs served
    std::uint64_t deliveries_muted = 0;           ///< skipped: the receiver muted the sender
    std::uint64_t deliveries_not_receiving = 0;   ///< skipped: in range/subscribed, receive off
    std::uint64_t deliveries_no_endpoint = 0;     ///< skipped: receiver's UDP address unknown
    std::uint64_t blocks_forwarded = 0;           ///< blocks sent, summed over receivers
    std::uint64_t datagrams_sent = 0;
    std::uint64_t bytes_sent = 0;
    // HTTP.
    std::uint64_t http_requests = 0;
    std::uint64_t http_bad_requests = 0;  ///< 400 answers (malformed bodies, limits, values)
    std::uint64_t http_not_found = 0;     ///< 404 and 405 answers
    std::uint64_t http_admin_requests = 0;  ///< requests to handle_admin_http
    // Bus (federation, docs/relay.md "Federation"). Published: one message per sender and tick.
    std::uint64_t bus_published = 0;          ///< messages handed to the publish callback
    std::uint64_t bus_publish_failed = 0;     ///< the callback refused them (broker unreachable)
    std::uint64_t bus_received = 0;           ///< every message passed to receive_bus_message
    std::uint64_t bus_oversized = 0;          ///< longer than kBusMaxMessageSize, dropped
    std::uint64_t bus_malformed = 0;          ///< other framing errors, dropped whole
    std::uint64_t bus_outside_region = 0;     ///< sender position outside the publishing region
    std::uint64_t bus_local_sender = 0;       ///< names an agent of this relay, dropped
    std::uint64_t bus_blocks_received = 0;    ///< blocks in valid messages
    std::uint64_t bus_blocks_malformed = 0;   ///< blocks the puppetry decoder rejects, dropped
    std::uint64_t bus_deliveries = 0;         ///< (remote sender, local receiver) pairs served
    std::uint64_t bus_disconnects = 0;        ///< connection to the broker lost
    std::uint64_t bus_reconnects = 0;         ///< connection to the broker back
    std::uint64_t bus_disconnected_ms = 0;    ///< total time without the broker (closed gaps)
    // Broker refusals (docs/relay.md "Security model"), counted by count_bus_failure.
    std::uint64_t bus_connect_failures = 0;   ///< connection attempts that failed, any reason
    std::uint64_t bus_auth_failures = 0;      ///< ... the broker refused the credentials
    std::uint64_t bus_tls_failures = 0;       ///< ... TLS failed (certificate, handshake)
    std::uint64_t bus_permission_errors = 0;  ///< publish/subscribe refused by the broker
    // Agents.
    std::uint64_t agents_created = 0;
    std::uint64_t agents_expired = 0;
    std::uint64_t agents_refused = 0;     ///< new agents refused because max_agents was reached
    // Gauges.
    std::uint64_t agents = 0;             ///< known now
    std::uint64_t blocks_held = 0;        ///< queued now
    std::uint64_t bytes_held = 0;         ///< bytes of the queued blocks now
    std::uint64_t bus_connected = 0;      ///< 1 while connected to the broker (0 alone)
};

/// What went wrong between a relay and its NATS broker (PuppetryRelay::count_bus_failure).
enum class RelayBusFailure {
    Unreachable,     ///< a connection attempt found no broker (refused, timed out, lost)
    Refused,         ///< a connection attempt the broker ended for another reason
    Authentication,  ///< the broker refused the credentials (or their absence)
    Tls,             ///< the TLS session could not be set up (certificate, handshake)
    Permission,      ///< the broker refused a publish or a subscription (permission violation)
};

/// The counters as an LLSD map keyed by the member names (integers; reals past 2^31 − 1).
Llsd relay_counters_llsd(const RelayCounters& c);

/// An HTTP answer of the capability: status and an LLSD XML body.
struct RelayHttpResponse {
    int status = 200;
    std::string body;  ///< LLSD XML (application/llsd+xml)
};

/// Called by tick() once per outgoing datagram: destination and bytes (valid during the call).
using RelaySendFn = std::function<void(const RelayEndpoint&, std::span<const std::uint8_t>)>;
/// Called by tick() once per bus message (slanim/net/relay_bus.hpp) to publish on the relay's
/// own subject; returns false when the message could not be handed to the broker.
using RelayPublishFn = std::function<bool(std::span<const std::uint8_t>)>;

/// The relay state machine. See the file comment for the rules.
class PuppetryRelay {
public:
    /// Precondition: config.validate() succeeded (else the defaults are used and
    /// config_error() tells why).
    explicit PuppetryRelay(RelayConfig config = {});
    ~PuppetryRelay();
    PuppetryRelay(const PuppetryRelay&) = delete;
    PuppetryRelay& operator=(const PuppetryRelay&) = delete;

    [[nodiscard]] const RelayConfig& config() const { return config_; }

    /// The capability over HTTP (the public port). `method` "GET" or "POST", `path` the
    /// request path:
    ///  * `/cap/<token>` — the capability of the agent the token was issued to (issue()); the
    ///    token is 32 lowercase hex digits, compared in constant time with every issued token.
    ///    GET answers the agent's state as an LLSD map
    ///    {transmit, receive, echo_back (booleans), event_size (integer), range (real),
    ///    subscribe, mute (arrays of uuid, sorted)}; POST takes an LLSD map with any subset of
    ///    transmit, receive, echo_back (boolean), event_size (integer 30..210), range (number
    ///    0..max_range_m), subscribe, unsubscribe, mute, unmute (arrays of uuid; a string in
    ///    the 36-character form is accepted as a uuid), applies all of it or nothing, and
    ///    answers like GET. Removals are applied before additions; echo_back on forces
    ///    transmit and receive on (a transmit/receive false in the same or a later POST is
    ///    overridden while echo_back stays on).
    ///  * `/stats` — GET answers the counters as an LLSD map (integers; reals past 2^31).
    /// Errors answer an LLSD map {error: reason, field: name (when one field is at fault),
    /// limit: N (for the list limits)}: 400 for a body that is not LLSD XML, not a map, longer
    /// than kRelayMaxHttpBody, with an unknown key, a value of the wrong type or range, the
    /// agent itself or the null uuid in a list, or a list past its limit; 404 {error: "not
    /// found"}, the same for every case, for another path or an unknown, malformed or revoked
    /// token; 405 for another method on a valid capability or /stats. Every capability request
    /// refreshes the agent's idle timer.
    RelayHttpResponse handle_http(std::string_view method, std::string_view path,
                                  std::string_view body, double now_s);

    /// Issues `fresh` (normally random_relay_credentials()) to `agent`, creating it with the
    /// default capability when unknown, else replacing its token and code (the old ones stop
    /// working; its circuit is closed until a datagram carries the new code). Errors: the null
    /// agent, an all-zero token, max_agents reached (agents_refused).
    Result<RelayCredentials> issue(const Uuid& agent, const RelayCredentials& fresh, double now_s);
    /// Forgets the agent and its credentials; false when unknown.
    bool revoke(const Uuid& agent);

    /// The admin endpoint (its own port, bound to loopback by the command): `POST
    /// /agent/<uuid>` issues `fresh` to the agent and answers {agent_id (uuid), capability
    /// (string: the path), circuit_code (integer: the U32's bits as a signed 32-bit LLSD
    /// integer)}; 503 {error} past max_agents. `DELETE /agent/<uuid>` revokes (404 when
    /// unknown). `GET /stats` as on the public port. Other paths 404, other methods 405.
    RelayHttpResponse handle_admin_http(std::string_view method, std::string_view path,
                                        double now_s, const RelayCredentials& fresh);

    /// One UDP datagram from `from`. A use-circuit-code datagram carrying the code issued to
    /// its agent opens the agent's circuit at `from` (and moves it there if it was elsewhere);
    /// any other code, or an unknown agent, is refused (circuits_refused). Blocks and position
    /// datagrams are dropped and counted when their agent was never issued credentials
    /// (datagrams_unknown_agent), has no open circuit (datagrams_no_circuit), or is bound to
    /// another address (datagrams_spoofed), or when they exceed the agent's rate limit
    /// (datagrams_rate_limited). Otherwise they refresh the idle timer; a position report sets
    /// the position; a blocks datagram queues its blocks (see the rules). Malformed datagrams
    /// and blocks are counted and dropped; nothing is sent here; no agent is created here.
    void receive_datagram(std::span<const std::uint8_t> bytes, const RelayEndpoint& from,
                          double now_s);

    /// Forwards every queued block (see the rules) through `send`, empties the queues, then
    /// removes agents idle for longer than idle_timeout_s. Datagrams hold consecutive blocks of
    /// one sender and stay within puppetry::kDatagramSoftLimit bytes.
    /// With `publish`, each sender's accepted blocks of the tick (after transmit, event_size
    /// and the newest-5 rule) are also published as one bus message carrying the sender's id
    /// and global position (region position + config origin), whoever receives them locally.
    void tick(double now_s, const RelaySendFn& send, const RelayPublishFn& publish = {});

    /// One message from the bus, published by the relay of the region whose south-west corner
    /// is (`origin_x`, `origin_y`) global metres. Validated like a datagram: framing
    /// (decode_bus_message), the sender's position inside that region's 256 m square (when
    /// known), a sender that is not one of this relay's agents, every block through the
    /// puppetry decoder of config().layout; failures are counted and dropped. The valid blocks
    /// are forwarded at once through `send` to this relay's agents by the rules that apply
    /// within a region (range from the global positions, subscribe, mute, receive, endpoint;
    /// the sender's relay already applied transmit, event_size and the newest-5 rule).
    void receive_bus_message(std::span<const std::uint8_t> bytes, double origin_x,
                             double origin_y, double now_s, const RelaySendFn& send);

    /// Records the broker connection state (counters bus_connected, bus_disconnects,
    /// bus_reconnects, bus_disconnected_ms). The first call with `connected` true is the
    /// initial connection, not a reconnect.
    void set_bus_connected(bool connected, double now_s);
    /// Counts a broker failure: Permission in bus_permission_errors; every other kind in
    /// bus_connect_failures, Authentication also in bus_auth_failures and Tls in
    /// bus_tls_failures.
    void count_bus_failure(RelayBusFailure what);

    /// The agent's capability state; nullopt when the agent is unknown.
    [[nodiscard]] std::optional<RelayCapability> capability(const Uuid& agent) const;
    /// The agent's subscriptions / mutes (sorted); empty when unknown.
    [[nodiscard]] std::vector<Uuid> subscriptions(const Uuid& agent) const;
    [[nodiscard]] std::vector<Uuid> mutes(const Uuid& agent) const;
    /// The agent's last reported position (metres, region frame); nullopt when none.
    [[nodiscard]] std::optional<Vec3> position(const Uuid& agent) const;

    [[nodiscard]] const RelayCounters& counters() const { return counters_; }
    /// The counters as an LLSD map (the `/stats` body).
    [[nodiscard]] Llsd counters_llsd() const;
    /// Error from the constructor's config.validate(), if any.
    [[nodiscard]] const std::optional<Error>& config_error() const { return config_error_; }

private:
    struct Agent;
    Agent* find(const Uuid& id);
    const Agent* find(const Uuid& id) const;
    Agent* find_or_create(const Uuid& id, double now_s);
    Agent* find_by_token(const RelayToken& token);
    /// Takes `bytes` and `blocks` from the agent's buckets; false (nothing taken) when short.
    bool within_rate(Agent& a, std::size_t bytes, std::size_t blocks, double now_s);
    RelayHttpResponse capability_get(Agent& a) const;
    RelayHttpResponse capability_post(Agent& a, std::string_view body);
    void queue_block(Agent& a, std::span<const std::uint8_t> block);
    /// Cuts a decoded block to at most `limit` bytes at a record boundary into scratch_block_;
    /// returns its size, 0 when not even one joint record of the first event fits.
    std::size_t truncate_block(std::span<const std::uint8_t> block, std::size_t limit);
    RelayHttpResponse bad_request(std::string reason, std::string field = {},
                                  std::optional<std::size_t> limit = {});
    /// Encodes `blocks` of sender `id` into scratch_datagrams_ (groups within the soft limit);
    /// returns the number of datagrams, 0 on failure.
    std::size_t encode_forward(const Uuid& id, std::span<const std::span<const std::uint8_t>> blocks);
    /// Sends scratch_datagrams_[0, ngroups) to every agent that should receive sender `sid`
    /// (`local` when the sender is one of ours) at global position (gx, gy, gz).
    void deliver(const Uuid& sid, const Agent* local, bool has_pos, double gx, double gy,
                 double gz, std::size_t nblocks, std::size_t ngroups, const RelaySendFn& send);

    RelayConfig config_;
    std::optional<Error> config_error_;
    std::map<Uuid, std::unique_ptr<Agent>> agents_;
    RelayCounters counters_;
    // Scratch reused across ticks (no allocation once warm).
    std::vector<std::span<const std::uint8_t>> scratch_blocks_;
    std::array<std::vector<std::uint8_t>, kRelayBlocksPerSenderPerTick> scratch_datagrams_;
    std::vector<std::uint8_t> scratch_block_;
    std::vector<PuppetryEvent> scratch_events_;
    std::vector<std::uint8_t> scratch_bus_;
    std::vector<std::span<const std::uint8_t>> scratch_bus_blocks_;
    bool bus_ever_connected_ = false;
    bool bus_up_ = false;
    double bus_down_since_ = 0.0;
};

}  // namespace slanim
