// SPDX-License-Identifier: MIT
// The puppetry relay state machine. See slanim/net/relay.hpp and docs/relay.md for the rules.
#include "slanim/net/relay.hpp"

#include <fmt/format.h>

#include <sys/random.h>

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

namespace slanim {

namespace pn = puppetry;

struct PuppetryRelay::Agent {
    struct Slot {
        std::uint8_t size = 0;
        std::array<std::uint8_t, pn::kMaxBlockSize> bytes{};
    };

    Uuid id;
    RelayCapability cap;
    std::vector<Uuid> subscriptions;  ///< sorted, unique
    std::vector<Uuid> mutes;          ///< sorted, unique
    bool has_position = false;
    Vec3 position;
    bool has_endpoint = false;
    RelayEndpoint endpoint;
    double last_seen = 0.0;
    // Authentication: the credentials issued to the agent, and its circuit (bound by a
    // use-circuit-code datagram to the endpoint it came from).
    RelayCredentials creds;
    bool circuit = false;
    // Rate limit: token buckets of blocks and bytes, refilled at the configured rates up to one
    // second's worth.
    double block_tokens = 0.0, byte_tokens = 0.0, bucket_time = 0.0;
    // Ring of the newest queued blocks, oldest at `head`.
    std::array<Slot, kRelayBlocksPerSenderPerTick> ring;
    std::size_t head = 0, count = 0;

    [[nodiscard]] bool subscribed_to(const Uuid& s) const {
        return std::binary_search(subscriptions.begin(), subscriptions.end(), s);
    }
    [[nodiscard]] bool muted(const Uuid& s) const {
        return std::binary_search(mutes.begin(), mutes.end(), s);
    }
    [[nodiscard]] const Slot& slot(std::size_t i) const {
        return ring[(head + i) % ring.size()];
    }
};

namespace {

constexpr std::string_view kAgentPrefix = "/agent/";
constexpr std::string_view kCapPrefix = "/cap/";
constexpr std::size_t kUuidTextSize = 36;
constexpr std::size_t kTokenBytes = 16;

// 32 lowercase hex digits → 16 bytes; anything else fails.
bool parse_token(std::string_view hex, RelayToken& out) {
    if (hex.size() != 2 * kTokenBytes) return false;
    auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    };
    for (std::size_t i = 0; i < kTokenBytes; ++i) {
        const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        out[i] = static_cast<std::uint8_t>(hi * 16 + lo);
    }
    return true;
}

// 0 when equal; the time taken does not depend on where the bytes differ.
unsigned constant_time_diff(const RelayToken& a, const RelayToken& b) {
    unsigned d = 0;
    for (std::size_t i = 0; i < kTokenBytes; ++i) d |= static_cast<unsigned>(a[i] ^ b[i]);
    return d;
}

RelayHttpResponse llsd_response(int status, const Llsd& body) {
    return RelayHttpResponse{status, format_llsd_xml(body)};
}

RelayHttpResponse error_response(int status, std::string reason) {
    Llsd::Map m;
    m.emplace("error", Llsd(std::move(reason)));
    return llsd_response(status, Llsd(std::move(m)));
}

Llsd uuid_array(const std::vector<Uuid>& ids) {
    Llsd::Array a;
    a.reserve(ids.size());
    for (const auto& id : ids) a.emplace_back(id);
    return Llsd(std::move(a));
}

Llsd counter_value(std::uint64_t v) {
    if (v <= static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max()))
        return Llsd(static_cast<std::int32_t>(v));
    return Llsd(static_cast<double>(v));
}

// Sorted-unique set algebra on small vectors.
std::vector<Uuid> set_apply(std::vector<Uuid> current, const std::vector<Uuid>& remove,
                            const std::vector<Uuid>& add) {
    std::erase_if(current, [&](const Uuid& u) {
        return std::find(remove.begin(), remove.end(), u) != remove.end();
    });
    for (const auto& u : add)
        if (!std::binary_search(current.begin(), current.end(), u))
            current.insert(std::upper_bound(current.begin(), current.end(), u), u);
    return current;
}

}  // namespace

Result<bool> RelayConfig::validate() const {
    auto bad = [](std::string m) { return Error{std::move(m)}; };
    if (max_agents == 0) return bad("relay config: max_agents must be at least 1");
    if (!std::isfinite(max_range_m) || max_range_m <= 0.0)
        return bad(fmt::format("relay config: max_range_m must be a positive finite number of "
                               "metres, got {}", max_range_m));
    if (!std::isfinite(max_blocks_per_s) || max_blocks_per_s < 1.0)
        return bad(fmt::format("relay config: max_blocks_per_s must be at least 1, got {}", max_blocks_per_s));
    if (!std::isfinite(max_bytes_per_s) || max_bytes_per_s < double(pn::kMaxDatagramSize))
        return bad(fmt::format("relay config: max_bytes_per_s must be at least {} (one datagram), got {}",
                               pn::kMaxDatagramSize, max_bytes_per_s));
    if (!std::isfinite(origin_x) || !std::isfinite(origin_y))
        return bad("relay config: the region origin must be finite");
    if (!std::isfinite(idle_timeout_s) || idle_timeout_s <= 0.0)
        return bad(fmt::format("relay config: idle_timeout_s must be a positive finite number "
                               "of seconds, got {}", idle_timeout_s));
    if (defaults.event_size < kRelayMinEventSize || defaults.event_size > kRelayMaxEventSize)
        return bad(fmt::format("relay config: default event_size must be in [{}, {}], got {}",
                               kRelayMinEventSize, kRelayMaxEventSize, defaults.event_size));
    if (!std::isfinite(defaults.range) || defaults.range < 0.0 || defaults.range > max_range_m)
        return bad(fmt::format("relay config: default range must be in [0, {}] m, got {}",
                               max_range_m, defaults.range));
    return true;
}

PuppetryRelay::PuppetryRelay(RelayConfig config) : config_(config) {
    if (auto v = config_.validate(); !v) {
        config_error_ = v.error();
        config_ = RelayConfig{};
    }
    if (config_.defaults.echo_back) {
        config_.defaults.transmit = true;
        config_.defaults.receive = true;
    }
    scratch_blocks_.reserve(kRelayBlocksPerSenderPerTick);
    for (auto& d : scratch_datagrams_) d.reserve(pn::kDatagramSoftLimit + pn::kMaxBlockSize + 1);
    scratch_block_.reserve(pn::kMaxBlockSize);
}

PuppetryRelay::~PuppetryRelay() = default;

PuppetryRelay::Agent* PuppetryRelay::find(const Uuid& id) {
    auto it = agents_.find(id);
    return it == agents_.end() ? nullptr : it->second.get();
}

const PuppetryRelay::Agent* PuppetryRelay::find(const Uuid& id) const {
    auto it = agents_.find(id);
    return it == agents_.end() ? nullptr : it->second.get();
}

PuppetryRelay::Agent* PuppetryRelay::find_or_create(const Uuid& id, double now_s) {
    if (Agent* a = find(id)) {
        a->last_seen = now_s;
        return a;
    }
    if (agents_.size() >= config_.max_agents) {
        ++counters_.agents_refused;
        return nullptr;
    }
    auto a = std::make_unique<Agent>();
    a->id = id;
    a->cap = config_.defaults;
    a->last_seen = now_s;
    a->bucket_time = now_s;
    a->block_tokens = config_.max_blocks_per_s;
    a->byte_tokens = config_.max_bytes_per_s;
    Agent* raw = a.get();
    agents_.emplace(id, std::move(a));
    ++counters_.agents_created;
    counters_.agents = agents_.size();
    return raw;
}

std::optional<RelayCapability> PuppetryRelay::capability(const Uuid& agent) const {
    if (const Agent* a = find(agent)) return a->cap;
    return std::nullopt;
}

std::vector<Uuid> PuppetryRelay::subscriptions(const Uuid& agent) const {
    if (const Agent* a = find(agent)) return a->subscriptions;
    return {};
}

std::vector<Uuid> PuppetryRelay::mutes(const Uuid& agent) const {
    if (const Agent* a = find(agent)) return a->mutes;
    return {};
}

std::optional<Vec3> PuppetryRelay::position(const Uuid& agent) const {
    if (const Agent* a = find(agent); a && a->has_position) return a->position;
    return std::nullopt;
}

// ---- authentication ----------------------------------------------------------------------

std::string RelayCredentials::capability_path() const {
    std::string p(kCapPrefix);
    for (std::uint8_t b : token) p += fmt::format("{:02x}", b);
    return p;
}

Result<RelayCredentials> random_relay_credentials() {
    RelayCredentials c;
    std::array<std::uint8_t, kTokenBytes + 4> bytes{};
    std::size_t got = 0;
    while (got < bytes.size()) {
        const ssize_t n = ::getrandom(bytes.data() + got, bytes.size() - got, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return Error{fmt::format("getrandom: {}", std::strerror(errno))};
        }
        got += static_cast<std::size_t>(n);
    }
    std::memcpy(c.token.data(), bytes.data(), kTokenBytes);
    c.circuit_code = static_cast<std::uint32_t>(bytes[16]) | (static_cast<std::uint32_t>(bytes[17]) << 8) |
                     (static_cast<std::uint32_t>(bytes[18]) << 16) | (static_cast<std::uint32_t>(bytes[19]) << 24);
    return c;
}

PuppetryRelay::Agent* PuppetryRelay::find_by_token(const RelayToken& token) {
    // Every issued token is compared, each in constant time, and the loop never stops early:
    // the time taken says nothing about which token, or how much of one, matched.
    Agent* found = nullptr;
    for (auto& [id, a] : agents_) {
        const unsigned d = constant_time_diff(a->creds.token, token);
        found = d == 0 ? a.get() : found;
    }
    return found;
}

Result<RelayCredentials> PuppetryRelay::issue(const Uuid& agent, const RelayCredentials& fresh,
                                              double now_s) {
    if (agent.is_null()) return Error{"relay: cannot issue credentials to the null agent"};
    const RelayToken zero{};
    if (constant_time_diff(fresh.token, zero) == 0)
        return Error{"relay: refusing an all-zero capability token"};
    Agent* a = find_or_create(agent, now_s);
    if (!a)
        return Error{fmt::format("relay: the relay already serves {} agents (its limit)",
                                 config_.max_agents)};
    a->creds = fresh;
    a->circuit = false;  // a new code opens a new circuit
    a->has_endpoint = false;
    a->last_seen = now_s;
    ++counters_.credentials_issued;
    return fresh;
}

bool PuppetryRelay::revoke(const Uuid& agent) {
    auto it = agents_.find(agent);
    if (it == agents_.end()) return false;
    const Agent& a = *it->second;
    for (std::size_t i = 0; i < a.count; ++i) counters_.bytes_held -= a.slot(i).size;
    counters_.blocks_held -= a.count;
    agents_.erase(it);
    ++counters_.credentials_revoked;
    counters_.agents = agents_.size();
    return true;
}

RelayHttpResponse PuppetryRelay::handle_admin_http(std::string_view method, std::string_view path,
                                                   double now_s, const RelayCredentials& fresh) {
    ++counters_.http_admin_requests;
    if (path == "/stats" && method == "GET") return llsd_response(200, counters_llsd());
    std::optional<Uuid> id;
    if (path.size() == kAgentPrefix.size() + kUuidTextSize && path.starts_with(kAgentPrefix))
        id = Uuid::parse(path.substr(kAgentPrefix.size()));
    if (!id || id->is_null())
        return error_response(404, "no such resource: the admin endpoint is /agent/<agent uuid> "
                                   "(POST issues credentials, DELETE revokes them) and /stats");
    if (method == "POST") {
        auto c = issue(*id, fresh, now_s);
        if (!c) return error_response(503, c.error().message);
        Llsd::Map m;
        m.emplace("agent_id", Llsd(*id));
        m.emplace("capability", Llsd(c->capability_path()));
        // LLSD integers are signed 32-bit: the code's bits, as the viewer's U32 Code field.
        m.emplace("circuit_code", Llsd(static_cast<std::int32_t>(c->circuit_code)));
        return llsd_response(200, Llsd(std::move(m)));
    }
    if (method == "DELETE") {
        if (!revoke(*id)) return error_response(404, "no such agent");
        return llsd_response(200, Llsd(Llsd::Map{}));
    }
    return error_response(405, fmt::format("/agent/<uuid> answers POST and DELETE, not {}",
                                           std::string(method.substr(0, 16))));
}

bool PuppetryRelay::within_rate(Agent& a, std::size_t bytes, std::size_t blocks, double now_s) {
    const double dt = std::max(0.0, now_s - a.bucket_time);
    a.bucket_time = now_s;
    a.byte_tokens = std::min(config_.max_bytes_per_s, a.byte_tokens + dt * config_.max_bytes_per_s);
    a.block_tokens = std::min(config_.max_blocks_per_s, a.block_tokens + dt * config_.max_blocks_per_s);
    if (a.byte_tokens < static_cast<double>(bytes) || a.block_tokens < static_cast<double>(blocks))
        return false;
    a.byte_tokens -= static_cast<double>(bytes);
    a.block_tokens -= static_cast<double>(blocks);
    return true;
}

// ---- HTTP --------------------------------------------------------------------------------

RelayHttpResponse PuppetryRelay::bad_request(std::string reason, std::string field,
                                             std::optional<std::size_t> limit) {
    ++counters_.http_bad_requests;
    Llsd::Map m;
    m.emplace("error", Llsd(std::move(reason)));
    if (!field.empty()) m.emplace("field", Llsd(std::move(field)));
    if (limit) m.emplace("limit", counter_value(*limit));
    return llsd_response(400, Llsd(std::move(m)));
}

RelayHttpResponse PuppetryRelay::handle_http(std::string_view method, std::string_view path,
                                             std::string_view body, double now_s) {
    ++counters_.http_requests;
    const bool get = method == "GET", post = method == "POST";
    if (path == "/stats") {
        if (!get) {
            ++counters_.http_not_found;
            return error_response(405, fmt::format("/stats answers GET only, not {}",
                                                    std::string(method.substr(0, 16))));
        }
        return llsd_response(200, counters_llsd());
    }
    Agent* a = nullptr;
    if (path.size() == kCapPrefix.size() + 2 * kTokenBytes && path.starts_with(kCapPrefix)) {
        RelayToken token{};
        if (parse_token(path.substr(kCapPrefix.size()), token)) a = find_by_token(token);
    }
    if (!a) {
        // The same answer for every unknown path and token: no hint of what exists.
        ++counters_.http_not_found;
        return error_response(404, "not found");
    }
    if (!get && !post) {
        ++counters_.http_not_found;
        return error_response(405, fmt::format("the puppetry capability answers GET and POST, "
                                               "not {}", std::string(method.substr(0, 16))));
    }
    a->last_seen = now_s;
    return get ? capability_get(*a) : capability_post(*a, body);
}

RelayHttpResponse PuppetryRelay::capability_get(Agent& a) const {
    Llsd::Map m;
    m.emplace("transmit", Llsd(a.cap.transmit));
    m.emplace("receive", Llsd(a.cap.receive));
    m.emplace("echo_back", Llsd(a.cap.echo_back));
    m.emplace("event_size", Llsd(static_cast<std::int32_t>(a.cap.event_size)));
    m.emplace("range", Llsd(a.cap.range));
    m.emplace("subscribe", uuid_array(a.subscriptions));
    m.emplace("mute", uuid_array(a.mutes));
    return llsd_response(200, Llsd(std::move(m)));
}

RelayHttpResponse PuppetryRelay::capability_post(Agent& a, std::string_view body) {
    if (body.size() > kRelayMaxHttpBody)
        return bad_request(fmt::format("body has {} bytes, more than the {} accepted",
                                       body.size(), kRelayMaxHttpBody));
    auto parsed = parse_llsd_xml(body);
    if (!parsed) return bad_request("body is not LLSD XML: " + parsed.error().describe());
    const Llsd::Map* map = parsed->if_map();
    if (!map)
        return bad_request(fmt::format("body must be an LLSD map, got {}",
                                       llsd_type_name(parsed->type())));

    RelayCapability cap = a.cap;
    std::vector<Uuid> lists[4];  // subscribe, unsubscribe, mute, unmute
    static constexpr std::string_view kListKeys[4] = {"subscribe", "unsubscribe", "mute",
                                                     "unmute"};
    for (const auto& [key, value] : *map) {
        if (key == "transmit" || key == "receive" || key == "echo_back") {
            const bool* b = value.if_boolean();
            if (!b)
                return bad_request(fmt::format("{} must be a boolean, got {}", key,
                                               llsd_type_name(value.type())),
                                   key);
            (key == "transmit" ? cap.transmit : key == "receive" ? cap.receive : cap.echo_back) =
                *b;
        } else if (key == "event_size") {
            const std::int32_t* i = value.if_integer();
            if (!i || *i < kRelayMinEventSize || *i > kRelayMaxEventSize)
                return bad_request(fmt::format("event_size must be an integer in [{}, {}] bytes ({}: the "
                                               "10-byte event header and the 200-byte payload a viewer "
                                               "can receive)",
                                               kRelayMinEventSize, kRelayMaxEventSize, kRelayMaxEventSize),
                                   key);
            cap.event_size = *i;
        } else if (key == "range") {
            const auto r = value.to_number();
            if (!r || !std::isfinite(*r) || *r < 0.0 || *r > config_.max_range_m)
                return bad_request(fmt::format("range must be a number of metres in [0, {}]",
                                               config_.max_range_m),
                                   key);
            cap.range = *r;
        } else {
            const auto* k = std::find(std::begin(kListKeys), std::end(kListKeys), key);
            if (k == std::end(kListKeys))
                return bad_request(
                    fmt::format("unknown field '{}' (expected transmit, receive, echo_back, "
                                "event_size, range, subscribe, unsubscribe, mute, unmute)",
                                key.substr(0, 64)),
                    key.substr(0, 64));
            const Llsd::Array* arr = value.if_array();
            if (!arr)
                return bad_request(fmt::format("{} must be an array of agent uuids, got {}", key,
                                               llsd_type_name(value.type())),
                                   key);
            auto& out = lists[k - std::begin(kListKeys)];
            // A list longer than the limit cannot be valid for additions; removals of more ids
            // than can be held are pointless too. Bounded work either way.
            const std::size_t cap_n = (k - std::begin(kListKeys)) < 2 ? config_.max_subscriptions
                                                                      : config_.max_mutes;
            if (arr->size() > cap_n)
                return bad_request(fmt::format("{} lists {} agents, more than the limit of {}",
                                               key, arr->size(), cap_n),
                                   key, cap_n);
            for (std::size_t i = 0; i < arr->size(); ++i) {
                const Llsd& e = (*arr)[i];
                std::optional<Uuid> u;
                if (const Uuid* p = e.if_uuid()) u = *p;
                else if (const std::string* s = e.if_string()) u = Uuid::parse(*s);
                if (!u || u->is_null())
                    return bad_request(fmt::format("{}[{}] is not a non-null agent uuid", key, i),
                                       key);
                if (*u == a.id)
                    return bad_request(
                        fmt::format("{}[{}] is the agent itself (its own blocks come back "
                                    "only with echo_back)",
                                    key, i),
                        key);
                out.push_back(*u);
            }
        }
    }
    auto subs = set_apply(a.subscriptions, lists[1], lists[0]);
    if (subs.size() > config_.max_subscriptions)
        return bad_request(fmt::format("subscribe: {} subscriptions would exceed the limit of {}",
                                       subs.size(), config_.max_subscriptions),
                           "subscribe", config_.max_subscriptions);
    auto mutes = set_apply(a.mutes, lists[3], lists[2]);
    if (mutes.size() > config_.max_mutes)
        return bad_request(fmt::format("mute: {} mutes would exceed the limit of {}",
                                       mutes.size(), config_.max_mutes),
                           "mute", config_.max_mutes);
    if (cap.echo_back) {
        cap.transmit = true;
        cap.receive = true;
    }
    a.cap = cap;
    a.subscriptions = std::move(subs);
    a.mutes = std::move(mutes);
    return capability_get(a);
}

Llsd PuppetryRelay::counters_llsd() const { return relay_counters_llsd(counters_); }

Llsd relay_counters_llsd(const RelayCounters& c) {
    Llsd::Map m;
    auto put = [&m](const char* name, std::uint64_t v) { m.emplace(name, counter_value(v)); };
    put("datagrams_received", c.datagrams_received);
    put("datagrams_malformed", c.datagrams_malformed);
    put("position_reports", c.position_reports);
    put("blocks_received", c.blocks_received);
    put("blocks_malformed", c.blocks_malformed);
    put("blocks_not_transmitting", c.blocks_not_transmitting);
    put("blocks_truncated", c.blocks_truncated);
    put("blocks_too_large", c.blocks_too_large);
    put("blocks_overload_dropped", c.blocks_overload_dropped);
    put("blocks_queued", c.blocks_queued);
    put("ticks", c.ticks);
    put("deliveries", c.deliveries);
    put("deliveries_muted", c.deliveries_muted);
    put("deliveries_not_receiving", c.deliveries_not_receiving);
    put("deliveries_no_endpoint", c.deliveries_no_endpoint);
    put("blocks_forwarded", c.blocks_forwarded);
    put("datagrams_sent", c.datagrams_sent);
    put("bytes_sent", c.bytes_sent);
    put("http_requests", c.http_requests);
    put("http_bad_requests", c.http_bad_requests);
    put("http_not_found", c.http_not_found);
    put("credentials_issued", c.credentials_issued);
    put("credentials_revoked", c.credentials_revoked);
    put("circuits_opened", c.circuits_opened);
    put("circuits_refused", c.circuits_refused);
    put("datagrams_unknown_agent", c.datagrams_unknown_agent);
    put("datagrams_no_circuit", c.datagrams_no_circuit);
    put("datagrams_spoofed", c.datagrams_spoofed);
    put("datagrams_rate_limited", c.datagrams_rate_limited);
    put("blocks_rate_limited", c.blocks_rate_limited);
    put("http_admin_requests", c.http_admin_requests);
    put("bus_published", c.bus_published);
    put("bus_publish_failed", c.bus_publish_failed);
    put("bus_received", c.bus_received);
    put("bus_oversized", c.bus_oversized);
    put("bus_malformed", c.bus_malformed);
    put("bus_outside_region", c.bus_outside_region);
    put("bus_local_sender", c.bus_local_sender);
    put("bus_blocks_received", c.bus_blocks_received);
    put("bus_blocks_malformed", c.bus_blocks_malformed);
    put("bus_deliveries", c.bus_deliveries);
    put("bus_disconnects", c.bus_disconnects);
    put("bus_reconnects", c.bus_reconnects);
    put("bus_disconnected_ms", c.bus_disconnected_ms);
    put("bus_connect_failures", c.bus_connect_failures);
    put("bus_auth_failures", c.bus_auth_failures);
    put("bus_tls_failures", c.bus_tls_failures);
    put("bus_permission_errors", c.bus_permission_errors);
    put("bus_connected", c.bus_connected);
    put("agents_created", c.agents_created);
    put("agents_expired", c.agents_expired);
    put("agents_refused", c.agents_refused);
    put("agents", c.agents);
    put("blocks_held", c.blocks_held);
    put("bytes_held", c.bytes_held);
    return Llsd(std::move(m));
}

// ---- UDP ---------------------------------------------------------------------------------

void PuppetryRelay::receive_datagram(std::span<const std::uint8_t> bytes,
                                     const RelayEndpoint& from, double now_s) {
    ++counters_.datagrams_received;
    auto d = pn::decode_datagram(bytes);
    if (!d || d->agent.is_null()) {
        ++counters_.datagrams_malformed;
        return;
    }
    Agent* a = find(d->agent);
    if (!a) {  // never issued, revoked or expired
        ++(d->kind == pn::DatagramKind::UseCircuitCode ? counters_.circuits_refused
                                                       : counters_.datagrams_unknown_agent);
        return;
    }
    if (d->kind == pn::DatagramKind::UseCircuitCode) {
        // Opens (or moves) the agent's circuit to this address when the code is the one issued.
        if ((d->circuit_code ^ a->creds.circuit_code) != 0) {
            ++counters_.circuits_refused;
            return;
        }
        a->circuit = true;
        a->endpoint = from;
        a->has_endpoint = true;
        a->last_seen = now_s;
        ++counters_.circuits_opened;
        return;
    }
    if (!a->circuit) {
        ++counters_.datagrams_no_circuit;
        return;
    }
    if (from != a->endpoint) {  // the agent's id from another address: spoofed
        ++counters_.datagrams_spoofed;
        return;
    }
    const std::size_t nblocks = d->kind == pn::DatagramKind::Blocks ? d->blocks.size() : 0;
    if (!within_rate(*a, bytes.size(), nblocks, now_s)) {
        ++counters_.datagrams_rate_limited;
        counters_.blocks_rate_limited += nblocks;
        return;
    }
    a->last_seen = now_s;
    if (d->kind == pn::DatagramKind::PositionReport) {
        a->position = d->position;
        a->has_position = true;
        ++counters_.position_reports;
        return;
    }
    for (std::span<const std::uint8_t> block : d->blocks) {
        ++counters_.blocks_received;
        if (!a->cap.transmit) {
            ++counters_.blocks_not_transmitting;
            continue;
        }
        queue_block(*a, block);
    }
}

std::size_t PuppetryRelay::truncate_block(std::span<const std::uint8_t> block,
                                         std::size_t limit) {
    // Precondition: decode_puppetry_block accepted `block` (scratch_events_ holds its events),
    // so every header and record below is complete. Events are back to back, each a 10-byte
    // header (S32 timestamp, U16 joint count, S32 payload length) and its records.
    scratch_block_.clear();
    std::size_t at = 0;
    for (const PuppetryEvent& ev : scratch_events_) {
        const std::size_t payload = static_cast<std::size_t>(block[at + 6]) |
                                    (static_cast<std::size_t>(block[at + 7]) << 8) |
                                    (static_cast<std::size_t>(block[at + 8]) << 16) |
                                    (static_cast<std::size_t>(block[at + 9]) << 24);
        const std::size_t room = limit - scratch_block_.size();
        if (kPuppetryHeaderBytes + payload <= room) {  // the whole event fits
            scratch_block_.insert(scratch_block_.end(), block.begin() + at,
                                  block.begin() + at + kPuppetryHeaderBytes + payload);
            at += kPuppetryHeaderBytes + payload;
            continue;
        }
        // Keep the records that fit, then stop.
        std::size_t records = 0, bytes = 0;
        for (const PuppetryJointEvent& j : ev.joints) {
            const std::size_t r = puppetry_record_size(j.flags, config_.layout);
            if (kPuppetryHeaderBytes + bytes + r > room) break;
            bytes += r;
            ++records;
        }
        if (records > 0) {
            const std::size_t h = scratch_block_.size();
            scratch_block_.insert(scratch_block_.end(), block.begin() + at,
                                  block.begin() + at + kPuppetryHeaderBytes + bytes);
            scratch_block_[h + 4] = static_cast<std::uint8_t>(records);
            scratch_block_[h + 5] = static_cast<std::uint8_t>(records >> 8);
            scratch_block_[h + 6] = static_cast<std::uint8_t>(bytes);
            scratch_block_[h + 7] = static_cast<std::uint8_t>(bytes >> 8);
            scratch_block_[h + 8] = 0;
            scratch_block_[h + 9] = 0;
        }
        break;
    }
    return scratch_block_.size();
}

void PuppetryRelay::queue_block(Agent& a, std::span<const std::uint8_t> block) {
    // Validate the block as a receiver would decode it, then fit it to the sender's event_size.
    scratch_events_.clear();
    if (!decode_puppetry_block(block, config_.layout, scratch_events_)) {
        ++counters_.blocks_malformed;
        return;
    }
    std::span<const std::uint8_t> bytes = block;
    const auto limit = static_cast<std::size_t>(a.cap.event_size);
    if (block.size() > limit) {
        const std::size_t kept = truncate_block(block, limit);
        if (kept == 0) {
            ++counters_.blocks_too_large;
            return;
        }
        ++counters_.blocks_truncated;
        bytes = {scratch_block_.data(), kept};
    }
    if (a.count == a.ring.size()) {  // keep the newest: drop the oldest
        counters_.bytes_held -= a.ring[a.head].size;
        --counters_.blocks_held;
        a.head = (a.head + 1) % a.ring.size();
        --a.count;
        ++counters_.blocks_overload_dropped;
    }
    auto& slot = a.ring[(a.head + a.count) % a.ring.size()];
    slot.size = static_cast<std::uint8_t>(bytes.size());
    std::memcpy(slot.bytes.data(), bytes.data(), bytes.size());
    ++a.count;
    ++counters_.blocks_queued;
    ++counters_.blocks_held;
    counters_.bytes_held += bytes.size();
}

// ---- tick --------------------------------------------------------------------------------

std::size_t PuppetryRelay::encode_forward(const Uuid& id,
                                         std::span<const std::span<const std::uint8_t>> blocks) {
    // Group consecutive blocks into datagrams within the soft limit (at most one per block).
    std::size_t ngroups = 0, first = 0, size = pn::kDatagramHeaderSize + 1;
    auto flush = [&](std::size_t last) {
        return static_cast<bool>(
            pn::encode_blocks(id, blocks.subspan(first, last - first), scratch_datagrams_[ngroups++]));
    };
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        const std::size_t add = 1 + blocks[i].size();
        if (i > first && size + add > pn::kDatagramSoftLimit) {
            if (!flush(i)) return 0;
            first = i;
            size = pn::kDatagramHeaderSize + 1;
        }
        size += add;
    }
    if (!flush(blocks.size())) return 0;
    return ngroups;
}

void PuppetryRelay::deliver(const Uuid& sid, const Agent* local, bool has_pos, double gx,
                            double gy, double gz, std::size_t nblocks, std::size_t ngroups,
                            const RelaySendFn& send) {
    for (auto& [rid, rp] : agents_) {
        const Agent& r = *rp;
        if (&r == local) {
            if (!local->cap.echo_back) continue;
        } else {
            if (rid == sid) continue;  // a remote message naming one of ours (dropped earlier)
            const bool in_range = [&] {
                if (!r.has_position || !has_pos) return false;
                const double dx = (config_.origin_x + double(r.position.x)) - gx;
                const double dy = (config_.origin_y + double(r.position.y)) - gy;
                const double dz = double(r.position.z) - gz;
                return std::sqrt(dx * dx + dy * dy + dz * dz) <= r.cap.range;
            }();
            if (!in_range && !r.subscribed_to(sid)) continue;
            if (r.muted(sid)) {
                ++counters_.deliveries_muted;
                continue;
            }
            if (!r.cap.receive) {
                ++counters_.deliveries_not_receiving;
                continue;
            }
        }
        if (!r.has_endpoint) {
            ++counters_.deliveries_no_endpoint;
            continue;
        }
        ++counters_.deliveries;
        if (!local) ++counters_.bus_deliveries;
        counters_.blocks_forwarded += nblocks;
        for (std::size_t g = 0; g < ngroups; ++g) {
            send(r.endpoint, scratch_datagrams_[g]);
            ++counters_.datagrams_sent;
            counters_.bytes_sent += scratch_datagrams_[g].size();
        }
    }
}

void PuppetryRelay::tick(double now_s, const RelaySendFn& send, const RelayPublishFn& publish) {
    ++counters_.ticks;
    for (auto& [sid, sp] : agents_) {
        Agent& s = *sp;
        if (s.count == 0) continue;
        scratch_blocks_.clear();
        for (std::size_t i = 0; i < s.count; ++i)
            scratch_blocks_.emplace_back(s.slot(i).bytes.data(), s.slot(i).size);
        const double gx = config_.origin_x + double(s.position.x);
        const double gy = config_.origin_y + double(s.position.y);
        const double gz = double(s.position.z);
        if (const std::size_t ngroups = encode_forward(s.id, scratch_blocks_); ngroups > 0)
            deliver(s.id, &s, s.has_position, gx, gy, gz, s.count, ngroups, send);
        if (publish &&
            encode_bus_message(s.id, s.has_position, gx, gy, gz, scratch_blocks_, scratch_bus_)) {
            ++counters_.bus_published;
            if (!publish(scratch_bus_)) ++counters_.bus_publish_failed;
        }
        for (std::size_t i = 0; i < s.count; ++i) counters_.bytes_held -= s.slot(i).size;
        counters_.blocks_held -= s.count;
        s.head = 0;
        s.count = 0;
    }
    // Expire idle agents.
    for (auto it = agents_.begin(); it != agents_.end();) {
        if (now_s - it->second->last_seen > config_.idle_timeout_s) {
            const Agent& a = *it->second;
            for (std::size_t i = 0; i < a.count; ++i) counters_.bytes_held -= a.slot(i).size;
            counters_.blocks_held -= a.count;
            it = agents_.erase(it);
            ++counters_.agents_expired;
        } else {
            ++it;
        }
    }
    counters_.agents = agents_.size();
}

}  // namespace slanim

namespace slanim {

// ---- bus ---------------------------------------------------------------------------------

void PuppetryRelay::receive_bus_message(std::span<const std::uint8_t> bytes, double origin_x,
                                        double origin_y, double /*now_s*/,
                                        const RelaySendFn& send) {
    ++counters_.bus_received;
    BusMessage m;
    m.blocks.swap(scratch_bus_blocks_);
    BusFault fault{};
    const bool ok = static_cast<bool>(decode_bus_message(bytes, m, &fault));
    auto done = [&] { scratch_bus_blocks_.swap(m.blocks); };
    if (!ok) {
        ++(fault == BusFault::Oversize ? counters_.bus_oversized : counters_.bus_malformed);
        done();
        return;
    }
    // The publishing relay only knows positions inside its own region; a sender placed
    // elsewhere is a forgery or a broken relay. The square is closed on every side (an avatar
    // standing exactly on the border).
    if (m.has_position && (m.x < origin_x || m.x > origin_x + kRegionWidthM || m.y < origin_y ||
                           m.y > origin_y + kRegionWidthM || std::fabs(m.z) > 1.0e5)) {
        ++counters_.bus_outside_region;
        done();
        return;
    }
    if (find(m.sender)) {
        ++counters_.bus_local_sender;
        done();
        return;
    }
    // Keep the blocks the puppetry decoder accepts, in order.
    std::size_t kept = 0;
    for (std::size_t i = 0; i < m.blocks.size(); ++i) {
        ++counters_.bus_blocks_received;
        scratch_events_.clear();
        if (!decode_puppetry_block(m.blocks[i], config_.layout, scratch_events_)) {
            ++counters_.bus_blocks_malformed;
            continue;
        }
        m.blocks[kept++] = m.blocks[i];
    }
    m.blocks.resize(kept);
    if (kept > 0) {
        if (const std::size_t ngroups = encode_forward(m.sender, m.blocks); ngroups > 0)
            deliver(m.sender, nullptr, m.has_position, m.x, m.y, m.z, kept, ngroups, send);
    }
    done();
}

void PuppetryRelay::set_bus_connected(bool connected, double now_s) {
    if (connected == bus_up_) return;
    if (connected) {
        if (bus_ever_connected_) {
            ++counters_.bus_reconnects;
            const double gap = std::max(0.0, now_s - bus_down_since_);
            counters_.bus_disconnected_ms += static_cast<std::uint64_t>(std::llround(gap * 1000.0));
        }
        bus_ever_connected_ = true;
    } else {
        ++counters_.bus_disconnects;
        bus_down_since_ = now_s;
    }
    bus_up_ = connected;
    counters_.bus_connected = connected ? 1 : 0;
}

void PuppetryRelay::count_bus_failure(RelayBusFailure what) {
    if (what == RelayBusFailure::Permission) {
        ++counters_.bus_permission_errors;
        return;
    }
    ++counters_.bus_connect_failures;
    if (what == RelayBusFailure::Authentication) ++counters_.bus_auth_failures;
    if (what == RelayBusFailure::Tls) ++counters_.bus_tls_failures;
}

}  // namespace slanim
