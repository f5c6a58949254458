// SPDX-License-Identifier: MIT
// libFuzzer target for relay federation (slanim/net/relay_bus.hpp, docs/relay.md
// "Federation"): the grid file parser and the bus message parser, and a relay receiving the
// message from its neighbour. The first byte chooses:
//   even  the rest is grid file text: parse_grid, then neighbours() of every region;
//   odd   the rest is a bus message: decode_bus_message, then PuppetryRelay::receive_bus_message
//         on a relay at grid (1001, 1000) with three agents near its west border, the message
//         coming from the region west of it.
//
// Properties checked (a violation aborts):
//  * no crash, no sanitizer finding;
//  * a parsed grid has 1..4096 regions with valid, unique names and unique positions in
//    [0, 65535]; neighbours are within 1 on both axes and never the region itself; an error
//    names a line within the input;
//  * a decoded message re-encodes to exactly the input bytes; a rejected one is at most what
//    the decoder allows to read;
//  * the relay's counters add up (every message is oversized, malformed, outside the region,
//    from a local sender, or its blocks are counted), it creates no agent, and every datagram
//    it sends is a valid kind-1 datagram naming the message's sender, of at most 1200 bytes,
//    whose blocks the viewer-layout decoder accepts.
//
// Run:   slanim_fuzz_relay_bus -max_total_time=60 NEW_CORPUS_DIR SEED_DIR...
// Seeds (`slanim_fuzz_relay_bus -write_seeds=DIR`): a grid, a valid message near the border,
// a message outside the region.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "relay_fuzz_agents.hpp"
#include "fuzz_seeds.hpp"
#include "slanim/net/relay.hpp"
#include "slanim/net/relay_bus.hpp"
#include "slanim/puppetry/datagram.hpp"
#include "slanim/puppetry/event_block.hpp"

namespace {

using namespace slanim;
namespace pn = slanim::puppetry;

constexpr const char* kFuzzTarget = "slanim_fuzz_relay_bus";

Uuid agent(unsigned k) { return fuzz::relay_agent(k); }

constexpr double kWestX = 256.0 * 1000, kY = 256.0 * 1000;

void fuzz_grid(std::string_view text, std::size_t size) {
    auto g = parse_grid(text, "fuzz");
    if (!g) {
        const long long lines = 1 + static_cast<long long>(std::count(text.begin(), text.end(), '\n'));
        SLANIM_FUZZ_CHECK(g.error().line == -1 || (g.error().line >= 1 && g.error().line <= lines), size);
        return;
    }
    SLANIM_FUZZ_CHECK(!g->regions.empty() && g->regions.size() <= 4096, size);
    std::set<std::string> names;
    std::set<std::pair<int, int>> places;
    for (const auto& r : g->regions) {
        SLANIM_FUZZ_CHECK(valid_region_name(r.name), size);
        SLANIM_FUZZ_CHECK(r.grid_x >= 0 && r.grid_x <= 65535 && r.grid_y >= 0 && r.grid_y <= 65535, size);
        SLANIM_FUZZ_CHECK(names.insert(r.name).second, size);
        SLANIM_FUZZ_CHECK(places.insert({r.grid_x, r.grid_y}).second, size);
    }
    if (g->regions.size() > 64) return;  // neighbours() is quadratic over all regions
    for (const auto& r : g->regions)
        for (const GridRegion* n : g->neighbours(r.name)) {
            SLANIM_FUZZ_CHECK(n != &r, size);
            SLANIM_FUZZ_CHECK(std::abs(n->grid_x - r.grid_x) <= 1 && std::abs(n->grid_y - r.grid_y) <= 1, size);
        }
}

void fuzz_message(std::span<const std::uint8_t> bytes, std::size_t size) {
    BusMessage m;
    const bool ok = static_cast<bool>(decode_bus_message(bytes, m));
    if (ok) {
        std::vector<std::uint8_t> again;
        SLANIM_FUZZ_CHECK(encode_bus_message(m.sender, m.has_position, m.x, m.y, m.z, m.blocks, again), size);
        SLANIM_FUZZ_CHECK(std::equal(again.begin(), again.end(), bytes.begin(), bytes.end()), size);
    }
    RelayConfig c;
    c.origin_x = kWestX + 256.0;
    c.origin_y = kY;
    c.max_agents = 4;
    PuppetryRelay relay(c);
    const auto noop = [](const RelayEndpoint&, std::span<const std::uint8_t>) {};
    // Three local agents with credentials and open circuits, placed by position reports; agent
    // 2 listens 4 km around it (its capability, as a viewer sets it).
    for (unsigned k = 0; k < 3; ++k) {
        const RelayEndpoint from{0x7F000001u, static_cast<std::uint16_t>(2000 + k)};
        SLANIM_FUZZ_CHECK(relay.issue(agent(k), fuzz::relay_credentials(k), 1.0).ok(), size);
        relay.receive_datagram(pn::encode_use_circuit_code(agent(k), fuzz::relay_credentials(k).circuit_code), from,
                               1.0);
        const auto d = pn::encode_position_report(agent(k), {2.f + 10.f * static_cast<float>(k), 100.f, 20.f});
        relay.receive_datagram(*d, from, 1.0);
    }
    SLANIM_FUZZ_CHECK(relay.counters().circuits_opened == 3, size);
    (void)relay.handle_http("POST", fuzz::relay_credentials(2).capability_path(),
                            "<llsd><map><key>range</key><real>4096</real></map></llsd>", 1.0);
    relay.tick(1.0, noop);
    std::vector<PuppetryEvent> events;
    relay.receive_bus_message(bytes, kWestX, kY, 1.0,
                              [&](const RelayEndpoint&, std::span<const std::uint8_t> d) {
                                  SLANIM_FUZZ_CHECK(ok, size);
                                  SLANIM_FUZZ_CHECK(d.size() <= pn::kDatagramSoftLimit, size);
                                  auto dg = pn::decode_datagram(d);
                                  SLANIM_FUZZ_CHECK(dg && dg->kind == pn::DatagramKind::Blocks, size);
                                  SLANIM_FUZZ_CHECK(dg->agent == m.sender, size);
                                  for (auto b : dg->blocks) {
                                      events.clear();
                                      SLANIM_FUZZ_CHECK(b.size() <= kBusMaxBlockSize, size);
                                      SLANIM_FUZZ_CHECK(decode_puppetry_block(b, PuppetryLayout::Viewer, events), size);
                                  }
                              });
    const RelayCounters& k = relay.counters();
    SLANIM_FUZZ_CHECK(k.bus_received == 1, size);
    const std::uint64_t rejected = k.bus_oversized + k.bus_malformed + k.bus_outside_region + k.bus_local_sender;
    SLANIM_FUZZ_CHECK(rejected <= 1, size);
    SLANIM_FUZZ_CHECK(ok == (k.bus_oversized + k.bus_malformed == 0), size);
    if (rejected == 1) SLANIM_FUZZ_CHECK(k.bus_blocks_received == 0, size);
    else SLANIM_FUZZ_CHECK(k.bus_blocks_received == m.blocks.size(), size);
    SLANIM_FUZZ_CHECK(k.bus_blocks_malformed <= k.bus_blocks_received, size);
    SLANIM_FUZZ_CHECK(k.agents == 3, size);
    SLANIM_FUZZ_CHECK(k.bus_deliveries <= 3, size);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    if (size == 0) return 0;
    const std::span<const std::uint8_t> rest(bytes + 1, size - 1);
    if (bytes[0] % 2 == 0) fuzz_grid({reinterpret_cast<const char*>(rest.data()), rest.size()}, size);
    else fuzz_message(rest, size);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Seed corpus generator: `slanim_fuzz_relay_bus -write_seeds=DIR`.

namespace {

std::vector<slanim::fuzz::Seed> seed_bytes() {
    std::vector<slanim::fuzz::Seed> out;
    const std::string grid = "# two by two\nnw 1000 1001\nne 1001 1001\nsw 1000 1000\nse 1001 1000\n";
    std::vector<std::uint8_t> g{0};
    g.insert(g.end(), grid.begin(), grid.end());
    out.emplace_back("grid", g);

    PuppetryEvent ev;
    ev.timestamp_ms = 1000;
    for (const int id : {8, 61, 62}) {
        PuppetryJointEvent je;
        je.joint_id = static_cast<std::int16_t>(id);
        je.flags = kPuppetLocalRot;
        je.rotation = Quat{0.1f, 0.f, 0.2f, std::sqrt(1.f - 0.05f)};
        ev.joints.push_back(je);
    }
    PuppetryBlocks blocks;
    (void)PuppetryEncoder().encode(ev, blocks);
    std::vector<std::span<const std::uint8_t>> spans;
    for (std::size_t k = 0; k < blocks.size(); ++k) spans.push_back(blocks[k]);
    std::vector<std::uint8_t> msg;
    (void)encode_bus_message(agent(9), true, kWestX + 250.0, kY + 100.0, 20.0, spans, msg);
    std::vector<std::uint8_t> s{1};
    s.insert(s.end(), msg.begin(), msg.end());
    out.emplace_back("near-border", s);
    (void)encode_bus_message(agent(9), true, kWestX + 300.0, kY + 100.0, 20.0, spans, msg);
    s.assign(1, 1);
    s.insert(s.end(), msg.begin(), msg.end());
    out.emplace_back("outside", s);
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    slanim::fuzz::write_seeds_and_exit_if_asked(*argc, *argv, "slanim_fuzz_relay_bus", seed_bytes);
    return 0;
}
