// SPDX-License-Identifier: MIT
// libFuzzer target for the puppetry relay (slanim::PuppetryRelay, docs/relay.md): its UDP
// datagram handling and its Puppetry capability (HTTP path + LLSD XML body) handling, driven
// as a script of operations against one relay with small limits (4 agents, 3 subscriptions,
// 3 mutes). The input is a sequence of records `op, n (U16 little-endian), n bytes`:
//   op % 5 == 0  a datagram of the n bytes, from endpoint 127.0.0.1:(1000 + op / 5 % 4)
//   op % 5 == 1  POST the n bytes to agent (op / 5 % 6)'s capability (agents are 42…0k uuids)
//   op % 5 == 2  GET agent (op / 5 % 6)'s capability (the bytes are ignored)
//   op % 5 == 3  a request with the n bytes as the path: GET, POST (empty body), PUT or DELETE
//                by op / 5 % 4, to the public port when op / 5 % 8 < 4, else to the admin
//                endpoint (issuing agent op / 5 % 6's deterministic credentials)
// Before the script, agents 0..3 are issued deterministic credentials (token = the agent id
// with its first byte ^ 0xC3, circuit code 0x5EED0000 + k) and open their circuits from ports
// 1000..1003; agents 4 and 5 have none.
//   op % 5 == 4  a tick; the clock advances by op / 5 seconds before it (idle expiry at 30 s)
// A truncated last record uses what is left.
//
// Properties checked (a violation aborts, which libFuzzer reports as a crash):
//  * no crash, no sanitizer finding, whatever the bytes;
//  * a capability answers 200 only at the path of an issued token; the admin endpoint's
//    capability is the issued token's path;
//  * every HTTP answer has a status in {200, 400, 404, 405, 503} and an LLSD XML body that
//    parses into a map; a 200 capability answer has all seven fields, at most 3 subscriptions
//    and 3 mutes, event_size in [30, 210], a finite range in [0, 4096]; an error answer has
//    an `error` string;
//  * bounded state: agents ≤ 4; held blocks ≤ 5 per agent and held bytes ≤ 210 per held block;
//  * every datagram a tick sends is a valid kind-1 datagram of at most 1200 bytes whose blocks
//    the viewer-layout decoder accepts (at most 210 bytes each, so no event payload exceeds
//    the 200 bytes a viewer can receive);
//  * the counters add up: every received datagram is malformed, a position report or a blocks
//    datagram (or refused), and the queues are empty after a tick.
//
// Run:   slanim_fuzz_relay -max_total_time=60 NEW_CORPUS_DIR SEED_DIR...
// Seeds (`slanim_fuzz_relay -write_seeds=DIR`): position reports and a valid blocks datagram
// from agents that subscribe, mute, change event_size and echo, then ticks; malformed bodies.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "relay_fuzz_agents.hpp"
#include "fuzz_seeds.hpp"
#include "slanim/formats/llsd.hpp"
#include "slanim/puppetry/event_block.hpp"
#include "slanim/puppetry/datagram.hpp"
#include "slanim/net/relay.hpp"

namespace {

using namespace slanim;
namespace pn = slanim::puppetry;

constexpr std::size_t kAgents = 4, kSubs = 3, kMutes = 3;

constexpr const char* kFuzzTarget = "slanim_fuzz_relay";

Uuid agent(unsigned k) { return fuzz::relay_agent(k); }

// Deterministic credentials of agent k (the command issues random ones).
RelayCredentials creds(unsigned k) { return fuzz::relay_credentials(k); }

std::string cap_path(unsigned k) { return creds(k).capability_path(); }

RelayConfig fuzz_config() {
    RelayConfig c;
    c.max_agents = kAgents;
    c.max_subscriptions = kSubs;
    c.max_mutes = kMutes;
    c.idle_timeout_s = 30.0;
    return c;
}

void check_answer(const RelayHttpResponse& r, bool capability, std::size_t size) {
    SLANIM_FUZZ_CHECK(r.status == 200 || r.status == 400 || r.status == 404 || r.status == 405 ||
                          r.status == 503,
                      size);
    const auto body = parse_llsd_xml(r.body);
    SLANIM_FUZZ_CHECK(body.ok() && body->is_map(), size);
    if (r.status != 200) {
        const Llsd* e = body->find("error");
        SLANIM_FUZZ_CHECK(e != nullptr && e->is_string(), size);
        return;
    }
    if (!capability) return;
    for (const char* k : {"transmit", "receive", "echo_back"}) {
        const Llsd* v = body->find(k);
        SLANIM_FUZZ_CHECK(v != nullptr && v->is_boolean(), size);
    }
    const Llsd* es = body->find("event_size");
    SLANIM_FUZZ_CHECK(es != nullptr && es->is_integer(), size);
    SLANIM_FUZZ_CHECK(es->as_integer() >= 30 && es->as_integer() <= kRelayMaxEventSize, size);
    const Llsd* range = body->find("range");
    SLANIM_FUZZ_CHECK(range != nullptr && range->to_number(), size);
    const double rv = *range->to_number();
    SLANIM_FUZZ_CHECK(std::isfinite(rv) && rv >= 0.0 && rv <= 4096.0, size);
    const Llsd* subs = body->find("subscribe");
    const Llsd* mutes = body->find("mute");
    SLANIM_FUZZ_CHECK(subs != nullptr && subs->is_array() && subs->size() <= kSubs, size);
    SLANIM_FUZZ_CHECK(mutes != nullptr && mutes->is_array() && mutes->size() <= kMutes, size);
}

void check_bounds(const PuppetryRelay& relay, std::size_t size) {
    const RelayCounters& c = relay.counters();
    SLANIM_FUZZ_CHECK(c.agents <= kAgents, size);
    SLANIM_FUZZ_CHECK(c.blocks_held <= c.agents * kRelayBlocksPerSenderPerTick, size);
    SLANIM_FUZZ_CHECK(c.bytes_held <= c.blocks_held * kPuppetryMaxEventBlockBytes, size);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    PuppetryRelay relay(fuzz_config());
    double now = 0.0;
    // Agents 0..3 hold credentials and their circuits are open from ports 1000..1003; agents
    // 4 and 5 were never issued any.
    for (unsigned k = 0; k < kAgents; ++k) {
        SLANIM_FUZZ_CHECK(relay.issue(agent(k), creds(k), now).ok(), size);
        relay.receive_datagram(pn::encode_use_circuit_code(agent(k), creds(k).circuit_code),
                               {0x7F000001u, static_cast<std::uint16_t>(1000 + k)}, now);
    }
    SLANIM_FUZZ_CHECK(relay.counters().circuits_opened == kAgents, size);
    std::uint64_t datagrams = kAgents;
    std::size_t p = 0;
    while (p < size) {
        const std::uint8_t op = bytes[p++];
        std::size_t n = 0;
        if (p < size) n = bytes[p++];
        if (p < size) n |= static_cast<std::size_t>(bytes[p++]) << 8;
        n = std::min(n, size - p);
        const std::span<const std::uint8_t> data(bytes + p, n);
        const std::string_view text(reinterpret_cast<const char*>(data.data()), data.size());
        p += n;
        const unsigned arg = op / 5u;
        switch (op % 5) {
            case 0:
                relay.receive_datagram(data, {0x7F000001u, static_cast<std::uint16_t>(1000 + arg % 4)}, now);
                ++datagrams;
                break;
            case 1: check_answer(relay.handle_http("POST", cap_path(arg % 6), text, now), true, size); break;
            case 2: check_answer(relay.handle_http("GET", cap_path(arg % 6), {}, now), true, size); break;
            case 3: {
                static constexpr const char* kMethods[4] = {"GET", "POST", "PUT", "DELETE"};
                if (arg % 8 >= 4) {  // the admin endpoint: issue, revoke, stats
                    const auto r = relay.handle_admin_http(kMethods[arg % 4], text, now, creds(arg % 6));
                    check_answer(r, false, size);
                    if (r.status == 200 && text.starts_with("/agent/") && arg % 4 == 1) {
                        const auto answer = parse_llsd_xml(r.body);
                        const Llsd* cap = answer->find("capability");
                        SLANIM_FUZZ_CHECK(cap && cap->is_string() && cap->as_string() == cap_path(arg % 6), size);
                    }
                    break;
                }
                const auto r = relay.handle_http(kMethods[arg % 4], text, {}, now);
                check_answer(r, r.status == 200 && text.starts_with("/cap/"), size);
                // A capability answers only at the path of a token that was issued.
                if (r.status == 200 && text.starts_with("/cap/")) {
                    bool issued = false;
                    for (unsigned k = 0; k < 6; ++k) issued = issued || text == cap_path(k);
                    SLANIM_FUZZ_CHECK(issued, size);
                }
                break;
            }
            default: {
                now += static_cast<double>(arg);
                relay.tick(now, [&](const RelayEndpoint& to, std::span<const std::uint8_t> dg) {
                    SLANIM_FUZZ_CHECK(to.address == 0x7F000001u, size);
                    SLANIM_FUZZ_CHECK(dg.size() <= pn::kDatagramSoftLimit, size);
                    const auto d = pn::decode_datagram(dg);
                    SLANIM_FUZZ_CHECK(d.ok() && d->kind == pn::DatagramKind::Blocks, size);
                    const auto cap = relay.capability(d->agent);
                    SLANIM_FUZZ_CHECK(cap.has_value(), size);
                    std::vector<PuppetryEvent> events;
                    for (const auto block : d->blocks) {
                        // Cut to the sender's event_size on arrival (a later POST may lower it).
                        SLANIM_FUZZ_CHECK(block.size() <= kPuppetryMaxEventBlockBytes, size);
                        SLANIM_FUZZ_CHECK(decode_puppetry_block(block, PuppetryLayout::Viewer, events).ok(), size);
                    }
                });
                SLANIM_FUZZ_CHECK(relay.counters().blocks_held == 0 && relay.counters().bytes_held == 0, size);
                break;
            }
        }
        check_bounds(relay, size);
    }
    const RelayCounters& c = relay.counters();
    SLANIM_FUZZ_CHECK(c.datagrams_received == datagrams, size);
    SLANIM_FUZZ_CHECK(c.datagrams_malformed + c.position_reports + c.circuits_opened + c.circuits_refused +
                          c.datagrams_unknown_agent + c.datagrams_no_circuit + c.datagrams_spoofed +
                          c.datagrams_rate_limited <=
                      c.datagrams_received,
                      size);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Seed corpus generator: `slanim_fuzz_relay -write_seeds=DIR`.

namespace {

void record(std::vector<std::uint8_t>& out, std::uint8_t op, std::span<const std::uint8_t> data) {
    out.push_back(op);
    out.push_back(static_cast<std::uint8_t>(data.size() & 0xFF));
    out.push_back(static_cast<std::uint8_t>(data.size() >> 8));
    out.insert(out.end(), data.begin(), data.end());
}

void record(std::vector<std::uint8_t>& out, std::uint8_t op, std::string_view text) {
    record(out, op, {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
}

std::uint8_t op(unsigned kind, unsigned arg) { return static_cast<std::uint8_t>(arg * 5 + kind); }

std::vector<slanim::fuzz::Seed> seed_bytes() {
    std::vector<slanim::fuzz::Seed> out;
    PuppetryEvent ev;
    ev.timestamp_ms = 1000;
    for (const int id : {8, 61, 62, 63, 64, 65, 66, 67, 68}) {
        PuppetryJointEvent je;
        je.joint_id = static_cast<std::int16_t>(id);
        je.flags = id == 8 ? kPuppetLocalRot : static_cast<std::uint8_t>(kPuppetLocalRot | kPuppetLocalPos);
        je.rotation = Quat{0.1f, 0.f, 0.2f, std::sqrt(1.f - 0.05f)};
        je.position = {0.01f, 0.02f, 0.03f};
        ev.joints.push_back(je);
    }
    PuppetryBlocks blocks;
    (void)PuppetryEncoder().encode(ev, blocks);
    std::vector<std::span<const std::uint8_t>> spans;
    for (std::size_t k = 0; k < blocks.size(); ++k) spans.push_back(blocks[k]);
    std::vector<std::uint8_t> dg;
    (void)pn::encode_blocks(agent(0), spans, dg);

    const auto xml = [](const Llsd::Map& m) { return format_llsd_xml(Llsd(m)); };
    std::vector<std::uint8_t> s;
    record(s, op(0, 0), *pn::encode_position_report(agent(0), {0.f, 0.f, 0.f}));
    record(s, op(0, 1), *pn::encode_position_report(agent(1), {5.f, 0.f, 0.f}));
    record(s, op(0, 2), *pn::encode_position_report(agent(2), {100.f, 0.f, 0.f}));
    record(s, op(1, 2), xml({{"subscribe", Llsd(Llsd::Array{Llsd(agent(0))})}}));
    record(s, op(1, 0), xml({{"event_size", Llsd(std::int32_t{40})}, {"echo_back", Llsd(true)}}));
    record(s, op(0, 0), dg);
    record(s, op(4, 0), std::string_view{});
    record(s, op(1, 1), xml({{"mute", Llsd(Llsd::Array{Llsd(agent(0))})}, {"range", Llsd(2.5)}}));
    record(s, op(0, 0), dg);
    record(s, op(4, 1), std::string_view{});
    record(s, op(2, 1), std::string_view{});
    out.emplace_back("forwarding", s);

    s.clear();
    record(s, op(1, 3), "<llsd><map><key>subscribe</key><array><uuid>00000000-0000-0000-0000-000000000001</uuid>"
                        "<string>42000000-0000-0000-0000-000000000002</string></array>"
                        "<key>transmit</key><boolean>0</boolean></map></llsd>");
    record(s, op(1, 3), "<llsd><map><key>event_size</key><integer>7</integer></map></llsd>");
    record(s, op(1, 3), "<llsd><array/></llsd>");
    record(s, op(1, 3), "<llsd><map><key>range</key><real>nan</real></map>");
    record(s, op(3, 0), "/stats");
    record(s, op(3, 1), "/agent/not-a-uuid/puppetry");
    record(s, op(3, 5), "/agent/" + agent(4).str());  // admin: issue agent 4 (POST)
    record(s, op(3, 7), "/agent/" + agent(1).str());  // admin: revoke agent 1 (DELETE)
    record(s, op(2, 4), std::string_view{});
    record(s, op(0, 2), pn::encode_use_circuit_code(agent(3), creds(3).circuit_code));  // moves 3
    record(s, op(3, 2), cap_path(3));
    record(s, op(3, 0), cap_path(3));
    record(s, op(4, 40), std::string_view{});
    record(s, op(0, 3), std::string_view("\xA1\x01", 2));
    out.emplace_back("capability-errors", s);
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    slanim::fuzz::write_seeds_and_exit_if_asked(*argc, *argv, "slanim_fuzz_relay", seed_bytes);
    return 0;
}
