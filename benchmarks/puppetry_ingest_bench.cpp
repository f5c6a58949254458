// SPDX-License-Identifier: MIT
// Ingest of streamed puppetry for 1,000 avatars per frame: datagram decode + block decode +
// jitter-buffer queueing + playback update (PuppetryRuntime::ingest), against a baseline of the
// decode work alone (datagram framing + engine block decoder) in the same run.
#include <benchmark/benchmark.h>

#include <vector>

#include "slanim/puppetry/event_block.hpp"
#include "slanim/puppetry/datagram.hpp"
#include "slanim/runtime/puppetry.hpp"

using namespace slanim;

namespace {

constexpr int kAvatars = 1000;

/// One datagram per avatar and frame: head, neck and both arms' local rotations (8 joints).
std::vector<std::vector<std::uint8_t>> make_datagrams(int frame) {
    const auto& sk = *Skeleton::default_skeleton();
    static const char* kJoints[] = {"mHead", "mNeck", "mChest", "mCollarLeft", "mShoulderLeft",
                                    "mElbowLeft", "mShoulderRight", "mElbowRight"};
    std::vector<std::vector<std::uint8_t>> out;
    PuppetryEncoder enc;
    for (int a = 0; a < kAvatars; ++a) {
        PuppetryEvent ev;
        ev.timestamp_ms = 50 * frame;
        for (const char* n : kJoints) {
            PuppetryJointEvent je;
            je.joint_id = static_cast<std::int16_t>(sk.joint_num(sk.find(n)));
            je.flags = kPuppetLocalRot;
            je.rotation = quat_from_axis_angle(0.01f * static_cast<float>(frame + a), {0.f, 0.f, 1.f});
            ev.joints.push_back(je);
        }
        PuppetryBlocks blocks;
        (void)enc.encode(ev, blocks);
        std::vector<std::span<const std::uint8_t>> spans;
        for (std::size_t i = 0; i < blocks.size(); ++i) spans.push_back(blocks[i]);
        puppetry::AgentId id;
        id.bytes[0] = static_cast<std::uint8_t>(a);
        id.bytes[1] = static_cast<std::uint8_t>(a >> 8);
        std::vector<std::uint8_t> dg;
        (void)puppetry::encode_blocks(id, spans, dg);
        out.push_back(std::move(dg));
    }
    return out;
}

void BM_PuppetryDecodeOnly_1000Avatars(benchmark::State& state) {
    const auto frames = std::vector{make_datagrams(0), make_datagrams(1)};
    std::vector<PuppetryEvent> events;
    std::size_t f = 0, joints = 0;
    for (auto _ : state) {
        for (const auto& dg : frames[f & 1]) {
            auto d = puppetry::decode_datagram(dg);
            for (const auto block : d->blocks) {
                events.clear();
                (void)decode_puppetry_block(block, PuppetryLayout::Viewer, events);
                joints += events.front().joints.size();
            }
        }
        ++f;
    }
    benchmark::DoNotOptimize(joints);
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * kAvatars);
}
BENCHMARK(BM_PuppetryDecodeOnly_1000Avatars)->Unit(benchmark::kMicrosecond);

void BM_PuppetryIngest_1000Avatars(benchmark::State& state) {
    World world;
    auto rt = PuppetryRuntime::install(world);
    double clock = 0.0;
    rt->set_clock([&] { return clock; });
    const auto skel = Skeleton::default_skeleton();
    for (int a = 0; a < kAvatars; ++a) {
        const Entity e = world.create_avatar(skel);
        puppetry::AgentId id;
        id.bytes[0] = static_cast<std::uint8_t>(a);
        id.bytes[1] = static_cast<std::uint8_t>(a >> 8);
        rt->bind_agent(world, id, e);
    }
    std::vector<std::vector<std::vector<std::uint8_t>>> frames;
    for (int f = 0; f < 64; ++f) frames.push_back(make_datagrams(f));
    std::size_t f = 0;
    for (auto _ : state) {
        // Clock and sender timestamps advance together at 20 Hz (the viewer's send rate).
        clock = 0.05 * static_cast<double>(f);
        for (const auto& dg : frames[f % frames.size()]) rt->receive_datagram(dg);
        rt->ingest(world, 0.05f);
        ++f;
        if (f % frames.size() == 0) {
            state.PauseTiming();  // the sender's timestamps restart: start the streams over
            for (std::size_t i = 0; i < world.size(); ++i) rt->playback(world.entity_at(i))->reset();
            state.ResumeTiming();
        }
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * kAvatars);
}
BENCHMARK(BM_PuppetryIngest_1000Avatars)->Unit(benchmark::kMicrosecond);

}  // namespace
