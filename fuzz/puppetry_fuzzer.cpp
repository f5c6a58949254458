// SPDX-License-Identifier: MIT
// libFuzzer target for the puppetry event block decoder and encoder. The first input byte
// selects the layout (bit 0: documented / viewer) and the event_size used to re-encode
// (30 + byte % 226); the rest is one block.
//
// Properties checked (a violation aborts, which libFuzzer reports as a crash):
//  * no crash, no sanitizer finding, no read past the block, whatever the bytes;
//  * a rejected block has a byte offset within it (0 … size) and leaves the output untouched;
//  * a decoded block holds at most (size − 10) / 3 joint records in events whose headers and
//    payloads exactly tile the block, each payload at most 200 bytes (what a viewer receives);
//  * every decoded event re-encodes (any event_size ≥ 31 for the viewer layout, whose largest
//    record is 21 bytes; ≥ 37 for the documented one, 27 bytes) into blocks no larger than
//    event_size and 210 bytes that decode, glued back in order, to puppetry_quantized(event);
//
// Run:   slanim_fuzz_puppetry -max_total_time=60 NEW_CORPUS_DIR SEED_DIR...
// Seeds (`slanim_fuzz_puppetry -write_seeds=DIR`): blocks of both layouts, split events,
// several events per block, and a few rejected blocks.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz_check.hpp"
#include "slanim/puppetry/event_block.hpp"
#include "fuzz_seeds.hpp"

namespace {

using namespace slanim;

constexpr const char* kFuzzTarget = "slanim_fuzz_puppetry";

// Decodes every block of `blocks` and glues consecutive parts with the same timestamp that
// came from one encode call of one event.
std::vector<PuppetryEvent> decode_all(const PuppetryBlocks& blocks, PuppetryLayout layout,
                                      std::size_t size) {
    std::vector<PuppetryEvent> parts;
    for (std::size_t b = 0; b < blocks.size(); ++b) {
        const auto r = decode_puppetry_block(blocks[b], layout, parts);
        SLANIM_FUZZ_CHECK(r.ok() && *r == 1, size);
    }
    return parts;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    if (size == 0) return 0;
    const PuppetryLayout layout = (bytes[0] & 1) ? PuppetryLayout::Documented : PuppetryLayout::Viewer;
    int event_size = 30 + bytes[0] % 226;
    // The largest record (10-byte header +) must fit: 21 bytes (viewer), 27 (documented).
    event_size = std::max(event_size, layout == PuppetryLayout::Documented ? 37 : 31);
    const std::span<const std::uint8_t> block(bytes + 1, size - 1);

    std::vector<PuppetryEvent> out(1);
    out[0].timestamp_ms = 12345;
    const auto r = decode_puppetry_block(block, layout, out);
    if (!r.ok()) {
        SLANIM_FUZZ_CHECK(r.error().offset >= 0 &&
                              r.error().offset <= static_cast<long long>(block.size()), size);
        SLANIM_FUZZ_CHECK(out.size() == 1 && out[0].timestamp_ms == 12345 && out[0].joints.empty(), size);
        return 0;
    }
    SLANIM_FUZZ_CHECK(*r == out.size() - 1 && *r >= 1, size);
    std::size_t joints = 0, tiled = 0;
    for (std::size_t e = 1; e < out.size(); ++e) {
        joints += out[e].joints.size();
        std::size_t payload = 0;
        for (const PuppetryJointEvent& j : out[e].joints)
            payload += puppetry_record_size(j.flags, layout);
        SLANIM_FUZZ_CHECK(payload <= kPuppetryMaxPayloadBytes, size);
        tiled += kPuppetryHeaderBytes + payload;
    }
    SLANIM_FUZZ_CHECK(tiled == block.size(), size);
    SLANIM_FUZZ_CHECK(joints * 3 <= block.size() - kPuppetryHeaderBytes, size);

    PuppetryEncodeOptions o;
    o.layout = layout;
    o.event_size = event_size;
    const PuppetryEncoder enc(o);
    for (std::size_t e = 1; e < out.size(); ++e) {
        const PuppetryEvent& ev = out[e];
        PuppetryBlocks blocks;
        const auto n = enc.encode(ev, blocks);
        SLANIM_FUZZ_CHECK(n.ok() && *n == blocks.size(), size);
        for (std::size_t b = 0; b < blocks.size(); ++b)
            SLANIM_FUZZ_CHECK(blocks[b].size() <= static_cast<std::size_t>(event_size) &&
                                  blocks[b].size() <= kPuppetryMaxEventBlockBytes,
                              size);
        const std::vector<PuppetryEvent> parts = decode_all(blocks, layout, size);
        PuppetryEvent glued{ev.timestamp_ms, {}};
        for (const PuppetryEvent& p : parts) {
            SLANIM_FUZZ_CHECK(p.timestamp_ms == ev.timestamp_ms, size);
            glued.joints.insert(glued.joints.end(), p.joints.begin(), p.joints.end());
        }
        SLANIM_FUZZ_CHECK(glued == puppetry_quantized(ev, layout), size);

    }
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Seed corpus generator: `slanim_fuzz_puppetry -write_seeds=DIR`.

namespace {

std::vector<slanim::fuzz::Seed> seed_bytes() {
    std::vector<slanim::fuzz::Seed> out;
    const auto add = [&](const std::string& name, std::uint8_t selector,
                         std::span<const std::uint8_t> block) {
        std::vector<std::uint8_t> b{selector};
        b.insert(b.end(), block.begin(), block.end());
        out.emplace_back(name, std::move(b));
    };
    PuppetryEvent ev;
    ev.timestamp_ms = 123456;
    const std::uint8_t viewer_flags[] = {kPuppetLocalRot, kPuppetLocalPos | kPuppetLocalRot,
                                         kPuppetTargetPos | kPuppetTargetRot, kPuppetLocalScale,
                                         kPuppetDisableConstraint, 0xFF};
    for (int i = 0; i < 24; ++i) {
        PuppetryJointEvent j;
        j.joint_id = static_cast<std::int16_t>(58 + i);
        j.flags = viewer_flags[i % 6];
        j.rotation = {0.1f * static_cast<float>(i % 5), -0.2f, 0.3f, 0.9f};
        j.position = {0.01f * static_cast<float>(i), -0.5f, 1.25f};
        j.scale = {1.f, 1.f, 1.f};
        ev.joints.push_back(j);
    }
    PuppetryBlocks blocks;
    (void)PuppetryEncoder(PuppetryEncodeOptions{PuppetryLayout::Viewer, 255, false}).encode(ev, blocks);
    for (std::size_t b = 0; b < blocks.size(); ++b) add("viewer_" + std::to_string(b), 224, blocks[b]);
    // Two events in one block, as the viewer's sender may pack them.
    if (blocks.size() >= 1) {
        PuppetryBlocks small;
        PuppetryEvent two{7, {ev.joints[0]}};
        (void)PuppetryEncoder().encode(two, small);
        (void)PuppetryEncoder().encode(PuppetryEvent{8, {}}, small);
        add("viewer_two_events", 0, small.bytes());
    }
    PuppetryEvent doc = ev;
    const std::uint8_t doc_flags[] = {kPuppetLocalRot, kPuppetTargetPos | kPuppetLocalRot,
                                      kPuppetTargetPos | kPuppetTargetRot | kPuppetDisableConstraint,
                                      kPuppetLocalPos};
    for (std::size_t i = 0; i < doc.joints.size(); ++i) doc.joints[i].flags = doc_flags[i % 4];
    blocks.clear();
    (void)PuppetryEncoder(PuppetryEncodeOptions{PuppetryLayout::Documented, 120, false}).encode(doc, blocks);
    for (std::size_t b = 0; b < blocks.size() && b < 4; ++b) add("documented_" + std::to_string(b), 1, blocks[b]);
    const std::uint8_t truncated[] = {1, 0, 0, 0, 2, 0, 9, 0, 0, 0, 8, 0, 2, 1, 2, 3, 4, 5, 6};
    add("rejected_count", 0, truncated);
    const std::uint8_t negative[] = {1, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF};
    add("rejected_negative", 0, negative);
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    slanim::fuzz::write_seeds_and_exit_if_asked(*argc, *argv, "slanim_fuzz_puppetry", seed_bytes);
    return 0;
}
