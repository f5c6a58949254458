// SPDX-License-Identifier: MIT
// Puppetry event block encode/decode, both layouts, against a memcpy of the same bytes; and the
// LEAP input path (LLSD notation parse + conversion into a PuppetryFrame).
//
// The event: 40 joints (spine, head, both arms and all fingers) with a parent-frame rotation and
// position each, as a full upper-body puppetry frame. Viewer layout: 15-byte records, 4 blocks
// of ≤ 210 bytes (a viewer receives at most 200 payload bytes); documented layout: 27-byte
// records, 6 blocks.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "slanim/formats/llsd.hpp"
#include "slanim/puppetry/event_block.hpp"
#include "slanim/puppetry/capture.hpp"

namespace {

using namespace slanim;

PuppetryEvent upper_body_event() {
    PuppetryEvent ev;
    ev.timestamp_ms = 123456;
    for (int i = 0; i < 40; ++i) {
        PuppetryJointEvent j;
        j.joint_id = static_cast<std::int16_t>(i < 5 ? i * 2 : 56 + i);
        j.flags = kPuppetLocalRot | kPuppetLocalPos;
        const float a = 0.05f * static_cast<float>(i);
        j.rotation = {0.1f * std::sin(a), 0.2f * std::cos(a), 0.05f, 0.97f};
        j.position = {0.01f * static_cast<float>(i), -0.1f, 0.3f};
        ev.joints.push_back(j);
    }
    return ev;
}

void BM_PuppetryEncode(benchmark::State& state, PuppetryLayout layout) {
    const PuppetryEvent ev = upper_body_event();
    PuppetryEncodeOptions o;
    o.layout = layout;
    const PuppetryEncoder enc(o);
    PuppetryBlocks blocks;
    for (auto _ : state) {
        blocks.clear();
        auto r = enc.encode(ev, blocks);
        benchmark::DoNotOptimize(r);
        benchmark::DoNotOptimize(blocks.bytes().data());
    }
    state.SetItemsProcessed(state.iterations() * static_cast<long long>(ev.joints.size()));
    state.SetBytesProcessed(state.iterations() * static_cast<long long>(blocks.bytes().size()));
    state.counters["blocks"] = static_cast<double>(blocks.size());
    state.counters["bytes"] = static_cast<double>(blocks.bytes().size());
}
BENCHMARK_CAPTURE(BM_PuppetryEncode, viewer, PuppetryLayout::Viewer);
BENCHMARK_CAPTURE(BM_PuppetryEncode, documented, PuppetryLayout::Documented);

void BM_PuppetryDecode(benchmark::State& state, PuppetryLayout layout) {
    PuppetryEncodeOptions o;
    o.layout = layout;
    PuppetryBlocks blocks;
    (void)PuppetryEncoder(o).encode(upper_body_event(), blocks);
    std::vector<PuppetryEvent> out;
    out.reserve(16);
    for (auto _ : state) {
        out.clear();
        for (std::size_t b = 0; b < blocks.size(); ++b) {
            auto r = decode_puppetry_block(blocks[b], layout, out);
            benchmark::DoNotOptimize(r);
        }
        benchmark::DoNotOptimize(out.data());
    }
    state.SetItemsProcessed(state.iterations() * 40);
    state.SetBytesProcessed(state.iterations() * static_cast<long long>(blocks.bytes().size()));
}
BENCHMARK_CAPTURE(BM_PuppetryDecode, viewer, PuppetryLayout::Viewer);
BENCHMARK_CAPTURE(BM_PuppetryDecode, documented, PuppetryLayout::Documented);

// The floor: copying the viewer layout's encoded bytes block by block.
void BM_PuppetryMemcpyBaseline(benchmark::State& state) {
    PuppetryBlocks blocks;
    (void)PuppetryEncoder().encode(upper_body_event(), blocks);
    std::vector<std::uint8_t> dst(blocks.bytes().size());
    for (auto _ : state) {
        std::size_t at = 0;
        for (std::size_t b = 0; b < blocks.size(); ++b) {
            std::memcpy(dst.data() + at, blocks[b].data(), blocks[b].size());
            at += blocks[b].size();
        }
        benchmark::DoNotOptimize(dst.data());
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * 40);
    state.SetBytesProcessed(state.iterations() * static_cast<long long>(dst.size()));
}
BENCHMARK(BM_PuppetryMemcpyBaseline);

// LEAP: one `set` message with IK targets for both wrists and joint states for head and neck.
void BM_LeapSetMessage(benchmark::State& state) {
    const std::string text =
        "{'command':'set','data':{'inverse_kinematics':{'mWristLeft':{'position':[r0.05,r0.166,"
        "r0.536],'rotation':[r0,r0,r0.1]},'mWristRight':{'position':[r0.05,r-0.166,r0.536]}},"
        "'joint_state':{'mHead':{'rotation':[r-0.076,r0.069,r-0.057]},'mNeck':{'rotation':"
        "[r0.01,r0.02,r0.03]}}}}";
    for (auto _ : state) {
        auto msg = parse_llsd_notation(text);
        auto frame = puppetry_frame_from_leap(*msg, 0.0);
        benchmark::DoNotOptimize(frame);
    }
    state.SetBytesProcessed(state.iterations() * static_cast<long long>(text.size()));
}
BENCHMARK(BM_LeapSetMessage);

}  // namespace
