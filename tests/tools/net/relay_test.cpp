// SPDX-License-Identifier: MIT
// The relay state machine without sockets: capability GET/POST, limits, malformed input, and
// the per-tick forwarding rules (range, subscribe, mute, echo, transmit/receive, truncation,
// overload, expiry, bounded memory).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "slanim/formats/llsd.hpp"
#include "slanim/puppetry/event_block.hpp"
#include "slanim/puppetry/datagram.hpp"
#include "slanim/net/relay.hpp"

using namespace slanim;
namespace pn = slanim::puppetry;

namespace {

Uuid id(std::uint8_t n) {
    Uuid u;
    u.bytes[0] = 0x5A;
    u.bytes[15] = n;
    return u;
}

RelayEndpoint ep(std::uint16_t port) { return {0x7F000001u, port}; }

// Deterministic credentials per agent (the command issues random ones).
RelayCredentials creds(const Uuid& u) {
    RelayCredentials c;
    c.token = u.bytes;
    c.token[0] ^= 0xC3;
    c.token[1] ^= 0x01;
    c.circuit_code = 0x5EED0000u | u.bytes[15];
    return c;
}

std::string cap_path(const Uuid& u) { return creds(u).capability_path(); }

void put_u16(std::vector<std::uint8_t>& b, std::uint16_t v) {
    b.push_back(static_cast<std::uint8_t>(v));
    b.push_back(static_cast<std::uint8_t>(v >> 8));
}
void put_u32(std::vector<std::uint8_t>& b, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

// One event block in the viewer's layout (§9.2): S32 timestamp, S16 joint count, S32 payload
// length, then per joint S16 id, U8 flags and one U16 triple per present vector. `flags` 0x02
// (LOCAL_ROT) gives 9-byte records, 0x03 (LOCAL_POS|LOCAL_ROT) 15, 0x07 (and scale) 21.
std::vector<std::uint8_t> make_block(std::int32_t ts, int joints, std::uint8_t flags = 0x02) {
    std::vector<std::uint8_t> payload;
    for (int j = 0; j < joints; ++j) {
        put_u16(payload, static_cast<std::uint16_t>(j));
        payload.push_back(flags);
        const int vectors = ((flags & 0x22) ? 1 : 0) + ((flags & 0x11) ? 1 : 0) + ((flags & 0x04) ? 1 : 0);
        for (int k = 0; k < vectors * 3; ++k) put_u16(payload, static_cast<std::uint16_t>(32768 + j + k));
    }
    std::vector<std::uint8_t> b;
    put_u32(b, static_cast<std::uint32_t>(ts));
    put_u16(b, static_cast<std::uint16_t>(joints));
    put_u32(b, static_cast<std::uint32_t>(payload.size()));
    b.insert(b.end(), payload.begin(), payload.end());
    return b;
}

std::int32_t block_ts(std::span<const std::uint8_t> b) {
    std::int32_t v = 0;
    std::memcpy(&v, b.data(), 4);
    return v;
}

std::vector<std::uint8_t> blocks_datagram(const Uuid& agent,
                                          const std::vector<std::vector<std::uint8_t>>& blocks) {
    std::vector<std::span<const std::uint8_t>> spans(blocks.begin(), blocks.end());
    std::vector<std::uint8_t> out;
    EXPECT_TRUE(pn::encode_blocks(agent, spans, out));
    return out;
}

struct Sent {
    RelayEndpoint to;
    std::vector<std::uint8_t> bytes;
};

struct Harness {
    PuppetryRelay relay;
    std::vector<Sent> sent;
    double now = 100.0;

    std::map<Uuid, std::uint16_t> circuits;  // the port each agent's circuit was opened from

    explicit Harness(RelayConfig c = {}) : relay(c) {}

    // Issues the agent its credentials unless the relay knows it (as an admin would).
    void ensure(const Uuid& a) {
        if (relay.capability(a)) return;
        circuits.erase(a);
        (void)relay.issue(a, creds(a), now);
    }
    // ensure(), then opens the agent's circuit from `port` (as its first datagram would).
    void join(const Uuid& a, std::uint16_t port) {
        ensure(a);
        if (auto it = circuits.find(a); it != circuits.end() && it->second == port) return;
        relay.receive_datagram(pn::encode_use_circuit_code(a, creds(a).circuit_code), ep(port), now);
        circuits[a] = port;
    }
    void report(const Uuid& a, Vec3 p, std::uint16_t port) {
        join(a, port);
        const auto d = pn::encode_position_report(a, p);
        ASSERT_TRUE(d);
        relay.receive_datagram(*d, ep(port), now);
    }
    void send_blocks(const Uuid& a, const std::vector<std::vector<std::uint8_t>>& blocks,
                     std::uint16_t port) {
        join(a, port);
        const auto d = blocks_datagram(a, blocks);
        relay.receive_datagram(d, ep(port), now);
    }
    void tick(double dt = 0.05) {
        now += dt;
        relay.tick(now, [this](const RelayEndpoint& to, std::span<const std::uint8_t> b) {
            sent.push_back({to, {b.begin(), b.end()}});
        });
    }
    // Blocks received at `port` from `sender`, in order.
    std::vector<std::vector<std::uint8_t>> received(std::uint16_t port, const Uuid& sender) const {
        std::vector<std::vector<std::uint8_t>> r;
        for (const auto& s : sent) {
            if (s.to != ep(port)) continue;
            auto d = pn::decode_datagram(s.bytes);
            EXPECT_TRUE(d);
            if (!d || d->agent != sender) continue;
            for (auto b : d->blocks) r.emplace_back(b.begin(), b.end());
        }
        return r;
    }
    RelayHttpResponse http(std::string_view method, std::string_view path, const Llsd& body = {}) {
        return relay.handle_http(method, path, body.is_undefined() ? "" : format_llsd_xml(body), now);
    }
    RelayHttpResponse post(const Uuid& a, Llsd::Map m) {
        ensure(a);
        return http("POST", cap_path(a), Llsd(std::move(m)));
    }
    Llsd get(const Uuid& a) {
        ensure(a);
        auto r = http("GET", cap_path(a));
        EXPECT_EQ(r.status, 200) << r.body;
        auto v = parse_llsd_xml(r.body);
        EXPECT_TRUE(v) << r.body;
        return v ? *v : Llsd();
    }
};

Llsd parse(const RelayHttpResponse& r) {
    auto v = parse_llsd_xml(r.body);
    EXPECT_TRUE(v) << r.body;
    return v ? *v : Llsd();
}

Llsd uuids(std::initializer_list<Uuid> l) {
    Llsd::Array a;
    for (const auto& u : l) a.emplace_back(u);
    return Llsd(std::move(a));
}

}  // namespace

// ---- capability ---------------------------------------------------------------------------

TEST(PuppetryRelayHttp, GetAnswersTheDefaults) {
    Harness h;
    const Llsd g = h.get(id(1));
    ASSERT_TRUE(g.is_map());
    EXPECT_EQ(g.find("transmit")->as_boolean(), true);
    EXPECT_EQ(g.find("receive")->as_boolean(), true);
    EXPECT_EQ(g.find("echo_back")->as_boolean(), false);
    EXPECT_EQ(g.find("event_size")->as_integer(), 210);  // 10-byte header + the viewer's 200
    EXPECT_EQ(g.find("range")->as_real(), 25.0);
    EXPECT_EQ(g.find("subscribe")->size(), 0u);
    EXPECT_TRUE(g.find("subscribe")->is_array());
    EXPECT_TRUE(g.find("mute")->is_array());
    EXPECT_EQ(g.size(), 7u);
    EXPECT_EQ(h.relay.counters().agents, 1u);
}

TEST(PuppetryRelayHttp, PostChangesOnlyTheGivenFieldsAndAnswersLikeGet) {
    Harness h;
    auto r = h.post(id(1), {{"range", Llsd(10)}, {"receive", Llsd(false)}});
    ASSERT_EQ(r.status, 200) << r.body;
    const Llsd p = parse(r);
    EXPECT_EQ(p.find("range")->to_number(), 10.0);
    EXPECT_EQ(p.find("receive")->as_boolean(), false);
    EXPECT_EQ(p.find("transmit")->as_boolean(), true);
    EXPECT_EQ(p.find("event_size")->as_integer(), 210);
    EXPECT_EQ(p, h.get(id(1)));
    r = h.post(id(1), {{"event_size", Llsd(64)}});
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(h.relay.capability(id(1))->event_size, 64);
    EXPECT_EQ(h.relay.capability(id(1))->range, 10.0);
    EXPECT_FALSE(h.relay.capability(id(1))->receive);
    // An empty map changes nothing and answers like GET.
    EXPECT_EQ(parse(h.post(id(1), {})), h.get(id(1)));
}

TEST(PuppetryRelayHttp, EchoBackForcesTransmitAndReceive) {
    Harness h;
    ASSERT_EQ(h.post(id(1), {{"transmit", Llsd(false)}, {"receive", Llsd(false)}}).status, 200);
    const Llsd p = parse(h.post(id(1), {{"echo_back", Llsd(true)}}));
    EXPECT_TRUE(p.find("echo_back")->as_boolean());
    EXPECT_TRUE(p.find("transmit")->as_boolean());
    EXPECT_TRUE(p.find("receive")->as_boolean());
    // Turning transmit off while echo_back stays on is overridden.
    EXPECT_TRUE(parse(h.post(id(1), {{"transmit", Llsd(false)}})).find("transmit")->as_boolean());
    const Llsd q = parse(h.post(id(1), {{"echo_back", Llsd(false)}, {"transmit", Llsd(false)}}));
    EXPECT_FALSE(q.find("transmit")->as_boolean());
    EXPECT_FALSE(q.find("echo_back")->as_boolean());
    EXPECT_TRUE(q.find("receive")->as_boolean());
}

TEST(PuppetryRelayHttp, SubscriptionsAreLimitedToTen) {
    Harness h;
    Llsd::Array ten;
    for (std::uint8_t i = 10; i < 20; ++i) ten.emplace_back(id(i));
    auto r = h.post(id(1), {{"subscribe", Llsd(ten)}});
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(h.relay.subscriptions(id(1)).size(), 10u);
    // Re-subscribing to a known id is not an addition.
    EXPECT_EQ(h.post(id(1), {{"subscribe", uuids({id(12)})}}).status, 200);
    r = h.post(id(1), {{"subscribe", uuids({id(42)})}, {"range", Llsd(3.0)}});
    EXPECT_EQ(r.status, 400);
    const Llsd e = parse(r);
    EXPECT_EQ(e.find("field")->as_string(), "subscribe");
    EXPECT_EQ(e.find("limit")->as_integer(), 10);
    EXPECT_NE(e.find("error")->as_string().find("limit of 10"), std::string::npos);
    EXPECT_EQ(h.relay.capability(id(1))->range, 25.0);  // nothing of a refused POST applies
    EXPECT_EQ(h.relay.subscriptions(id(1)).size(), 10u);
    // Removals apply first, so swapping one id in one POST fits.
    r = h.post(id(1), {{"unsubscribe", uuids({id(10)})}, {"subscribe", uuids({id(42)})}});
    ASSERT_EQ(r.status, 200) << r.body;
    const Llsd subs = *parse(r).find("subscribe");
    ASSERT_EQ(subs.size(), 10u);
    EXPECT_EQ(subs.at(9)->as_uuid(), id(42));  // sorted
    // A string in the uuid form is accepted.
    r = h.post(id(1), {{"unsubscribe", Llsd(Llsd::Array{Llsd(id(42).str())})}});
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(h.relay.subscriptions(id(1)).size(), 9u);
    EXPECT_EQ(h.relay.counters().http_bad_requests, 1u);
}

TEST(PuppetryRelayHttp, MutesAreLimitedToOneHundred) {
    Harness h;
    Llsd::Array hundred;
    for (int i = 0; i < 100; ++i) hundred.emplace_back(id(static_cast<std::uint8_t>(i + 2)));
    ASSERT_EQ(h.post(id(1), {{"mute", Llsd(hundred)}}).status, 200);
    EXPECT_EQ(h.get(id(1)).find("mute")->size(), 100u);
    auto r = h.post(id(1), {{"mute", uuids({id(200)})}});
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(parse(r).find("limit")->as_integer(), 100);
    EXPECT_EQ(parse(r).find("field")->as_string(), "mute");
    ASSERT_EQ(h.post(id(1), {{"unmute", uuids({id(2), id(3)})}}).status, 200);
    EXPECT_EQ(h.post(id(1), {{"mute", uuids({id(200)})}}).status, 200);
    EXPECT_EQ(h.relay.mutes(id(1)).size(), 99u);
    hundred.emplace_back(id(250));  // 101 in one list
    EXPECT_EQ(h.post(id(2), {{"mute", Llsd(hundred)}}).status, 400);
}

TEST(PuppetryRelayHttp, MalformedBodiesAre400WithAReasonAndCounted) {
    Harness h;
    struct Case {
        std::string body, fragment;
    };
    const Llsd self = uuids({id(1)});
    const std::vector<Case> cases = {
        {"not xml at all", "not LLSD XML"},
        {"<llsd><map><key>range</key></map></llsd>", "not LLSD XML"},
        {format_llsd_xml(Llsd(Llsd::Array{})), "must be an LLSD map"},
        {format_llsd_xml(Llsd(Llsd::Map{{"ranges", Llsd(3)}})), "unknown field 'ranges'"},
        {format_llsd_xml(Llsd(Llsd::Map{{"transmit", Llsd(1)}})), "transmit must be a boolean"},
        {format_llsd_xml(Llsd(Llsd::Map{{"event_size", Llsd(29)}})), "event_size must be"},
        {format_llsd_xml(Llsd(Llsd::Map{{"event_size", Llsd(211)}})), "event_size must be an integer in [30, 210] bytes"},
        {format_llsd_xml(Llsd(Llsd::Map{{"event_size", Llsd(255)}})), "event_size must be"},
        {format_llsd_xml(Llsd(Llsd::Map{{"event_size", Llsd(100.0)}})), "event_size must be"},
        {format_llsd_xml(Llsd(Llsd::Map{{"range", Llsd(-1.0)}})), "range must be"},
        {format_llsd_xml(Llsd(Llsd::Map{{"range", Llsd(std::nan(""))}})), "range must be"},
        {format_llsd_xml(Llsd(Llsd::Map{{"range", Llsd(1e6)}})), "range must be"},
        {format_llsd_xml(Llsd(Llsd::Map{{"range", Llsd("10")}})), "range must be"},
        {format_llsd_xml(Llsd(Llsd::Map{{"subscribe", Llsd(id(3))}})), "must be an array"},
        {format_llsd_xml(Llsd(Llsd::Map{{"subscribe", Llsd(Llsd::Array{Llsd("x")})}})),
         "subscribe[0] is not a non-null agent uuid"},
        {format_llsd_xml(Llsd(Llsd::Map{{"mute", Llsd(Llsd::Array{Llsd(Uuid{})})}})),
         "mute[0] is not a non-null agent uuid"},
        {format_llsd_xml(Llsd(Llsd::Map{{"subscribe", self}})), "the agent itself"},
        {std::string(kRelayMaxHttpBody + 1, ' '), "more than the"},
    };
    h.ensure(id(1));
    for (const auto& c : cases) {
        const auto r = h.relay.handle_http("POST", cap_path(id(1)), c.body, h.now);
        EXPECT_EQ(r.status, 400) << c.body;
        const Llsd e = parse(r);
        ASSERT_TRUE(e.find("error")) << r.body;
        EXPECT_NE(e.find("error")->as_string().find(c.fragment), std::string::npos)
            << e.find("error")->as_string();
    }
    EXPECT_EQ(h.relay.counters().http_bad_requests, cases.size());
    // None of it changed the state.
    Harness fresh;
    EXPECT_EQ(h.get(id(1)), fresh.get(id(1)));
}

TEST(PuppetryRelayHttp, PathsMethodsAndStats) {
    Harness h;
    h.ensure(id(1));
    const auto not_found = h.http("GET", "/").body;
    EXPECT_EQ(h.http("GET", "/").status, 404);
    // The capability is /cap/<token>, never the agent's id; an unknown token, or a token in
    // another form, gets the same 404 as any unknown path: no hint.
    std::string upper = cap_path(id(1));
    for (auto& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    std::string near = cap_path(id(1));
    near.back() = near.back() == '0' ? '1' : '0';  // one bit of the token differs
    for (const std::string& p : {std::string("/agent/") + id(1).str() + "/puppetry",
                                 "/agent/" + id(1).str(), upper, near, cap_path(id(2)),
                                 cap_path(id(1)) + "/x", std::string("/cap/"),
                                 cap_path(id(1)).substr(0, 36)}) {
        const auto r = h.http("GET", p);
        EXPECT_EQ(r.status, 404) << p;
        EXPECT_EQ(r.body, not_found) << p;
    }
    EXPECT_EQ(h.http("PUT", cap_path(id(2))).status, 404);  // unknown token: 404, not 405
    EXPECT_EQ(h.http("PUT", cap_path(id(1))).status, 405);
    EXPECT_EQ(h.http("POST", "/stats").status, 405);
    EXPECT_EQ(h.http("GET", cap_path(id(1))).status, 200);
    EXPECT_EQ(h.relay.counters().agents, 1u);  // none of these created an agent
    const auto r = h.http("GET", "/stats");
    ASSERT_EQ(r.status, 200);
    const Llsd s = parse(r);
    EXPECT_EQ(s.find("http_not_found")->as_integer(), 13);  // 404s and 405s
    EXPECT_EQ(s.find("http_requests")->as_integer(), 15);
    EXPECT_EQ(s.find("agents")->as_integer(), 1);
    EXPECT_TRUE(s.find("bytes_held"));
}

TEST(PuppetryRelayHttp, NewAgentsPastTheLimitAreRefused) {
    RelayConfig c;
    c.max_agents = 2;
    Harness h(c);
    EXPECT_TRUE(h.relay.issue(id(1), creds(id(1)), h.now));
    h.report(id(2), {}, 2000);
    auto refused = h.relay.issue(id(3), creds(id(3)), h.now);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("2 agents"), std::string::npos);
    EXPECT_EQ(h.relay.handle_admin_http("POST", "/agent/" + id(4).str(), h.now, creds(id(4))).status, 503);
    h.relay.receive_datagram(*pn::encode_position_report(id(5), {}), ep(4000), h.now);  // never issued
    EXPECT_EQ(h.relay.counters().agents_refused, 2u);
    EXPECT_EQ(h.relay.counters().agents, 2u);
    EXPECT_EQ(h.relay.counters().datagrams_unknown_agent, 1u);
    EXPECT_EQ(h.http("GET", cap_path(id(2))).status, 200);  // known agents still served
}

TEST(PuppetryRelayConfig, ValidateNamesTheBadField) {
    RelayConfig c;
    c.defaults.event_size = 10;
    EXPECT_FALSE(c.validate());
    PuppetryRelay r(c);
    ASSERT_TRUE(r.config_error());
    EXPECT_NE(r.config_error()->message.find("event_size"), std::string::npos);
    EXPECT_EQ(r.config().defaults.event_size, 210);  // fell back to the defaults
    c = {};
    c.idle_timeout_s = 0;
    EXPECT_FALSE(c.validate());
    c = {};
    c.defaults.range = 5000;
    EXPECT_FALSE(c.validate());
    c = {};
    c.max_blocks_per_s = 0.5;
    EXPECT_FALSE(c.validate());
    c = {};
    c.max_bytes_per_s = 1000;  // below one largest datagram
    EXPECT_NE(c.validate().error().message.find("max_bytes_per_s"), std::string::npos);
    c = {};
    c.origin_x = std::nan("");
    EXPECT_FALSE(c.validate());
    EXPECT_TRUE(RelayConfig{}.validate());
}

// ---- forwarding ---------------------------------------------------------------------------

namespace {
// S at the origin, A 10 m away, B 100 m away; all report positions (and so their endpoints).
struct Scene : Harness {
    Uuid s = id(1), a = id(2), b = id(3);
    Scene() {
        report(s, {0, 0, 0}, 1000);
        report(a, {10, 0, 0}, 2000);
        report(b, {100, 0, 0}, 3000);
    }
};
}  // namespace

TEST(PuppetryRelayForward, ReceiversWithinTheirRangeGetTheBlocksOnTheNextTick) {
    Scene h;
    const auto blk = make_block(1234, 5);
    h.send_blocks(h.s, {blk}, 1000);
    EXPECT_TRUE(h.sent.empty());
    EXPECT_EQ(h.relay.counters().blocks_held, 1u);
    EXPECT_EQ(h.relay.counters().bytes_held, blk.size());
    h.tick();
    ASSERT_EQ(h.received(2000, h.s).size(), 1u);
    EXPECT_EQ(h.received(2000, h.s)[0], blk);  // unchanged, with the sender's id
    EXPECT_TRUE(h.received(3000, h.s).empty());  // 100 m > 25 m
    EXPECT_TRUE(h.received(1000, h.s).empty());  // no echo by default
    EXPECT_EQ(h.relay.counters().blocks_held, 0u);
    EXPECT_EQ(h.relay.counters().bytes_held, 0u);
    // Nothing queued: the next tick sends nothing.
    h.sent.clear();
    h.tick();
    EXPECT_TRUE(h.sent.empty());
    // The range is the receiver's: B widens its own range and now receives S.
    ASSERT_EQ(h.post(h.b, {{"range", Llsd(150.0)}}).status, 200);
    h.send_blocks(h.s, {blk}, 1000);
    h.tick();
    EXPECT_EQ(h.received(3000, h.s).size(), 1u);
    // S's range does not matter.
    h.sent.clear();
    ASSERT_EQ(h.post(h.s, {{"range", Llsd(0.0)}}).status, 200);
    h.send_blocks(h.s, {blk}, 1000);
    h.tick();
    EXPECT_EQ(h.received(2000, h.s).size(), 1u);
    // A moves out of range.
    h.sent.clear();
    h.report(h.a, {0, 30, 0}, 2000);
    h.send_blocks(h.s, {blk}, 1000);
    h.tick();
    EXPECT_TRUE(h.received(2000, h.s).empty());
    EXPECT_EQ(h.received(3000, h.s).size(), 1u);
}

TEST(PuppetryRelayForward, SubscriptionsReachBeyondRangeAndMutesWin) {
    Scene h;
    const auto blk = make_block(1, 3);
    ASSERT_EQ(h.post(h.b, {{"subscribe", uuids({h.s})}}).status, 200);
    h.send_blocks(h.s, {blk}, 1000);
    h.tick();
    EXPECT_EQ(h.received(3000, h.s).size(), 1u);
    EXPECT_EQ(h.received(2000, h.s).size(), 1u);
    h.sent.clear();
    ASSERT_EQ(h.post(h.b, {{"mute", uuids({h.s})}}).status, 200);
    ASSERT_EQ(h.post(h.a, {{"mute", uuids({h.s})}}).status, 200);
    h.send_blocks(h.s, {blk}, 1000);
    h.tick();
    EXPECT_TRUE(h.sent.empty());
    EXPECT_EQ(h.relay.counters().deliveries_muted, 2u);
    // Unmuting restores it.
    ASSERT_EQ(h.post(h.b, {{"unmute", uuids({h.s})}}).status, 200);
    h.send_blocks(h.s, {blk}, 1000);
    h.tick();
    EXPECT_EQ(h.received(3000, h.s).size(), 1u);
    EXPECT_TRUE(h.received(2000, h.s).empty());
}

TEST(PuppetryRelayForward, EchoBackReturnsTheSendersOwnBlocks) {
    Scene h;
    const auto blk = make_block(7, 2);
    h.send_blocks(h.s, {blk}, 1000);
    h.tick();
    EXPECT_TRUE(h.received(1000, h.s).empty());
    ASSERT_EQ(h.post(h.s, {{"echo_back", Llsd(true)}}).status, 200);
    h.send_blocks(h.s, {blk}, 1000);
    h.tick();
    ASSERT_EQ(h.received(1000, h.s).size(), 1u);
    EXPECT_EQ(h.received(1000, h.s)[0], blk);
}

TEST(PuppetryRelayForward, NonTransmittersAreDiscardedAndNonReceiversSkipped) {
    Scene h;
    const auto blk = make_block(7, 2);
    ASSERT_EQ(h.post(h.s, {{"transmit", Llsd(false)}}).status, 200);
    h.send_blocks(h.s, {blk, blk}, 1000);
    EXPECT_EQ(h.relay.counters().blocks_not_transmitting, 2u);
    EXPECT_EQ(h.relay.counters().blocks_held, 0u);
    h.tick();
    EXPECT_TRUE(h.sent.empty());
    ASSERT_EQ(h.post(h.s, {{"transmit", Llsd(true)}}).status, 200);
    ASSERT_EQ(h.post(h.a, {{"receive", Llsd(false)}}).status, 200);
    h.send_blocks(h.s, {blk}, 1000);
    h.tick();
    EXPECT_TRUE(h.sent.empty());
    EXPECT_EQ(h.relay.counters().deliveries_not_receiving, 1u);
    // A receiver known only over HTTP has no UDP address yet.
    ASSERT_EQ(h.post(id(9), {{"subscribe", uuids({h.s})}}).status, 200);
    h.send_blocks(h.s, {blk}, 1000);
    h.tick();
    EXPECT_EQ(h.relay.counters().deliveries_no_endpoint, 1u);
}

TEST(PuppetryRelayForward, OnlyTheNewestFiveBlocksPerSenderAndTickAreKept) {
    Scene h;
    std::vector<std::vector<std::uint8_t>> blocks;
    for (int i = 0; i < 8; ++i) blocks.push_back(make_block(100 + i, 22));  // 208 bytes each
    h.send_blocks(h.s, {blocks[0], blocks[1], blocks[2]}, 1000);
    h.send_blocks(h.s, {blocks[3], blocks[4], blocks[5], blocks[6], blocks[7]}, 1000);
    EXPECT_EQ(h.relay.counters().blocks_overload_dropped, 3u);
    EXPECT_EQ(h.relay.counters().blocks_held, 5u);
    EXPECT_EQ(h.relay.counters().bytes_held, 5 * blocks[0].size());
    h.tick();
    const auto got = h.received(2000, h.s);
    ASSERT_EQ(got.size(), 5u);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(block_ts(got[i]), 103 + i);
    for (const auto& s : h.sent) EXPECT_LE(s.bytes.size(), pn::kDatagramSoftLimit);
    EXPECT_EQ(h.relay.counters().blocks_forwarded, 5u);
    EXPECT_EQ(h.relay.counters().datagrams_sent, 1u);  // 19 + 5 × 209 = 1064 <= 1200: one datagram
}

TEST(PuppetryRelayForward, BlocksOverTheSendersEventSizeAreCutAtAJointBoundary) {
    Scene h;
    ASSERT_EQ(h.post(h.s, {{"event_size", Llsd(64)}}).status, 200);
    const auto big = make_block(55, 10, 0x03);  // 10 + 10 × 15 = 160 bytes
    const auto fits = make_block(56, 3, 0x03);  // 55 bytes
    h.send_blocks(h.s, {big, fits}, 1000);
    EXPECT_EQ(h.relay.counters().blocks_truncated, 1u);
    h.tick();
    const auto got = h.received(2000, h.s);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[1], fits);
    // 10 + 3 × 15 = 55 ≤ 64 < 70: three joints kept, counts rewritten, still decodable.
    ASSERT_EQ(got[0].size(), 55u);
    EXPECT_TRUE(std::equal(got[0].begin() + 10, got[0].end(), big.begin() + 10));
    std::vector<PuppetryEvent> ev;
    auto n = decode_puppetry_block(got[0], PuppetryLayout::Viewer, ev);
    ASSERT_TRUE(n) << n.error().describe();
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_EQ(ev[0].timestamp_ms, 55);
    ASSERT_EQ(ev[0].joints.size(), 3u);
    // A block with two events: the first fits whole, no record of the second fits after it.
    h.sent.clear();
    auto two = make_block(60, 3, 0x03);
    const auto second = make_block(61, 5, 0x03);
    two.insert(two.end(), second.begin(), second.end());  // 55 + 85 = 140 bytes
    h.send_blocks(h.s, {two}, 1000);
    h.tick();
    ASSERT_EQ(h.received(2000, h.s).size(), 1u);
    EXPECT_EQ(h.received(2000, h.s)[0], make_block(60, 3, 0x03));
    // With room for part of the second event, its leading records are kept.
    h.sent.clear();
    ASSERT_EQ(h.post(h.s, {{"event_size", Llsd(100)}}).status, 200);
    h.send_blocks(h.s, {two}, 1000);
    h.tick();
    ASSERT_EQ(h.received(2000, h.s).size(), 1u);
    ev.clear();
    ASSERT_TRUE(decode_puppetry_block(h.received(2000, h.s)[0], PuppetryLayout::Viewer, ev));
    ASSERT_EQ(ev.size(), 2u);
    EXPECT_EQ(ev[1].timestamp_ms, 61);
    EXPECT_EQ(ev[1].joints.size(), 2u);  // 55 + 10 + 2 × 15 = 95 ≤ 100 < 110
    EXPECT_EQ(h.received(2000, h.s)[0].size(), 95u);
    // The receiver's event_size does not matter.
    h.sent.clear();
    ASSERT_EQ(h.post(h.s, {{"event_size", Llsd(210)}}).status, 200);
    ASSERT_EQ(h.post(h.a, {{"event_size", Llsd(30)}}).status, 200);
    h.send_blocks(h.s, {big}, 1000);
    h.tick();
    ASSERT_EQ(h.received(2000, h.s).size(), 1u);
    EXPECT_EQ(h.received(2000, h.s)[0], big);
    // A block whose first joint alone exceeds event_size is dropped.
    ASSERT_EQ(h.post(h.s, {{"event_size", Llsd(30)}}).status, 200);
    h.send_blocks(h.s, {make_block(57, 2, 0x07)}, 1000);  // 10 + 21 = 31 > 30
    EXPECT_EQ(h.relay.counters().blocks_too_large, 1u);
    EXPECT_EQ(h.relay.counters().blocks_held, 0u);
}

// A viewer copies an event's payload into a 200-byte buffer without checking (spec §9.2): the
// relay lets no sender make it forward a longer one, neither by event_size nor in a block.
TEST(PuppetryRelayForward, NoForwardedPayloadExceedsWhatAViewerCanReceive) {
    Scene h;
    ASSERT_EQ(h.post(h.s, {{"event_size", Llsd(210)}}).status, 200);
    const auto r = h.post(h.s, {{"event_size", Llsd(211)}});
    EXPECT_EQ(r.status, 400);
    EXPECT_NE(r.body.find("200-byte payload a viewer can receive"), std::string::npos) << r.body;
    EXPECT_EQ(h.relay.capability(h.s)->event_size, 210);
    // A 201-byte payload (67 three-byte records) is refused on arrival; 198 bytes pass whole.
    std::vector<std::uint8_t> over = make_block(70, 67, 0x08);
    ASSERT_EQ(over.size(), 211u);
    const auto largest = make_block(71, 66, 0x08);  // 10 + 198 bytes
    h.send_blocks(h.s, {over, largest}, 1000);
    EXPECT_EQ(h.relay.counters().blocks_malformed, 1u);
    EXPECT_EQ(h.relay.counters().blocks_truncated, 0u);
    // Two events of 117 bytes each in one 254-byte block (valid for a receiver) are cut to 210.
    auto two = make_block(72, 13);
    const auto second = make_block(73, 13);
    two.insert(two.end(), second.begin(), second.end());
    ASSERT_EQ(two.size(), 254u);
    h.send_blocks(h.s, {two}, 1000);
    EXPECT_EQ(h.relay.counters().blocks_truncated, 1u);
    h.tick();
    const auto got = h.received(2000, h.s);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0], largest);
    EXPECT_LE(got[1].size(), 210u);
    for (const auto& b : got) {
        std::vector<PuppetryEvent> ev;
        EXPECT_TRUE(decode_puppetry_block(b, PuppetryLayout::Viewer, ev));
    }
}

TEST(PuppetryRelayForward, MalformedDatagramsAndBlocksAreCountedAndDropped) {
    Scene h;
    const std::vector<std::uint8_t> garbage = {1, 2, 3};
    h.relay.receive_datagram(garbage, ep(1000), h.now);
    h.relay.receive_datagram({}, ep(1000), h.now);
    auto null_agent = pn::encode_position_report(Uuid{}, {0, 0, 0});
    h.relay.receive_datagram(*null_agent, ep(1000), h.now);
    EXPECT_EQ(h.relay.counters().datagrams_malformed, 3u);
    auto bad = make_block(1, 3);
    bad[4] = 9;  // joint count 9, payload holds 3 records
    auto good = make_block(2, 3);
    h.send_blocks(h.s, {bad, good, {0xFF}}, 1000);
    EXPECT_EQ(h.relay.counters().blocks_malformed, 2u);
    EXPECT_EQ(h.relay.counters().blocks_queued, 1u);
    h.tick();
    const auto got = h.received(2000, h.s);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0], good);
}

TEST(PuppetryRelayForward, IdleAgentsExpireAndComeBackWithDefaults) {
    RelayConfig c;
    c.idle_timeout_s = 5.0;
    Harness h(c);
    ASSERT_EQ(h.post(id(1), {{"range", Llsd(3.0)}}).status, 200);
    h.report(id(2), {1, 2, 3}, 2000);
    h.send_blocks(id(2), {make_block(1, 3)}, 2000);
    h.tick(4.0);
    EXPECT_EQ(h.relay.counters().agents, 2u);
    h.report(id(2), {1, 2, 3}, 2000);  // keeps agent 2 alive
    h.tick(2.0);
    EXPECT_EQ(h.relay.counters().agents, 1u);
    EXPECT_EQ(h.relay.counters().agents_expired, 1u);
    EXPECT_FALSE(h.relay.capability(id(1)));
    EXPECT_EQ(h.get(id(1)).find("range")->as_real(), 25.0);
    EXPECT_EQ(*h.relay.position(id(2)), (Vec3{1, 2, 3}));
    EXPECT_EQ(h.relay.counters().bytes_held, 0u);
}

TEST(PuppetryRelayForward, HeldBytesStayBoundedUnderAFlood) {
    RelayConfig c;
    c.max_agents = 16;
    Harness h(c);
    const auto blk = make_block(1, 22);  // 208 bytes
    ASSERT_EQ(blk.size(), 208u);
    for (int round = 0; round < 50; ++round) {
        for (std::uint8_t a = 1; a <= 40; ++a)
            for (int k = 0; k < 3; ++k) h.send_blocks(id(a), {blk, blk, blk}, a);  // 9 blocks
        EXPECT_LE(h.relay.counters().bytes_held, 16u * kRelayBlocksPerSenderPerTick * 210u);
        EXPECT_LE(h.relay.counters().agents, 16u);
        h.tick();
    }
    EXPECT_EQ(h.relay.counters().bytes_held, 0u);
    EXPECT_GT(h.relay.counters().agents_refused, 0u);
    EXPECT_EQ(h.relay.counters().blocks_overload_dropped, 50u * 16u * (9u - 5u));
}

// ---- federation (bus) ---------------------------------------------------------------------

namespace {
// Two regions side by side: West at grid (1000, 1000), East at (1001, 1000). West's sender S
// stands 6 m from the border; East's N stands 4 m past it (10 m from S), F 40 m past it.
struct TwoRegions {
    Harness west, east;
    std::vector<std::vector<std::uint8_t>> published;  // West's bus messages
    const Uuid s = id(1), n = id(2), f = id(3), w = id(4);
    static RelayConfig at(int gx) {
        RelayConfig c;
        c.origin_x = 256.0 * gx;
        c.origin_y = 256.0 * 1000;
        return c;
    }
    TwoRegions() : west(at(1000)), east(at(1001)) {
        west.report(s, {250, 100, 20}, 1000);
        west.report(w, {200, 100, 20}, 1004);  // 50 m from S: out of range in its own region
        east.report(n, {4, 100, 20}, 2000);
        east.report(f, {40, 100, 20}, 3000);
    }
    // West ticks and publishes; every message is delivered to East.
    void tick_and_carry() {
        published.clear();
        west.now += 0.05;
        west.relay.tick(
            west.now, [this](const RelayEndpoint& to, std::span<const std::uint8_t> b) {
                west.sent.push_back({to, {b.begin(), b.end()}});
            },
            [this](std::span<const std::uint8_t> m) {
                published.emplace_back(m.begin(), m.end());
                return true;
            });
        for (const auto& m : published) carry(m);
    }
    void carry(std::span<const std::uint8_t> m) {
        east.relay.receive_bus_message(m, 256.0 * 1000, 256.0 * 1000, east.now,
                                       [this](const RelayEndpoint& to, std::span<const std::uint8_t> b) {
                                           east.sent.push_back({to, {b.begin(), b.end()}});
                                       });
    }
};
}  // namespace

TEST(PuppetryRelayFederation, ReceiversAcrossTheBorderGetBlocksByTheSameRules) {
    TwoRegions g;
    const auto blk = make_block(42, 4);
    g.west.send_blocks(g.s, {blk}, 1000);
    g.tick_and_carry();
    // One message per sender and tick, with the sender's id and global position.
    ASSERT_EQ(g.published.size(), 1u);
    BusMessage m;
    ASSERT_TRUE(decode_bus_message(g.published[0], m));
    EXPECT_EQ(m.sender, g.s);
    EXPECT_TRUE(m.has_position);
    EXPECT_DOUBLE_EQ(m.x, 256.0 * 1000 + 250);
    EXPECT_DOUBLE_EQ(m.y, 256.0 * 1000 + 100);
    ASSERT_EQ(m.blocks.size(), 1u);
    // N (10 m away across the border) gets the block unchanged, F (46 m) and W (50 m) do not.
    ASSERT_EQ(g.east.received(2000, g.s).size(), 1u);
    EXPECT_EQ(g.east.received(2000, g.s)[0], blk);
    EXPECT_TRUE(g.east.received(3000, g.s).empty());
    EXPECT_TRUE(g.west.received(1004, g.s).empty());
    EXPECT_EQ(g.east.relay.counters().bus_deliveries, 1u);
    EXPECT_EQ(g.west.relay.counters().bus_published, 1u);
    // The receiver's range, subscribe and mute apply as within one region.
    ASSERT_EQ(g.east.post(g.f, {{"range", Llsd(50.0)}}).status, 200);
    ASSERT_EQ(g.east.post(g.n, {{"mute", uuids({g.s})}}).status, 200);
    g.east.sent.clear();
    g.west.send_blocks(g.s, {blk}, 1000);
    g.tick_and_carry();
    EXPECT_TRUE(g.east.received(2000, g.s).empty());
    EXPECT_EQ(g.east.received(3000, g.s).size(), 1u);
    EXPECT_EQ(g.east.relay.counters().deliveries_muted, 1u);
    ASSERT_EQ(g.east.post(g.f, {{"range", Llsd(5.0)}, {"subscribe", uuids({g.s})}}).status, 200);
    ASSERT_EQ(g.east.post(g.n, {{"receive", Llsd(false)}, {"unmute", uuids({g.s})}}).status, 200);
    g.east.sent.clear();
    g.west.send_blocks(g.s, {blk}, 1000);
    g.tick_and_carry();
    EXPECT_EQ(g.east.received(3000, g.s).size(), 1u);  // subscribed beyond range
    EXPECT_TRUE(g.east.received(2000, g.s).empty());    // receive off
    EXPECT_EQ(g.east.relay.counters().deliveries_not_receiving, 1u);
}

TEST(PuppetryRelayFederation, SenderRulesAreAppliedBeforePublishing) {
    TwoRegions g;
    // event_size: truncated before publishing; transmit off: nothing published; newest 5.
    ASSERT_EQ(g.west.post(g.s, {{"event_size", Llsd(64)}}).status, 200);
    g.west.send_blocks(g.s, {make_block(1, 10)}, 1000);  // 10 + 90 bytes: cut to 64
    g.tick_and_carry();
    ASSERT_EQ(g.published.size(), 1u);
    auto got = g.east.received(2000, g.s);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_LE(got[0].size(), 64u);
    ASSERT_EQ(g.west.post(g.s, {{"event_size", Llsd(210)}}).status, 200);
    for (int k = 0; k < 7; ++k) g.west.send_blocks(g.s, {make_block(100 + k, 2)}, 1000);
    g.east.sent.clear();
    g.tick_and_carry();
    got = g.east.received(2000, g.s);
    ASSERT_EQ(got.size(), 5u);
    EXPECT_EQ(block_ts(got.front()), 102);
    EXPECT_EQ(block_ts(got.back()), 106);
    ASSERT_EQ(g.west.post(g.s, {{"transmit", Llsd(false)}}).status, 200);
    g.west.send_blocks(g.s, {make_block(1, 2)}, 1000);
    g.tick_and_carry();
    EXPECT_TRUE(g.published.empty());
    // Echo stays local: the sender's own relay echoes, the bus never delivers to the sender.
    ASSERT_EQ(g.west.post(g.s, {{"echo_back", Llsd(true)}}).status, 200);
    g.west.sent.clear();
    g.west.send_blocks(g.s, {make_block(1, 2)}, 1000);
    g.tick_and_carry();
    EXPECT_EQ(g.west.received(1000, g.s).size(), 1u);
    ASSERT_EQ(g.published.size(), 1u);
}

TEST(PuppetryRelayFederation, BusMessagesAreValidatedCountedAndDropped) {
    TwoRegions g;
    const auto blk = make_block(5, 3);
    auto msg = [&](const Uuid& who, double x, double y, std::vector<std::vector<std::uint8_t>> b) {
        std::vector<std::span<const std::uint8_t>> spans(b.begin(), b.end());
        std::vector<std::uint8_t> out;
        EXPECT_TRUE(encode_bus_message(who, true, x, y, 20, spans, out));
        return out;
    };
    const double ox = 256.0 * 1000, oy = 256.0 * 1000;
    // Outside West's square (where East's N stands): a forgery.
    g.carry(msg(id(9), ox + 256 + 4, oy + 100, {blk}));
    EXPECT_EQ(g.east.relay.counters().bus_outside_region, 1u);
    // A sender that is one of East's own agents.
    g.carry(msg(g.f, ox + 250, oy + 100, {blk}));
    EXPECT_EQ(g.east.relay.counters().bus_local_sender, 1u);
    // Oversized and malformed framing.
    std::vector<std::uint8_t> huge(kBusMaxMessageSize + 1, 0xB1);
    g.carry(huge);
    EXPECT_EQ(g.east.relay.counters().bus_oversized, 1u);
    auto bad = msg(id(9), ox + 250, oy + 100, {blk});
    bad[0] = 0;
    g.carry(bad);
    g.carry({});
    EXPECT_EQ(g.east.relay.counters().bus_malformed, 2u);
    // A block the puppetry decoder rejects is dropped, the good one beside it delivered.
    auto broken = blk;
    broken[4] ^= 0x40;  // joint count no longer matches the payload
    g.carry(msg(id(9), ox + 250, oy + 100, {broken, blk}));
    EXPECT_EQ(g.east.relay.counters().bus_blocks_malformed, 1u);
    EXPECT_EQ(g.east.relay.counters().bus_blocks_received, 2u);
    const auto got = g.east.received(2000, id(9));
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0], blk);
    EXPECT_EQ(g.east.relay.counters().bus_received, 6u);
    EXPECT_EQ(g.east.relay.counters().agents, 2u);  // remote senders create no agent
}

TEST(PuppetryRelayFederation, BrokerRefusalsAreCountedByKind) {
    Harness h;
    h.relay.count_bus_failure(RelayBusFailure::Unreachable);
    h.relay.count_bus_failure(RelayBusFailure::Refused);
    h.relay.count_bus_failure(RelayBusFailure::Authentication);
    h.relay.count_bus_failure(RelayBusFailure::Authentication);
    h.relay.count_bus_failure(RelayBusFailure::Tls);
    h.relay.count_bus_failure(RelayBusFailure::Permission);
    const auto& c = h.relay.counters();
    EXPECT_EQ(c.bus_connect_failures, 5u) << "every kind but Permission is a failed attempt";
    EXPECT_EQ(c.bus_auth_failures, 2u);
    EXPECT_EQ(c.bus_tls_failures, 1u);
    EXPECT_EQ(c.bus_permission_errors, 1u);
    const Llsd stats = h.relay.counters_llsd();
    EXPECT_EQ(stats.as_map().at("bus_connect_failures").as_integer(), 5);
    EXPECT_EQ(stats.as_map().at("bus_auth_failures").as_integer(), 2);
    EXPECT_EQ(stats.as_map().at("bus_tls_failures").as_integer(), 1);
    EXPECT_EQ(stats.as_map().at("bus_permission_errors").as_integer(), 1);
}

TEST(PuppetryRelayFederation, BrokerGapsAndPublishFailuresAreCounted) {
    Harness h;
    h.relay.set_bus_connected(true, 10.0);
    EXPECT_EQ(h.relay.counters().bus_connected, 1u);
    EXPECT_EQ(h.relay.counters().bus_reconnects, 0u);
    h.relay.set_bus_connected(false, 11.0);
    h.relay.set_bus_connected(false, 11.5);  // no change
    EXPECT_EQ(h.relay.counters().bus_connected, 0u);
    h.relay.set_bus_connected(true, 13.25);
    const auto& c = h.relay.counters();
    EXPECT_EQ(c.bus_disconnects, 1u);
    EXPECT_EQ(c.bus_reconnects, 1u);
    EXPECT_EQ(c.bus_disconnected_ms, 2250u);
    h.report(id(1), {0, 0, 0}, 1000);
    h.send_blocks(id(1), {make_block(1, 2)}, 1000);
    h.now += 0.05;
    h.relay.tick(h.now, [](const RelayEndpoint&, std::span<const std::uint8_t>) {},
                 [](std::span<const std::uint8_t>) { return false; });
    EXPECT_EQ(c.bus_published, 1u);
    EXPECT_EQ(c.bus_publish_failed, 1u);
    const Llsd stats = h.relay.counters_llsd();
    EXPECT_EQ(stats.as_map().at("bus_disconnected_ms").as_integer(), 2250);
}

// ---- authentication -----------------------------------------------------------------------

TEST(PuppetryRelayAuth, RandomCredentialsAreFreshAndWrittenAsHex) {
    auto a = random_relay_credentials(), b = random_relay_credentials();
    ASSERT_TRUE(a);
    ASSERT_TRUE(b);
    EXPECT_NE(a->token, b->token);
    const std::string p = a->capability_path();
    ASSERT_EQ(p.size(), 5u + 32u);
    EXPECT_EQ(p.substr(0, 5), "/cap/");
    EXPECT_EQ(p.find_first_not_of("0123456789abcdef", 5), std::string::npos);
}

TEST(PuppetryRelayAuth, TheAdminEndpointIssuesReissuesAndRevokes) {
    Harness h;
    const std::string agent_path = "/agent/" + id(1).str();
    auto r = h.relay.handle_admin_http("POST", agent_path, h.now, creds(id(1)));
    ASSERT_EQ(r.status, 200) << r.body;
    const Llsd m = parse(r);
    EXPECT_EQ(m.find("agent_id")->as_uuid(), id(1));
    EXPECT_EQ(m.find("capability")->as_string(), cap_path(id(1)));
    EXPECT_EQ(static_cast<std::uint32_t>(m.find("circuit_code")->as_integer()), creds(id(1)).circuit_code);
    EXPECT_EQ(h.http("GET", cap_path(id(1))).status, 200);
    // Issued again with new credentials: the old token stops working.
    RelayCredentials again = creds(id(1));
    again.token[15] ^= 0x80;
    again.circuit_code ^= 1;
    ASSERT_EQ(h.relay.handle_admin_http("POST", agent_path, h.now, again).status, 200);
    EXPECT_EQ(h.http("GET", cap_path(id(1))).status, 404);
    EXPECT_EQ(h.http("GET", again.capability_path()).status, 200);
    // Revoked: gone.
    EXPECT_EQ(h.relay.handle_admin_http("DELETE", agent_path, h.now, creds(id(9))).status, 200);
    EXPECT_EQ(h.http("GET", again.capability_path()).status, 404);
    EXPECT_EQ(h.relay.handle_admin_http("DELETE", agent_path, h.now, creds(id(9))).status, 404);
    EXPECT_EQ(h.relay.counters().credentials_issued, 2u);
    EXPECT_EQ(h.relay.counters().credentials_revoked, 1u);
    EXPECT_EQ(h.relay.counters().agents, 0u);
    // Admin errors.
    EXPECT_EQ(h.relay.handle_admin_http("POST", "/agent/" + Uuid{}.str(), h.now, creds(id(2))).status, 404);
    EXPECT_EQ(h.relay.handle_admin_http("POST", "/agent/nope", h.now, creds(id(2))).status, 404);
    EXPECT_EQ(h.relay.handle_admin_http("GET", agent_path, h.now, creds(id(2))).status, 405);
    EXPECT_EQ(h.relay.handle_admin_http("GET", "/stats", h.now, creds(id(2))).status, 200);
    RelayCredentials zero;
    EXPECT_FALSE(h.relay.issue(id(2), zero, h.now));  // an all-zero token is refused
}

TEST(PuppetryRelayAuth, DatagramsAreBoundToTheCircuitAndSpoofsAreDroppedAndCounted) {
    Harness h;
    const Uuid s = id(1), r = id(2);
    h.report(r, {1, 0, 0}, 2000);
    h.ensure(s);
    const auto blk = make_block(1, 3);
    // Before the circuit: dropped.
    h.relay.receive_datagram(*pn::encode_position_report(s, {0, 0, 0}), ep(1000), h.now);
    h.relay.receive_datagram(blocks_datagram(s, {blk}), ep(1000), h.now);
    EXPECT_EQ(h.relay.counters().datagrams_no_circuit, 2u);
    EXPECT_FALSE(h.relay.position(s));
    // A wrong code opens nothing; the issued one does.
    h.relay.receive_datagram(pn::encode_use_circuit_code(s, creds(s).circuit_code ^ 0x100), ep(1000), h.now);
    EXPECT_EQ(h.relay.counters().circuits_refused, 1u);
    h.relay.receive_datagram(pn::encode_use_circuit_code(s, creds(s).circuit_code), ep(1000), h.now);
    EXPECT_EQ(h.relay.counters().circuits_opened, 2u);  // r's and s's
    h.relay.receive_datagram(*pn::encode_position_report(s, {0, 0, 0}), ep(1000), h.now);
    // The right agent id from another address (or another port): dropped and counted.
    h.relay.receive_datagram(*pn::encode_position_report(s, {500, 0, 0}), ep(1001), h.now);
    h.relay.receive_datagram(blocks_datagram(s, {make_block(666, 3)}), {0x7F000002u, 1000}, h.now);
    EXPECT_EQ(h.relay.counters().datagrams_spoofed, 2u);
    EXPECT_EQ(*h.relay.position(s), (Vec3{0, 0, 0}));
    h.relay.receive_datagram(blocks_datagram(s, {blk}), ep(1000), h.now);
    h.tick();
    const auto got = h.received(2000, s);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0], blk);
    // Forwarded blocks go to the circuit's address, whatever a spoofer sends from.
    for (const auto& sent : h.sent) EXPECT_EQ(sent.to, ep(2000));
    // An agent never issued: dropped; its circuit code is refused.
    h.relay.receive_datagram(*pn::encode_position_report(id(7), {0, 0, 0}), ep(7000), h.now);
    h.relay.receive_datagram(pn::encode_use_circuit_code(id(7), 1), ep(7000), h.now);
    EXPECT_EQ(h.relay.counters().datagrams_unknown_agent, 1u);
    EXPECT_EQ(h.relay.counters().circuits_refused, 2u);
    EXPECT_FALSE(h.relay.capability(id(7)));
    // Re-issued credentials close the circuit until the new code arrives.
    RelayCredentials again = creds(s);
    again.circuit_code += 7;
    ASSERT_TRUE(h.relay.issue(s, again, h.now));
    h.relay.receive_datagram(*pn::encode_position_report(s, {0, 0, 0}), ep(1000), h.now);
    EXPECT_EQ(h.relay.counters().datagrams_no_circuit, 3u);
    // The circuit moves with the code (a viewer behind a NAT that changed its port).
    h.relay.receive_datagram(pn::encode_use_circuit_code(s, again.circuit_code), ep(1500), h.now);
    h.relay.receive_datagram(*pn::encode_position_report(s, {2, 0, 0}), ep(1500), h.now);
    EXPECT_EQ(*h.relay.position(s), (Vec3{2, 0, 0}));
}

TEST(PuppetryRelayAuth, PerAgentRateLimitsDropAndCount) {
    RelayConfig c;
    c.max_blocks_per_s = 10;
    c.max_bytes_per_s = 70000;
    Harness h(c);
    h.report(id(2), {1, 0, 0}, 2000);
    h.report(id(1), {0, 0, 0}, 1000);  // the circuit datagram is not rate limited; this is
    const auto blk = make_block(1, 2);
    for (int k = 0; k < 15; ++k) h.send_blocks(id(1), {blk}, 1000);
    EXPECT_EQ(h.relay.counters().blocks_rate_limited, 5u);
    EXPECT_EQ(h.relay.counters().datagrams_rate_limited, 5u);
    EXPECT_EQ(h.relay.counters().blocks_received, 10u);
    // Another agent has its own budget.
    h.send_blocks(id(2), {blk}, 2000);
    EXPECT_EQ(h.relay.counters().blocks_received, 11u);
    // Half a second refills half the budget.
    h.now += 0.5;
    for (int k = 0; k < 6; ++k) h.send_blocks(id(1), {blk}, 1000);
    EXPECT_EQ(h.relay.counters().blocks_received, 16u);
    EXPECT_EQ(h.relay.counters().blocks_rate_limited, 6u);
    // Bytes: two datagrams of ~31 KB fit in 70000 bytes/s, the third does not.
    RelayConfig b;
    b.max_blocks_per_s = 1000;
    b.max_bytes_per_s = 70000;
    Harness hb(b);
    hb.report(id(1), {0, 0, 0}, 1000);
    std::vector<std::vector<std::uint8_t>> many(150, make_block(1, 22));  // ~31 KB
    hb.send_blocks(id(1), many, 1000);
    hb.send_blocks(id(1), many, 1000);
    hb.send_blocks(id(1), many, 1000);
    EXPECT_EQ(hb.relay.counters().datagrams_rate_limited, 1u);
    EXPECT_EQ(hb.relay.counters().blocks_rate_limited, 150u);
    EXPECT_EQ(hb.relay.counters().blocks_received, 300u);
}
