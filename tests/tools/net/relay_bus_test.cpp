// SPDX-License-Identifier: MIT
// Grid files and bus messages (slanim/net/relay_bus.hpp): parsing, neighbours, subjects, the
// message round trip and every framing rule.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "slanim/net/relay_bus.hpp"

using namespace slanim;

namespace {

Uuid sender() {
    Uuid u;
    u.bytes[0] = 0x5B;
    u.bytes[15] = 9;
    return u;
}

std::vector<std::uint8_t> message(std::vector<std::vector<std::uint8_t>> blocks, bool has_pos = true,
                                  double x = 300, double y = 20, double z = 22) {
    std::vector<std::span<const std::uint8_t>> spans(blocks.begin(), blocks.end());
    std::vector<std::uint8_t> out;
    EXPECT_TRUE(encode_bus_message(sender(), has_pos, x, y, z, spans, out));
    return out;
}

BusFault fault_of(std::span<const std::uint8_t> bytes) {
    BusMessage m;
    BusFault f{};
    auto r = decode_bus_message(bytes, m, &f);
    EXPECT_FALSE(r);
    return f;
}

}  // namespace

TEST(RelayGrid, ParsesRegionsCommentsAndNeighbours) {
    auto g = parse_grid("# a 3x1 strip and a far island\n\nA 1000 1000\n B\t1001 1000 \r\nC 1002 1001\nfar-away_2 1200 7\n");
    ASSERT_TRUE(g) << g.error().describe();
    ASSERT_EQ(g->regions.size(), 4u);
    EXPECT_EQ(g->regions[1].name, "B");
    EXPECT_DOUBLE_EQ(g->regions[1].origin_x(), 1001 * 256.0);
    EXPECT_DOUBLE_EQ(g->regions[1].origin_y(), 1000 * 256.0);
    auto names = [&](std::string_view r) {
        std::vector<std::string> n;
        for (const auto* p : g->neighbours(r)) n.push_back(p->name);
        return n;
    };
    EXPECT_EQ(names("A"), (std::vector<std::string>{"B"}));
    EXPECT_EQ(names("B"), (std::vector<std::string>{"A", "C"}));  // C touches B at a corner
    EXPECT_EQ(names("C"), (std::vector<std::string>{"B"}));
    EXPECT_TRUE(names("far-away_2").empty());
    EXPECT_TRUE(names("nope").empty());
    EXPECT_EQ(bus_subject("B"), "slanim.relay.B.blocks");
}

TEST(RelayGrid, ErrorsNameTheLineAndTheRule) {
    struct Case {
        const char* text;
        const char* expect;
        long long line;
    };
    const Case cases[] = {
        {"A 1 1\nB 2\n", "2 fields", 2},
        {"A 1 1\nB 2 2 2\n", "4 fields", 2},
        {"a.b 1 1\n", "not a region name", 1},
        {"A* 1 1\n", "not a region name", 1},
        {"A -1 1\n", "not a grid coordinate", 1},
        {"A 1 65536\n", "not a grid coordinate", 1},
        {"A 1x 1\n", "not a grid coordinate", 1},
        {"A 1 1\n#\nA 2 2\n", "listed twice", 3},
        {"A 1 1\nB 1 1\n", "two regions at grid position 1 1", 2},
    };
    for (const Case& c : cases) {
        auto g = parse_grid(c.text, "g.txt");
        ASSERT_FALSE(g) << c.text;
        EXPECT_NE(g.error().message.find(c.expect), std::string::npos) << g.error().message;
        EXPECT_NE(g.error().message.find("g.txt:" + std::to_string(c.line) + ":"), std::string::npos)
            << g.error().message;
        EXPECT_EQ(g.error().line, c.line);
    }
    auto empty = parse_grid("# nothing\n", "g.txt");
    ASSERT_FALSE(empty);
    EXPECT_NE(empty.error().message.find("no region"), std::string::npos);
    EXPECT_FALSE(load_grid("/nonexistent/grid.txt"));
    EXPECT_FALSE(valid_region_name(std::string(65, 'a')));
    EXPECT_TRUE(valid_region_name(std::string(64, 'a')));
}

TEST(RelayBusMessage, RoundTripsSenderPositionAndBlocks) {
    const std::vector<std::uint8_t> b1(30, 7), b2(210, 9);
    const auto bytes = message({b1, b2}, true, 300.25, 20.5, -3.0);
    EXPECT_EQ(bytes.size(), kBusHeaderSize + 1 + 30 + 1 + 210);
    BusMessage m;
    auto r = decode_bus_message(bytes, m);
    ASSERT_TRUE(r) << r.error().describe();
    EXPECT_EQ(m.sender, sender());
    EXPECT_TRUE(m.has_position);
    EXPECT_EQ(m.x, 300.25);
    EXPECT_EQ(m.y, 20.5);
    EXPECT_EQ(m.z, -3.0);
    ASSERT_EQ(m.blocks.size(), 2u);
    EXPECT_TRUE(std::equal(m.blocks[1].begin(), m.blocks[1].end(), b2.begin(), b2.end()));
    // Without a position, the coordinates are written as zeros.
    const auto nopos = message({b1}, false, 5, 6, 7);
    ASSERT_TRUE(decode_bus_message(nopos, m));
    EXPECT_FALSE(m.has_position);
    EXPECT_EQ(m.x, 0.0);
    // The largest message.
    const std::vector<std::uint8_t> big(kBusMaxBlockSize, 1);
    EXPECT_EQ(message({big, big, big, big, big}).size(), kBusMaxMessageSize);
}

TEST(RelayBusMessage, EncoderRefusesWhatTheDecoderWould) {
    std::vector<std::uint8_t> out;
    const std::vector<std::uint8_t> ok(10, 1), big(kBusMaxBlockSize + 1, 1), none;
    std::vector<std::span<const std::uint8_t>> six(6, ok), huge{big}, empty_block{none}, zero;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<std::span<const std::uint8_t>> one{ok};
    EXPECT_FALSE(encode_bus_message(Uuid{}, true, 0, 0, 0, one, out));
    EXPECT_FALSE(encode_bus_message(sender(), true, nan, 0, 0, one, out));
    EXPECT_FALSE(encode_bus_message(sender(), true, 0, 0, 0, six, out));
    EXPECT_FALSE(encode_bus_message(sender(), true, 0, 0, 0, zero, out));
    EXPECT_FALSE(encode_bus_message(sender(), true, 0, 0, 0, huge, out));
    EXPECT_FALSE(encode_bus_message(sender(), true, 0, 0, 0, empty_block, out));
    EXPECT_TRUE(out.empty());
}

TEST(RelayBusMessage, EveryFramingRuleIsCheckedWithItsOffset) {
    const std::vector<std::uint8_t> b(20, 3);
    const auto good = message({b, b});
    auto with = [&](std::size_t at, std::uint8_t v) {
        auto c = good;
        c[at] = v;
        return c;
    };
    std::vector<std::uint8_t> over(kBusMaxMessageSize + 1, 0);
    EXPECT_EQ(fault_of(over), BusFault::Oversize);
    EXPECT_EQ(fault_of(std::span(good).first(kBusHeaderSize - 1)), BusFault::Short);
    EXPECT_EQ(fault_of({}), BusFault::Short);
    EXPECT_EQ(fault_of(with(0, 0xA1)), BusFault::Magic);
    EXPECT_EQ(fault_of(with(1, 2)), BusFault::Kind);
    auto null_sender = good;
    std::fill(null_sender.begin() + 2, null_sender.begin() + 18, 0);
    EXPECT_EQ(fault_of(null_sender), BusFault::Sender);
    EXPECT_EQ(fault_of(with(18, 3)), BusFault::Flags);
    EXPECT_EQ(fault_of(with(18, 0)), BusFault::Position);  // coordinates with the flag off
    auto negative_zero = with(18, 0);  // flag off, x = -0.0: compares equal to 0, written as +0.0
    std::fill(negative_zero.begin() + 19, negative_zero.begin() + 43, 0);
    negative_zero[26] = 0x80;
    EXPECT_EQ(fault_of(negative_zero), BusFault::Position);
    auto inf = good;
    for (int i = 0; i < 8; ++i) inf[27 + i] = i == 7 ? 0x7F : (i == 6 ? 0xF0 : 0);  // +inf
    EXPECT_EQ(fault_of(inf), BusFault::Position);
    EXPECT_EQ(fault_of(with(43, 0)), BusFault::BlockCount);
    EXPECT_EQ(fault_of(with(43, 6)), BusFault::BlockCount);
    EXPECT_EQ(fault_of(with(43, 3)), BusFault::BlockLength);  // a third block is missing
    EXPECT_EQ(fault_of(with(44, 0)), BusFault::BlockLength);
    EXPECT_EQ(fault_of(with(44, 211)), BusFault::BlockLength);
    EXPECT_EQ(fault_of(with(44, 100)), BusFault::BlockLength);  // runs past the end
    EXPECT_EQ(fault_of(std::span(good).first(good.size() - 1)), BusFault::BlockLength);
    auto trailing = good;
    trailing.push_back(0);
    EXPECT_EQ(fault_of(trailing), BusFault::Trailing);
    BusMessage m;
    auto r = decode_bus_message(with(44, 0), m);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().offset, 44);
    EXPECT_NE(r.error().message.find("block length 0"), std::string::npos);
    EXPECT_STREQ(bus_fault_name(BusFault::Trailing), "trailing bytes");
}
