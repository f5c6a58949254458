// SPDX-License-Identifier: MIT
#include "slanim/puppetry/event_block.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "slanim/core/quantize.hpp"

namespace slanim {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes to_bytes(std::span<const std::uint8_t> s) { return Bytes(s.begin(), s.end()); }

Bytes cat(Bytes a, const Bytes& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

std::string fmt_payload(int bytes) {
    return "payload length " + std::to_string(bytes) + " exceeds the 200 bytes a viewer can receive";
}

void put_f32(Bytes& b, float f) {
    std::uint32_t u = 0;
    std::memcpy(&u, &f, 4);
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(u >> (8 * i)));
}

Bytes header(std::int32_t ts, std::uint16_t count, std::int32_t payload) {
    Bytes b;
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(static_cast<std::uint32_t>(ts) >> (8 * i)));
    b.push_back(static_cast<std::uint8_t>(count & 0xFF));
    b.push_back(static_cast<std::uint8_t>(count >> 8));
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(static_cast<std::uint32_t>(payload) >> (8 * i)));
    return b;
}

Quat random_quat(std::mt19937& rng) {
    std::normal_distribution<float> n(0.f, 1.f);
    Quat q{n(rng), n(rng), n(rng), n(rng)};
    const float len = std::sqrt(dot(q, q));
    return {q.x / len, q.y / len, q.z / len, q.w / len};
}

// Events with every flag combination the layout can carry, random values (positions a little
// beyond ±5 m to exercise the clamp in the viewer layout).
std::vector<PuppetryEvent> random_events(PuppetryLayout layout, std::mt19937& rng, int count) {
    std::uniform_real_distribution<float> pos(-5.5f, 5.5f);
    std::uniform_int_distribution<int> njoints(0, 60);
    std::uniform_int_distribution<int> id(-3, 200);
    std::vector<std::uint8_t> flag_sets;
    if (layout == PuppetryLayout::Viewer) {
        for (int f = 0; f < 256; ++f) flag_sets.push_back(static_cast<std::uint8_t>(f));
    } else {
        for (const int p : {0, int{kPuppetLocalPos}, int{kPuppetTargetPos}})
            for (const int r : {0, int{kPuppetLocalRot}, int{kPuppetTargetRot}})
                for (const int d : {0, int{kPuppetDisableConstraint}})
                    flag_sets.push_back(static_cast<std::uint8_t>(p | r | d));
    }
    std::uniform_int_distribution<std::size_t> pick(0, flag_sets.size() - 1);
    std::vector<PuppetryEvent> out;
    for (int e = 0; e < count; ++e) {
        PuppetryEvent ev;
        ev.timestamp_ms = static_cast<std::int32_t>(rng());
        const int n = njoints(rng);
        for (int j = 0; j < n; ++j) {
            PuppetryJointEvent je;
            je.joint_id = static_cast<std::int16_t>(id(rng));
            je.flags = flag_sets[pick(rng)];
            je.rotation = random_quat(rng);
            je.position = {pos(rng), pos(rng), pos(rng)};
            je.scale = {pos(rng), pos(rng), pos(rng)};
            ev.joints.push_back(je);
        }
        out.push_back(ev);
    }
    return out;
}

TEST(Puppetry, ViewerLayoutBytes) {
    PuppetryEvent ev;
    ev.timestamp_ms = 1000;
    PuppetryJointEvent head;
    head.joint_id = 8;  // mHead
    head.flags = kPuppetLocalRot;
    ev.joints.push_back(head);
    PuppetryJointEvent wrist;
    wrist.joint_id = 61;  // mWristLeft
    wrist.flags = kPuppetTargetPos | kPuppetDisableConstraint;
    wrist.position = {5.5f, -7.f, 0.f};  // clamped to ±5 like the viewer
    ev.joints.push_back(wrist);

    PuppetryBlocks blocks;
    const auto n = PuppetryEncoder().encode(ev, blocks);
    ASSERT_TRUE(n.ok()) << n.error().describe();
    ASSERT_EQ(*n, 1u);
    // Identity: w rounds to code 39321 and decodes to 1; x, y, z quantize to ±7.6e-5, which
    // the zero snap turns into 0, then floor-encode to 32767 (0x7FFF).
    // Position: 5 → 65535, −5 → 0, 0 → floor(32767.5) = 32767.
    Bytes expect = header(1000, 2, 18);
    for (const int b : {8, 0, 0x02, 0xFF, 0x7F, 0xFF, 0x7F, 0xFF, 0x7F, 61, 0, 0x18, 0xFF, 0xFF, 0,
                        0, 0xFF, 0x7F})
        expect.push_back(static_cast<std::uint8_t>(b));
    EXPECT_EQ(to_bytes(blocks[0]), expect);

    std::vector<PuppetryEvent> back;
    ASSERT_TRUE(decode_puppetry_block(blocks[0], PuppetryLayout::Viewer, back).ok());
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].timestamp_ms, 1000);
    EXPECT_EQ(back[0].joints[0].rotation, Quat::identity());
    EXPECT_EQ(back[0].joints[1].position, (Vec3{5.f, -5.f, 0.f}));
    EXPECT_EQ(back[0].joints[1].flags, kPuppetTargetPos | kPuppetDisableConstraint);
}

TEST(Puppetry, ViewerQuantizationMatchesTheViewerFormulas) {
    // Position: LLVector3::quantize16 (floor) then floor-encode, decoded with the zero snap.
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> d(-5.f, 5.f);
    for (int i = 0; i < 2000; ++i) {
        PuppetryEvent ev;
        PuppetryJointEvent j;
        j.flags = kPuppetLocalPos | kPuppetLocalRot;
        j.position = {d(rng), d(rng), d(rng)};
        j.rotation = random_quat(rng);
        ev.joints.push_back(j);
        const PuppetryEvent q = puppetry_quantized(ev, PuppetryLayout::Viewer);
        const Vec3 p1 = quantize16(j.position, -5.f, 5.f);
        const Vec3 p2 = quantize16(p1, -5.f, 5.f);
        EXPECT_EQ(q.joints[0].position, p2);
        // Resolution: 10/65535 per component for positions; rotations a few of those.
        EXPECT_NEAR(q.joints[0].position.x, j.position.x, 2 * 10.f / 65535.f);
        const Quat r = q.joints[0].rotation;
        const float same = std::fabs(dot(r, j.rotation));
        // About 1.5e-4 per component; w = sqrt(1 − |xyz|²) amplifies that when w is small.
        EXPECT_GT(same, std::fabs(j.rotation.w) >= 0.5f ? 1.f - 1e-6f : 0.999f) << i;
        EXPECT_GE(r.w, 0.f);
    }
}

TEST(Puppetry, RoundTripBothLayoutsWithSplitting) {
    for (const PuppetryLayout layout : {PuppetryLayout::Viewer, PuppetryLayout::Documented}) {
        for (const int event_size : {30, 64, 200, 255, 1000}) {
            for (const bool budget : {false, true}) {
                std::mt19937 rng(static_cast<unsigned>(event_size) * 31u + (budget ? 1u : 0u));
                const std::vector<PuppetryEvent> events = random_events(layout, rng, 20);
                PuppetryEncodeOptions o;
                o.layout = layout;
                o.event_size = event_size;
                o.viewer_size_budget = budget;
                PuppetryBlocks blocks;
                const auto n = PuppetryEncoder(o).encode(events, blocks);
                // Blocks stop at 210 bytes whatever event_size says: a viewer receives at most
                // 200 payload bytes.
                const std::size_t cap = std::min<std::size_t>(static_cast<std::size_t>(event_size), 210);
                // A record larger than an empty block cannot be sent (e.g. 10 + 21 > 30 bytes
                // for a viewer record with rotation, position and scale; 10 + 3 + 3 × 12 with
                // the viewer's size budget).
                bool fits = true;
                for (const PuppetryEvent& ev : events)
                    for (const PuppetryJointEvent& j : ev.joints) {
                        const std::size_t vectors = (j.has_rotation() ? 1u : 0u) + (j.has_position() ? 1u : 0u) + (j.has_scale() ? 1u : 0u);
                        const std::size_t need = budget && layout == PuppetryLayout::Viewer
                                                     ? 3 + 12 * vectors
                                                     : puppetry_record_size(j.flags, layout);
                        if (kPuppetryHeaderBytes + need > cap) fits = false;
                    }
                if (!fits) {
                    ASSERT_FALSE(n.ok());
                    EXPECT_NE(n.error().message.find("does not fit a block of"), std::string::npos);
                    EXPECT_TRUE(blocks.empty());
                    continue;
                }
                ASSERT_TRUE(n.ok()) << n.error().describe();
                ASSERT_EQ(*n, blocks.size());
                // Decode every block and glue the parts of each event back together.
                std::vector<PuppetryEvent> decoded;
                for (std::size_t b = 0; b < blocks.size(); ++b) {
                    ASSERT_LE(blocks[b].size(), cap);
                    std::vector<PuppetryEvent> part;
                    const auto r = decode_puppetry_block(blocks[b], layout, part);
                    ASSERT_TRUE(r.ok()) << r.error().describe();
                    ASSERT_EQ(part.size(), 1u);  // one event (part) per block
                    decoded.push_back(part[0]);
                }
                std::size_t b = 0;
                for (const PuppetryEvent& ev : events) {
                    PuppetryEvent glued;
                    glued.timestamp_ms = ev.timestamp_ms;
                    std::size_t parts = 0;
                    while (glued.joints.size() < ev.joints.size() || parts == 0) {
                        ASSERT_LT(b, decoded.size());
                        EXPECT_EQ(decoded[b].timestamp_ms, ev.timestamp_ms);
                        // A block is only split when the next record does not fit.
                        if (parts > 0) {
                            EXPECT_FALSE(decoded[b].joints.empty());
                        }
                        glued.joints.insert(glued.joints.end(), decoded[b].joints.begin(),
                                            decoded[b].joints.end());
                        ++b;
                        ++parts;
                    }
                    EXPECT_EQ(glued, puppetry_quantized(ev, layout));
                }
                EXPECT_EQ(b, decoded.size());
            }
        }
    }
}

TEST(Puppetry, SplitPointsExactAndViewerBudget) {
    PuppetryEvent ev;
    ev.timestamp_ms = -5;
    for (int i = 0; i < 7; ++i) {
        PuppetryJointEvent j;
        j.joint_id = static_cast<std::int16_t>(58 + i);
        j.flags = kPuppetLocalRot | kPuppetLocalPos;  // 15 bytes, budget 27
        ev.joints.push_back(j);
    }
    PuppetryEncodeOptions o;
    o.event_size = 49;
    PuppetryBlocks exact;
    ASSERT_TRUE(PuppetryEncoder(o).encode(ev, exact).ok());
    ASSERT_EQ(exact.size(), 4u);  // 2 + 2 + 2 + 1 records of 15 bytes after a 10-byte header
    EXPECT_EQ(exact[0].size(), 40u);
    EXPECT_EQ(exact[3].size(), 25u);
    o.viewer_size_budget = true;
    PuppetryBlocks viewer;
    ASSERT_TRUE(PuppetryEncoder(o).encode(ev, viewer).ok());
    EXPECT_EQ(viewer.size(), 7u);  // 10 + 27 + 27 > 49: one record per block
    o.event_size = 64;
    viewer.clear();
    ASSERT_TRUE(PuppetryEncoder(o).encode(ev, viewer).ok());
    EXPECT_EQ(viewer.size(), 4u);  // 10 + 2 × 27 = 64

    // An event without joints is a header-only block.
    PuppetryBlocks empty;
    ASSERT_TRUE(PuppetryEncoder().encode(PuppetryEvent{42, {}}, empty).ok());
    ASSERT_EQ(empty.size(), 1u);
    EXPECT_EQ(to_bytes(empty[0]), header(42, 0, 0));
}

TEST(Puppetry, DocumentedLayoutBytesAndFlags) {
    PuppetryEvent ev;
    ev.timestamp_ms = 7;
    PuppetryJointEvent j;
    j.joint_id = 61;
    j.flags = kPuppetTargetPos | kPuppetLocalRot | kPuppetDisableConstraint;
    j.position = {0.25f, -0.5f, 1.f};
    j.rotation = {0.f, 0.f, -0.6f, -0.8f};  // w < 0: stored negated
    ev.joints.push_back(j);
    PuppetryEncodeOptions o;
    o.layout = PuppetryLayout::Documented;
    PuppetryBlocks blocks;
    ASSERT_TRUE(PuppetryEncoder(o).encode(ev, blocks).ok());
    Bytes expect = header(7, 1, 27);
    expect.insert(expect.end(), {61, 0, 0x01 | 0x04 | 0x08 | 0x80});
    for (const float f : {0.25f, -0.5f, 1.f, -0.f, -0.f, 0.6f}) put_f32(expect, f);
    EXPECT_EQ(to_bytes(blocks[0]), expect);
    std::vector<PuppetryEvent> back;
    ASSERT_TRUE(decode_puppetry_block(blocks[0], PuppetryLayout::Documented, back).ok());
    EXPECT_EQ(back[0].joints[0].flags, j.flags);
    EXPECT_EQ(back[0].joints[0].position, j.position);
    EXPECT_NEAR(back[0].joints[0].rotation.z, 0.6f, 1e-7f);
    EXPECT_NEAR(back[0].joints[0].rotation.w, 0.8f, 1e-7f);

    // Flags the documented layout cannot carry.
    for (const std::uint8_t f : {std::uint8_t{kPuppetLocalScale}, std::uint8_t{kPuppetHasDelegated},
                                 std::uint8_t{kPuppetEnableReporting},
                                 std::uint8_t{kPuppetLocalPos | kPuppetTargetPos},
                                 std::uint8_t{kPuppetLocalRot | kPuppetTargetRot}}) {
        PuppetryEvent bad = ev;
        bad.joints.push_back(PuppetryJointEvent{3, f, Quat::identity(), {}, {}});
        PuppetryBlocks out;
        out.append(blocks[0]);
        const auto r = PuppetryEncoder(o).encode(bad, out);
        ASSERT_FALSE(r.ok()) << int(f);
        EXPECT_EQ(r.error().message.rfind("event 0, joint 1: ", 0), 0u) << r.error().message;
        EXPECT_EQ(out.size(), 1u);  // untouched on error
        EXPECT_EQ(to_bytes(out[0]), expect);
    }
}

TEST(Puppetry, EncoderRejects) {
    PuppetryEncodeOptions o;
    o.event_size = 29;
    PuppetryBlocks out;
    const auto small = PuppetryEncoder(o).encode(PuppetryEvent{}, out);
    ASSERT_FALSE(small.ok());
    EXPECT_NE(small.error().message.find("below the minimum of 30"), std::string::npos);

    PuppetryEvent ev;
    ev.joints.push_back(PuppetryJointEvent{1, kPuppetLocalPos, Quat::identity(),
                                           {std::numeric_limits<float>::quiet_NaN(), 0.f, 0.f}, {}});
    const auto nan = PuppetryEncoder().encode(ev, out);
    ASSERT_FALSE(nan.ok());
    EXPECT_NE(nan.error().message.find("non-finite position"), std::string::npos);
    // A NaN in a component the flags do not carry is not transmitted, so not an error.
    ev.joints[0].flags = kPuppetLocalRot;
    EXPECT_TRUE(PuppetryEncoder().encode(ev, out).ok());
}

/// `n` joint records of 3 bytes (joint i, DISABLE_CONSTRAINT, no vector): the flag is 0x08 in
/// the viewer layout, 0x80 in the documented one.
Bytes three_byte_records(int n, PuppetryLayout layout = PuppetryLayout::Viewer) {
    const auto disable = static_cast<std::uint8_t>(layout == PuppetryLayout::Viewer ? 0x08 : 0x80);
    Bytes b;
    for (int i = 0; i < n; ++i) b.insert(b.end(), {static_cast<std::uint8_t>(i), 0, disable});
    return b;
}

struct Reject {
    const char* name;
    Bytes block;
    PuppetryLayout layout;
    long long offset;
    const char* needle;
};

TEST(Puppetry, DecoderRejectsWithReasonAndOffset) {
    const auto V = PuppetryLayout::Viewer;
    const auto D = PuppetryLayout::Documented;
    const Bytes rot_rec = {8, 0, kPuppetLocalRot, 1, 2, 3, 4, 5, 6};
    Bytes doc_rec = {61, 0, 0x04};
    put_f32(doc_rec, 0.9f);
    put_f32(doc_rec, 0.5f);
    put_f32(doc_rec, 0.f);
    Bytes doc_nan = {61, 0, 0x01};
    put_f32(doc_nan, 0.f);
    put_f32(doc_nan, std::numeric_limits<float>::infinity());
    put_f32(doc_nan, 0.f);
    const std::vector<Reject> cases = {
        {"empty", {}, V, 0, "empty block"},
        {"short header", {1, 2, 3, 4, 5}, V, 0, "truncated event header: 5 bytes left"},
        {"negative payload", header(0, 0, -1), V, 6, "negative payload length -1"},
        {"payload past end", cat(header(0, 1, 10), rot_rec), V, 6, "payload length 10 runs past the end of the block (9 bytes left)"},
        {"fewer records", cat(header(0, 2, 9), rot_rec), V, 19, "the payload ends after 1 of 2 joint records"},
        {"leftover bytes", cat(header(0, 1, 10), cat(rot_rec, {0})), V, 19, "1 unread payload bytes after the 1 joint records"},
        {"truncated record", cat(header(0, 1, 8), Bytes(rot_rec.begin(), rot_rec.end() - 1)), V, 10, "joint record 1 of 1 (joint 8, flags 0x02) truncated: needs 9 bytes, 8 left"},
        {"truncated id", cat(header(0, 1, 2), {8, 0}), V, 10, "needs at least 3"},
        {"record past payload", cat(header(0, 1, 5), rot_rec), V, 10, "truncated: needs 9 bytes, 5 left"},
        {"second event truncated", cat(cat(header(0, 1, 9), rot_rec), {1, 2, 3}), V, 19, "truncated event header: 3 bytes left"},
        {"too big", cat(header(0, 0, 246), Bytes(246, 0)), V, 0, "block of 256 bytes exceeds the 255-byte maximum"},
        {"payload over the viewer's buffer", cat(header(0, 67, 201), three_byte_records(67)), V, 6,
         "payload length 201 exceeds the 200 bytes a viewer can receive"},
        {"second payload over the buffer", cat(cat(header(0, 1, 9), rot_rec), cat(header(0, 67, 201), three_byte_records(67))), V, 25,
         "payload length 201 exceeds the 200 bytes a viewer can receive"},
        {"doc payload over the buffer", cat(header(0, 67, 201), three_byte_records(67, D)), D, 6,
         "payload length 201 exceeds the 200 bytes a viewer can receive"},
        {"doc reserved scale", cat(header(0, 1, 3), {1, 0, 0x10}), D, 12, "reserved mask bit(s) 0x10"},
        {"doc reserved 0x40", cat(header(0, 1, 3), {1, 0, 0x40}), D, 12, "reserved mask bit(s) 0x40"},
        {"doc frame without data", cat(header(0, 1, 3), {1, 0, 0x02}), D, 12, "0x02 (position in parent frame) without 0x01"},
        {"doc rot frame without data", cat(header(0, 1, 3), {1, 0, 0x08}), D, 12, "0x08 (orientation in parent frame) without 0x04"},
        {"doc not unit", cat(header(0, 1, 15), doc_rec), D, 13, "not the imaginary part of a unit quaternion"},
        {"doc non-finite", cat(header(0, 1, 15), doc_nan), D, 13, "non-finite position"},
        {"doc short floats", cat(header(0, 1, 9), Bytes(doc_rec.begin(), doc_rec.begin() + 9)), D, 10, "needs 15 bytes, 9 left"},
    };
    for (const Reject& c : cases) {
        std::vector<PuppetryEvent> out(1);  // must stay as it was
        out[0].timestamp_ms = 99;
        const auto r = decode_puppetry_block(c.block, c.layout, out);
        ASSERT_FALSE(r.ok()) << c.name;
        EXPECT_EQ(r.error().offset, c.offset) << c.name << ": " << r.error().message;
        EXPECT_NE(r.error().message.find(c.needle), std::string::npos) << c.name << ": " << r.error().message;
        ASSERT_EQ(out.size(), 1u);
        EXPECT_EQ(out[0].timestamp_ms, 99);
    }
}

TEST(Puppetry, DecoderReadsSeveralEventsPerBlockAndPayloadsUpTo200Bytes) {
    // The viewer's sender may put two events in one block; its receiver reads only the first.
    Bytes two = header(1, 1, 9);
    const Bytes rec = {8, 0, kPuppetLocalRot, 0xFF, 0x7F, 0xFF, 0x7F, 0xFF, 0x7F};
    two.insert(two.end(), rec.begin(), rec.end());
    const Bytes second = header(2, 0, 0);
    two.insert(two.end(), second.begin(), second.end());
    std::vector<PuppetryEvent> out;
    const auto r = decode_puppetry_block(two, PuppetryLayout::Viewer, out);
    ASSERT_TRUE(r.ok()) << r.error().describe();
    EXPECT_EQ(*r, 2u);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[1].timestamp_ms, 2);

    // The viewer copies a payload into a 200-byte buffer without checking its length (spec
    // §9.2): 200 bytes pass the length check, 201 and more are refused at the length field (6)
    // even when their records are valid. Records are multiples of 3 bytes, so the largest valid
    // payload is 198 bytes.
    for (const PuppetryLayout layout : {PuppetryLayout::Viewer, PuppetryLayout::Documented}) {
        out.clear();
        const auto largest = decode_puppetry_block(cat(header(3, 66, 198), three_byte_records(66, layout)), layout, out);
        ASSERT_TRUE(largest.ok()) << largest.error().describe();
        ASSERT_EQ(out[0].joints.size(), 66u);
        EXPECT_EQ(out[0].joints[65].joint_id, 65);
        EXPECT_EQ(out[0].joints[65].flags, kPuppetDisableConstraint);
        out.clear();
        const auto at_limit =
            decode_puppetry_block(cat(header(3, 66, 200), cat(three_byte_records(66, layout), {0, 0})), layout, out);
        ASSERT_FALSE(at_limit.ok());
        EXPECT_EQ(at_limit.error().offset, 208);  // accepted length; the records leave 2 bytes over
        EXPECT_NE(at_limit.error().message.find("2 unread payload bytes"), std::string::npos)
            << at_limit.error().message;
        for (const int n : {67, 81}) {  // 201 and 243 bytes of valid records
            const auto over = decode_puppetry_block(cat(header(3, static_cast<std::uint16_t>(n), 3 * n),
                                                        three_byte_records(n, layout)), layout, out);
            ASSERT_FALSE(over.ok()) << n;
            EXPECT_EQ(over.error().offset, 6);
            EXPECT_NE(over.error().message.find(fmt_payload(3 * n)), std::string::npos) << over.error().message;
        }
        EXPECT_TRUE(out.empty());
    }

    // Viewer layout: |xyz|² > 1 decodes to xyz normalized and w = 0, like unpack_quat.
    Bytes wide = header(0, 1, 9);
    wide.insert(wide.end(), {1, 0, kPuppetTargetRot, 0xFF, 0xFF, 0, 0, 0xFF, 0x7F});  // x=5, y=−5
    out.clear();
    ASSERT_TRUE(decode_puppetry_block(wide, PuppetryLayout::Viewer, out).ok());
    const Quat q = out[0].joints[0].rotation;
    EXPECT_EQ(q.w, 0.f);
    EXPECT_NEAR(q.x, std::sqrt(0.5f), 1e-6f);
    EXPECT_NEAR(q.y, -std::sqrt(0.5f), 1e-6f);
}

}  // namespace
}  // namespace slanim
