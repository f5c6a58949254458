// SPDX-License-Identifier: MIT
// The puppetry relay's CPU per tick (slanim::PuppetryRelay, docs/relay.md "Load test"): N agents
// spread over one 256 m region (about 7 others within the default 25 m of each at N = 1,000),
// each with an open circuit, each sending one datagram of one 8-joint block per tick; one
// iteration = every datagram received + one tick (forwarding by range, publishing one bus
// message per sender). BM_RelayBusReceive: a neighbour's N/4 bus messages forwarded on arrival.
// Sockets are not included (the send callback only counts bytes).
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "slanim/net/relay.hpp"
#include "slanim/puppetry/datagram.hpp"
#include "slanim/puppetry/event_block.hpp"

using namespace slanim;
namespace pn = slanim::puppetry;

namespace {

Uuid agent(int i) {
    Uuid u;
    u.bytes[0] = 0xBE;
    u.bytes[14] = static_cast<std::uint8_t>(i >> 8);
    u.bytes[15] = static_cast<std::uint8_t>(i);
    return u;
}

std::vector<std::uint8_t> block() {
    PuppetryEvent ev;
    ev.timestamp_ms = 1000;
    for (std::int16_t j = 0; j < 8; ++j)
        ev.joints.push_back({j, kPuppetLocalRot, Quat{0.1f, 0.f, 0.f, 0.99498744f}, {}, {}});
    PuppetryBlocks b;
    (void)PuppetryEncoder().encode(ev, b);
    return {b[0].begin(), b[0].end()};
}

struct Scene {
    RelayConfig config;
    std::unique_ptr<PuppetryRelay> relay;
    std::vector<std::vector<std::uint8_t>> datagrams;
    double now = 10.0;
    explicit Scene(int n) {
        config.max_agents = static_cast<std::size_t>(n) + 16;
        relay = std::make_unique<PuppetryRelay>(config);
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> xy(0.f, 256.f);
        const auto b = block();
        const std::vector<std::span<const std::uint8_t>> spans = {b};
        for (int i = 0; i < n; ++i) {
            RelayCredentials c;
            c.token = agent(i).bytes;
            c.token[0] ^= 0x5A;
            c.circuit_code = static_cast<std::uint32_t>(i + 1);
            (void)relay->issue(agent(i), c, now);
            const RelayEndpoint ep{0x7F000001u, static_cast<std::uint16_t>(1000 + i)};
            relay->receive_datagram(pn::encode_use_circuit_code(agent(i), c.circuit_code), ep, now);
            relay->receive_datagram(*pn::encode_position_report(agent(i), {xy(rng), xy(rng), 20.f}), ep, now);
            std::vector<std::uint8_t> d;
            (void)pn::encode_blocks(agent(i), spans, d);
            datagrams.push_back(std::move(d));
        }
    }
};

void BM_RelayTick(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    Scene s(n);
    std::uint64_t bytes = 0, published = 0;
    const RelaySendFn send = [&](const RelayEndpoint&, std::span<const std::uint8_t> d) { bytes += d.size(); };
    const RelayPublishFn publish = [&](std::span<const std::uint8_t>) {
        ++published;
        return true;
    };
    for (auto _ : state) {
        for (int i = 0; i < n; ++i)
            s.relay->receive_datagram(s.datagrams[static_cast<std::size_t>(i)],
                                      {0x7F000001u, static_cast<std::uint16_t>(1000 + i)}, s.now);
        s.now += 0.005;  // keeps the rate limit out of the way (20 ticks a second in real time)
        s.relay->tick(s.now, send, publish);
    }
    state.counters["deliveries_per_tick"] =
        static_cast<double>(s.relay->counters().deliveries) / static_cast<double>(state.iterations());
    state.counters["rate_limited"] = static_cast<double>(s.relay->counters().datagrams_rate_limited);
    benchmark::DoNotOptimize(bytes);
    benchmark::DoNotOptimize(published);
}
BENCHMARK(BM_RelayTick)->Arg(250)->Arg(1000)->Unit(benchmark::kMillisecond);

void BM_RelayBusReceive(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    Scene s(n);
    // A neighbour to the west: its senders stand along the shared border.
    const auto b = block();
    const std::vector<std::span<const std::uint8_t>> spans = {b};
    std::vector<std::vector<std::uint8_t>> messages;
    std::mt19937 rng(9);
    std::uniform_real_distribution<double> y(0.0, 256.0), x(-30.0, 0.0);
    for (int i = 0; i < n / 4; ++i) {
        std::vector<std::uint8_t> m;
        (void)encode_bus_message(agent(10000 + i), true, x(rng), y(rng), 20.0, spans, m);
        messages.push_back(std::move(m));
    }
    std::uint64_t bytes = 0;
    const RelaySendFn send = [&](const RelayEndpoint&, std::span<const std::uint8_t> d) { bytes += d.size(); };
    for (auto _ : state)
        for (const auto& m : messages) s.relay->receive_bus_message(m, -256.0, 0.0, s.now, send);
    state.counters["deliveries_per_iteration"] =
        static_cast<double>(s.relay->counters().bus_deliveries) / static_cast<double>(state.iterations());
    benchmark::DoNotOptimize(bytes);
}
BENCHMARK(BM_RelayBusReceive)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace
