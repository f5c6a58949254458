// SPDX-License-Identifier: MIT
// End to end on loopback, every part real: the relay (RelayServer, real HTTP and UDP sockets), one
// sender replaying the real webcam capture (../shared/puppetry) through the block encoder, and
// two receivers each running the runtime (a World with PuppetryRuntime). Receiver A stands in
// range, B out of range; then B subscribes to the sender over HTTP, then mutes it. The test
// asserts what each receiver's avatar does: the head takes the capture's rotation, the left
// wrist is pulled toward the capture's IK target, and after the mute B's joints hold their last
// pose until the stream goes stale and the joint states expire, then return to rest.
#include <gtest/gtest.h>

#include <httplib.h>

#include <chrono>
#include <cmath>
#include <thread>
#include <unistd.h>
#include <vector>

#include "loopback_udp.hpp"
#include "relay_join.hpp"
#include "slanim/relay_server/relay_server.hpp"
#include "slanim/formats/llsd.hpp"
#include "slanim/puppetry/event_block.hpp"
#include "slanim/puppetry/capture.hpp"
#include "slanim/puppetry/datagram.hpp"
#include "slanim/net/puppetry_sources.hpp"
#include "slanim/runtime/puppetry.hpp"
#include "slanim/runtime/world.hpp"

using namespace slanim;
namespace pn = slanim::puppetry;

namespace {

Uuid agent(std::uint8_t n) {
    Uuid u;
    u.bytes[0] = 0x42;
    u.bytes[15] = n;
    return u;
}

float angle_between(Quat a, Quat b) {
    const Quat r = hamilton(conjugate(a), b);
    return 2.f * std::atan2(std::sqrt(r.x * r.x + r.y * r.y + r.z * r.z), std::fabs(r.w));
}

// A receiving viewer: its own socket (the relay learns its address from its position
// reports), a World with one avatar, and the puppetry runtime fed with what arrives.
struct Receiver {
    Uuid id;
    Vec3 position;
    test::LoopbackUdp udp;
    World world;
    std::shared_ptr<PuppetryRuntime> runtime;
    Entity avatar = kNullEntity;
    std::uint64_t datagrams = 0;

    Receiver(Uuid id_, Vec3 p, const Uuid& sender) : id(id_), position(p) {
        PuppetryTiming t;  // shorter than the viewer's 1 s / 3 s / 3 s so the test stays quick
        t.ease_in_s = 0.2f;
        t.ease_out_s = 0.2f;
        t.stale_queue_s = 0.5f;
        t.joint_expiry_s = 0.5f;
        runtime = PuppetryRuntime::install(world, t);
        avatar = world.create_avatar(Skeleton::default_skeleton());
        runtime->bind_agent(world, sender, avatar);
    }
    void report(int relay_port) { udp.send_to(relay_port, *pn::encode_position_report(id, position)); }
    void step(float dt) {
        std::vector<std::uint8_t> buf(65536);
        for (;;) {
            const ssize_t n = ::recv(udp.fd, buf.data(), buf.size(), 0);
            if (n < 0) break;
            ++datagrams;
            runtime->receive_datagram({buf.data(), static_cast<std::size_t>(n)});
        }
        world.step(dt);
    }
    [[nodiscard]] const PuppetryPlayback& playback() { return *runtime->playback(avatar); }
    [[nodiscard]] Quat local(int joint) { return world.local_pose(avatar).rotations[static_cast<std::size_t>(joint)]; }
    [[nodiscard]] Vec3 model_position(int joint) {
        return world.model_pose(avatar).positions[static_cast<std::size_t>(joint)];
    }
    [[nodiscard]] bool finite_pose() {
        const ModelPose& mp = world.model_pose(avatar);
        for (std::size_t j = 0; j < mp.positions.size(); ++j)
            if (!is_finite(mp.positions[j]) || !is_finite(mp.rotations[j])) return false;
        return true;
    }
};

}  // namespace

TEST(RelayEndToEnd, WebcamReplayReachesWhomRangeSubscribeAndMuteAllow) {
    const std::string path =
        std::string(SLANIM_SHARED_DIR) + "/puppetry/captured_webcam_sample_2022-05-06.txt";
    if (::access(path.c_str(), R_OK) != 0)
        GTEST_SKIP() << "the webcam capture is absent (" << path << "): shared data not available";
    auto capture = load_puppetry_capture(path);
    ASSERT_TRUE(capture) << capture.error().describe();
    const auto skel = Skeleton::default_skeleton();
    const Skeleton& sk = *skel;
    const int head = sk.find("mHead"), wrist = sk.find("mWristLeft");

    // The sender's side: one wire event per capture frame, replayed in a loop (the capture
    // lasts 0.47 s) at the capture's own spacing.
    std::vector<PuppetryEvent> events;
    for (const PuppetryFrame& f : capture->frames) {
        auto ev = puppetry_frame_event(f, sk, 0);
        ASSERT_TRUE(ev) << ev.error().describe();
        events.push_back(std::move(*ev));
    }
    const std::size_t n = capture->frames.size();
    const double last = capture->frames.back().time;
    const double period = last + last / static_cast<double>(n - 1);
    const PuppetryFrame& frame0 = capture->frames.front();
    const Quat head_rot = *frame0.find("mHead", PuppetryRefFrame::Parent)->rotation;
    const Vec3 wrist_target = *frame0.find("mWristLeft", PuppetryRefFrame::Root)->position;

    RelayServerOptions o;
    o.tick_ms = 10;
    auto server = RelayServer::start(o);
    ASSERT_TRUE(server) << server.error().message;
    const int relay_udp = (*server)->udp_port();
    httplib::Client http("127.0.0.1", (*server)->http_port());

    const Uuid sender = agent(1);
    test::LoopbackUdp tx;
    Receiver a(agent(2), {5.f, 0.f, 0.f}, sender), b(agent(3), {100.f, 0.f, 0.f}, sender);
    // Each agent gets its capability and circuit code from the admin endpoint and opens its
    // circuit from its own socket.
    const int admin = (*server)->admin_port();
    test::join_relay(admin, relay_udp, sender, tx);
    test::join_relay(admin, relay_udp, a.id, a.udp);
    const std::string b_cap = test::join_relay(admin, relay_udp, b.id, b.udp).capability;
    ASSERT_FALSE(b_cap.empty());
    tx.send_to(relay_udp, *pn::encode_position_report(sender, {0.f, 0.f, 0.f}));
    a.report(relay_udp);
    b.report(relay_udp);

    // Rest references (nothing plays on either avatar besides the puppetry).
    a.step(0.f);
    const Vec3 rest_wrist = a.model_position(wrist);
    const Vec3 pelvis = a.model_position(sk.pelvis());
    const float span = a.playback().arm_span();
    const Vec3 goal = pelvis + wrist_target * (0.5f * span);  // the rest pelvis frame is unrotated
    const float rest_distance = length(rest_wrist - goal);
    ASSERT_GT(rest_distance, 0.2f);

    const PuppetryEncoder encoder;  // viewer layout, event_size 255
    PuppetryBlocks blocks;
    std::vector<std::uint8_t> datagram;
    double sim = 0.0;  // the scene's clock: the sender's timestamps and the receivers' steps
    std::size_t next = 0, loop = 0, sent = 0;
    bool all_finite = true;
    // Runs the scene for `seconds` of frames of 10 ms: the sender sends each capture frame when
    // it is due, receivers report their positions every 200 ms and step.
    auto run = [&](double seconds) {
        const double end = sim + seconds;
        int frame = 0;
        while (sim < end) {
            for (double due = capture->frames[next].time + static_cast<double>(loop) * period; due <= sim;
                 due = capture->frames[next].time + static_cast<double>(loop) * period) {
                PuppetryEvent ev = events[next];
                ev.timestamp_ms = static_cast<std::int32_t>(std::llround(due * 1000.0));
                blocks.clear();
                ASSERT_TRUE(encoder.encode(ev, blocks));
                std::vector<std::span<const std::uint8_t>> spans;
                for (std::size_t k = 0; k < blocks.size(); ++k) spans.push_back(blocks[k]);
                ASSERT_TRUE(pn::encode_blocks(sender, spans, datagram));
                tx.send_to(relay_udp, datagram);
                ++sent;
                if (++next == n) {
                    next = 0;
                    ++loop;
                }
            }
            if (frame % 20 == 0) {
                a.report(relay_udp);
                b.report(relay_udp);
            }
            ++frame;
            sim += 0.01;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            a.step(0.01f);
            b.step(0.01f);
            all_finite = all_finite && a.finite_pose() && b.finite_pose();
        }
    };
    auto post = [&](const std::string& capability, Llsd::Map body) {
        auto r = http.Post(capability.c_str(),
                           format_llsd_xml(Llsd(std::move(body))), "application/llsd+xml");
        ASSERT_TRUE(r);
        ASSERT_EQ(r->status, 200) << r->body;
    };
    // "Follows the capture": the head within 0.03 rad of the capture's rotation (it moves
    // about 0.01 rad over the capture; quantization adds ~1e-4), the wrist pulled toward the
    // target to less than half its rest distance.
    auto follows = [&](Receiver& r) {
        return angle_between(r.local(head), head_rot) < 0.03f &&
               length(r.model_position(wrist) - goal) < 0.5f * rest_distance;
    };
    auto at_rest = [&](Receiver& r) {
        return angle_between(r.local(head), Quat::identity()) < 1e-5f &&
               length(r.model_position(wrist) - rest_wrist) < 1e-4f;
    };

    // 1. A (5 m) is within its 25 m range, B (100 m) is not.
    run(1.0);
    EXPECT_GE(sent, 8u);  // a frame every ~0.12 s
    EXPECT_TRUE(follows(a)) << "A: head " << angle_between(a.local(head), head_rot) << " rad off, wrist "
                            << length(a.model_position(wrist) - goal) << " m from the target";
    EXPECT_GT(a.playback().stats().targets_solved, 0u);
    EXPECT_EQ(a.playback().stats().targets_unsupported, 0u);  // finger tips too: chains hang from the wrist
    EXPECT_GE(a.datagrams, 6u);
    EXPECT_TRUE(at_rest(b)) << "B is out of range: its avatar stays at rest";
    EXPECT_EQ(b.datagrams, 0u);
    EXPECT_FALSE(b.playback().active());

    // 2. B subscribes to the sender: it receives despite the distance.
    post(b_cap, {{"subscribe", Llsd(Llsd::Array{Llsd(sender)})}});
    run(1.0);
    EXPECT_TRUE(follows(b)) << "subscribed B: head " << angle_between(b.local(head), head_rot);
    EXPECT_TRUE(follows(a));
    const auto b_before_mute = b.datagrams;
    EXPECT_GE(b_before_mute, 6u);

    // 3. B mutes the sender: nothing more arrives. Like the viewer, B's avatar holds the last
    // pose while the queue replays it (stale after 0.5 s here) and the joint states live (0.5 s
    // more), then the expiry frame resets the joints and nothing writes them again.
    post(b_cap, {{"mute", Llsd(Llsd::Array{Llsd(sender)})}});
    run(0.3);
    EXPECT_LE(b.datagrams, b_before_mute + 2) << "at most what was in flight";
    EXPECT_TRUE(b.playback().active());
    EXPECT_TRUE(follows(b)) << "the last pose is held";
    run(1.2);
    EXPECT_LE(b.datagrams, b_before_mute + 2);
    EXPECT_FALSE(b.playback().active()) << "muted: B's puppetry ended";
    EXPECT_GT(b.playback().stats().joints_expired, 0u);
    EXPECT_TRUE(at_rest(b)) << "B: head " << angle_between(b.local(head), Quat::identity())
                            << " rad, wrist " << length(b.model_position(wrist) - rest_wrist)
                            << " m from rest";
    EXPECT_TRUE(follows(a)) << "A is unaffected by B's mute";
    EXPECT_TRUE(all_finite);

    const RelayCounters c = (*server)->counters();
    EXPECT_GT(c.deliveries_muted, 0u);
    EXPECT_EQ(c.datagrams_malformed, 0u);
    EXPECT_EQ(c.circuits_opened, 3u);
    EXPECT_EQ(c.datagrams_no_circuit + c.datagrams_spoofed + c.datagrams_unknown_agent, 0u);
    EXPECT_EQ(c.blocks_malformed, 0u);
    EXPECT_EQ(a.runtime->malformed_datagrams(), 0u);
    EXPECT_EQ(a.playback().stats().blocks_malformed, 0u);
}
