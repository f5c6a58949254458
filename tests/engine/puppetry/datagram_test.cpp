// SPDX-License-Identifier: MIT
// Puppetry datagram framing (slanim/puppetry/datagram.hpp): round trips, every rejected framing
// with the fault it is counted under, position reports and splitting.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "slanim/puppetry/datagram.hpp"
#include "slanim/puppetry/event_block.hpp"

using namespace slanim;

namespace {

puppetry::AgentId agent(std::uint8_t b) {
    puppetry::AgentId a;
    a.bytes.fill(b);
    return a;
}

}  // namespace

TEST(PuppetryNet, BlocksDatagramRoundTripsAndRejectsBadFraming) {
    const std::vector<std::uint8_t> b1(10, 7), b2(255, 9);
    const std::span<const std::uint8_t> blocks[2] = {b1, b2};
    std::vector<std::uint8_t> dg;
    ASSERT_TRUE(puppetry::encode_blocks(agent(3), blocks, dg));
    EXPECT_EQ(dg.size(), 18u + 1 + 11 + 256);
    auto d = puppetry::decode_datagram(dg);
    ASSERT_TRUE(d) << d.error().describe();
    EXPECT_EQ(d->kind, puppetry::DatagramKind::Blocks);
    EXPECT_EQ(d->agent, agent(3));
    ASSERT_EQ(d->blocks.size(), 2u);
    auto it = d->blocks.begin();
    EXPECT_TRUE(std::ranges::equal(*it, b1));
    ++it;
    EXPECT_TRUE(std::ranges::equal(*it, b2));
    // Every truncation is rejected, never read past the end.
    for (std::size_t n = 0; n < dg.size(); ++n)
        EXPECT_FALSE(puppetry::decode_datagram({dg.data(), n})) << n;
    auto bad = dg;
    bad[0] = 0xA2;
    EXPECT_FALSE(puppetry::decode_datagram(bad));
    bad = dg;
    bad[18] = 0;  // zero blocks
    EXPECT_FALSE(puppetry::decode_datagram(bad));
    bad = dg;
    bad.push_back(0);  // trailing byte
    EXPECT_FALSE(puppetry::decode_datagram(bad));
    const std::vector<std::uint8_t> empty;
    const std::span<const std::uint8_t> with_empty[1] = {empty};
    EXPECT_FALSE(puppetry::encode_blocks(agent(1), with_empty, dg));
}

TEST(PuppetryNet, PositionReportAndSplitting) {
    auto r = puppetry::encode_position_report(agent(5), {1.f, -2.f, 30.5f});
    ASSERT_TRUE(r);
    auto d = puppetry::decode_datagram(*r);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->kind, puppetry::DatagramKind::PositionReport);
    EXPECT_EQ(d->position, (Vec3{1.f, -2.f, 30.5f}));
    EXPECT_FALSE(puppetry::encode_position_report(agent(5), {NAN, 0.f, 0.f}));
    std::vector<std::vector<std::uint8_t>> storage(10, std::vector<std::uint8_t>(200, 1));
    std::vector<std::span<const std::uint8_t>> blocks(storage.begin(), storage.end());
    std::vector<std::vector<std::uint8_t>> out;
    auto n = puppetry::encode_blocks_split(agent(2), blocks, out);
    ASSERT_TRUE(n);
    EXPECT_EQ(*n, 2u);  // 5 × 201 + 19 ≤ 1200
    std::size_t total = 0;
    for (const auto& dg : out) {
        EXPECT_LE(dg.size(), 1200u);
        auto dd = puppetry::decode_datagram(dg);
        ASSERT_TRUE(dd);
        total += dd->blocks.size();
    }
    EXPECT_EQ(total, 10u);
}

TEST(PuppetryNet, EveryRejectedFramingNamesItsFault) {
    using puppetry::DatagramFault;
    const auto fault_of = [](std::vector<std::uint8_t> bytes) {
        DatagramFault f = DatagramFault::Oversize;  // decoding never reports Oversize
        const auto d = puppetry::decode_datagram(bytes, &f);
        EXPECT_FALSE(d.ok());
        return f;
    };
    std::vector<std::uint8_t> blocks(19, 0);
    blocks[0] = puppetry::kDatagramMagicVersion;
    blocks[1] = 1;
    EXPECT_EQ(fault_of({}), DatagramFault::Short);
    EXPECT_EQ(fault_of(std::vector<std::uint8_t>(17, 0xA1)), DatagramFault::Short);
    auto magic = blocks;
    magic[0] = 0xA2;
    EXPECT_EQ(fault_of(magic), DatagramFault::Magic);
    auto kind = blocks;
    kind[1] = 7;
    EXPECT_EQ(fault_of(kind), DatagramFault::Kind);
    EXPECT_EQ(fault_of({blocks.begin(), blocks.begin() + 18}), DatagramFault::BlockCount);
    EXPECT_EQ(fault_of(blocks), DatagramFault::BlockCount);  // count 0
    auto zero_len = blocks;
    zero_len[18] = 1;
    zero_len.push_back(0);
    EXPECT_EQ(fault_of(zero_len), DatagramFault::BlockLength);
    auto past_end = blocks;
    past_end[18] = 1;
    past_end.insert(past_end.end(), {5, 1, 2});
    EXPECT_EQ(fault_of(past_end), DatagramFault::BlockLength);
    auto trailing = blocks;
    trailing[18] = 1;
    trailing.insert(trailing.end(), {2, 1, 2, 9});
    EXPECT_EQ(fault_of(trailing), DatagramFault::Trailing);
    std::vector<std::uint8_t> report(puppetry::kPositionReportSize + 1, 0);
    report[0] = puppetry::kDatagramMagicVersion;
    report[1] = 2;
    EXPECT_EQ(fault_of(report), DatagramFault::PositionReport);
    report.pop_back();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::memcpy(report.data() + 18, &nan, sizeof nan);
    EXPECT_EQ(fault_of(report), DatagramFault::PositionReport);
    std::vector<std::uint8_t> circuit(puppetry::kUseCircuitCodeSize - 1, 0);
    circuit[0] = puppetry::kDatagramMagicVersion;
    circuit[1] = 3;
    EXPECT_EQ(fault_of(circuit), DatagramFault::CircuitCode);
    circuit.resize(puppetry::kUseCircuitCodeSize + 1);
    EXPECT_EQ(fault_of(circuit), DatagramFault::CircuitCode);
    EXPECT_STREQ(puppetry::datagram_fault_name(DatagramFault::Trailing), "trailing bytes");
    EXPECT_STREQ(puppetry::datagram_fault_name(DatagramFault::CircuitCode), "circuit code");
    // A valid datagram leaves the fault untouched.
    trailing.pop_back();
    DatagramFault untouched = DatagramFault::Oversize;
    EXPECT_TRUE(puppetry::decode_datagram(trailing, &untouched).ok());
    EXPECT_EQ(untouched, DatagramFault::Oversize);
}

TEST(PuppetryNet, UseCircuitCodeRoundTrips) {
    Uuid agent;
    agent.bytes[3] = 0x33;
    const auto bytes = puppetry::encode_use_circuit_code(agent, 0xDEADBEEFu);
    ASSERT_EQ(bytes.size(), 22u);
    EXPECT_EQ(bytes[1], 3);
    EXPECT_EQ(bytes[18], 0xEF);  // little-endian
    const auto d = puppetry::decode_datagram(bytes);
    ASSERT_TRUE(d.ok()) << d.error().describe();
    EXPECT_EQ(d->kind, puppetry::DatagramKind::UseCircuitCode);
    EXPECT_EQ(d->agent, agent);
    EXPECT_EQ(d->circuit_code, 0xDEADBEEFu);
}
