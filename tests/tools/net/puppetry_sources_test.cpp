// SPDX-License-Identifier: MIT
// Puppetry sources: UDP on loopback driving an avatar, LEAP framing, a
// scripted LEAP session (set + get) over pipes, frame → sample resolution, and capture replay
// (timing, looping, and the real webcam capture when ../shared is present).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <string>

#include "slanim/puppetry/event_block.hpp"
#include "slanim/puppetry/datagram.hpp"
#include "slanim/net/puppetry_sources.hpp"
#include "test_util.hpp"

using namespace slanim;

namespace {

puppetry::AgentId agent(std::uint8_t b) {
    puppetry::AgentId a;
    a.bytes.fill(b);
    return a;
}

float head_angle(World& w, Entity e, Quat q) {
    const Quat h = w.local_pose(e).rotations[static_cast<std::size_t>(test::skel().find("mHead"))];
    const Quat r = hamilton(conjugate(h), q);
    return 2.f * std::atan2(std::sqrt(r.x * r.x + r.y * r.y + r.z * r.z), std::fabs(r.w));
}

}  // namespace

TEST(PuppetrySources, UdpDatagramsOnLoopbackDriveTheBoundAvatar) {
    World world;
    const Entity a = world.create_avatar(Skeleton::default_skeleton());
    const Entity b = world.create_avatar(Skeleton::default_skeleton());
    PuppetryTiming t;
    t.ease_in_s = 0.f;
    auto rt = PuppetryRuntime::install(world, t);
    double clock = 0.0;
    rt->set_clock([&] { return clock; });
    ASSERT_TRUE(rt->bind_agent(world, agent(0xAA), a));
    ASSERT_TRUE(rt->bind_agent(world, agent(0xBB), b));
    auto src = UdpPuppetrySource::open("127.0.0.1", 0);
    ASSERT_TRUE(src) << src.error().describe();
    const std::uint16_t port = (*src)->port();
    ASSERT_NE(port, 0);
    EXPECT_EQ((*src)->describe(), "udp://127.0.0.1:" + std::to_string(port));
    auto* udp = src->get();
    rt->add_source(std::move(*src));

    const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const auto send = [&](const std::vector<std::uint8_t>& dg) {
        ASSERT_EQ(::sendto(fd, dg.data(), dg.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to),
                  static_cast<ssize_t>(dg.size()));
    };

    const Quat target = maya_q(0.f, 0.f, 35.f, EulerOrder::XYZ);
    PuppetryEncoder enc;
    for (int k = 0; k < 12; ++k) {
        PuppetryEvent ev;
        ev.timestamp_ms = 1000 + 50 * k;
        PuppetryJointEvent je;
        je.joint_id = static_cast<std::int16_t>(test::skel().joint_num(test::skel().find("mHead")));
        je.flags = kPuppetLocalRot;
        je.rotation = target;
        ev.joints.push_back(je);
        PuppetryBlocks blocks;
        ASSERT_TRUE(enc.encode(ev, blocks));
        std::vector<std::span<const std::uint8_t>> spans;
        for (std::size_t i = 0; i < blocks.size(); ++i) spans.push_back(blocks[i]);
        std::vector<std::uint8_t> dg;
        ASSERT_TRUE(puppetry::encode_blocks(agent(0xAA), spans, dg));
        send(dg);
        send({0x00, 0x01, 0x02});  // malformed: counted and dropped
        clock += 0.05;
        world.step(0.05f);
    }
    ::close(fd);
    EXPECT_EQ(udp->datagrams(), 24u);
    EXPECT_EQ(rt->malformed_datagrams(), 12u);
    EXPECT_EQ(rt->playback(a)->stats().blocks_received, 12u);
    EXPECT_EQ(rt->playback(a)->stats().blocks_malformed, 0u);
    EXPECT_LT(head_angle(world, a, target), 2e-3f);  // quantized over ±5: ~1.5e-4 per component
    EXPECT_FALSE(rt->playback(b)->active());           // the other agent got nothing
    EXPECT_GT(head_angle(world, b, target), 0.5f);
}

TEST(PuppetrySources, LeapFramingIsIncrementalAndResynchronisesAfterGarbage) {
    LeapFrameReader r;
    r.feed("7:{'a':");
    EXPECT_FALSE(r.next());
    r.feed("1}\n3:[1]");
    auto m = r.next();
    ASSERT_TRUE(m && m->text);
    EXPECT_EQ(*m->text, "{'a':1}");
    EXPECT_EQ(m->number, 1u);
    m = r.next();
    ASSERT_TRUE(m && m->text);
    EXPECT_EQ(*m->text, "[1]");
    EXPECT_FALSE(r.next());
    // A message without its length prefix: one fault, then the next `N:{` is found.
    r.feed("{'pump':'x','data':1}");
    m = r.next();
    ASSERT_TRUE(m);
    EXPECT_FALSE(m->text);
    EXPECT_EQ(m->number, 3u);
    EXPECT_NE(m->fault.find("expected a decimal length"), std::string::npos) << m->fault;
    EXPECT_FALSE(r.next());
    r.feed("2:{}");
    m = r.next();
    ASSERT_TRUE(m && m->text);
    EXPECT_EQ(*m->text, "{}");
    EXPECT_EQ(m->number, 4u);
    // A declared length above 1 MiB: one fault, its bytes skipped as they come.
    r.feed("2000000:");
    m = r.next();
    ASSERT_TRUE(m);
    EXPECT_FALSE(m->text);
    EXPECT_NE(m->fault.find("exceeds 1 MiB"), std::string::npos) << m->fault;
    const std::string chunk(500000, 'x');
    for (int k = 0; k < 4; ++k) {
        r.feed(chunk);
        EXPECT_FALSE(r.next());
    }
    r.feed("2:{}");
    m = r.next();
    ASSERT_TRUE(m && m->text);
    EXPECT_EQ(*m->text, "{}");
    // 21 digits: a fault, not an overflow.
    r.feed("123456789012345678901:{}3:{ }");
    m = r.next();
    ASSERT_TRUE(m);
    EXPECT_FALSE(m->text);
    m = r.next();
    ASSERT_TRUE(m && m->text);
    EXPECT_EQ(*m->text, "{ }");
    EXPECT_EQ(r.faults(), 3u);
    EXPECT_EQ(leap_frame("{}"), "2:{}");
}

namespace {

/// The frames written to `fd` (non-blocking) so far, parsed.
std::vector<Llsd> read_frames(int fd, LeapFrameReader& reader) {
    char buf[65536];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) reader.feed({buf, static_cast<std::size_t>(n)});
    std::vector<Llsd> out;
    while (auto it = reader.next()) {
        EXPECT_TRUE(it->text) << it->fault;
        if (!it->text) continue;
        auto v = parse_llsd_notation(*it->text);
        EXPECT_TRUE(v) << v.error().describe();
        if (v) out.push_back(std::move(*v));
    }
    return out;
}

std::string read_text(int fd) {
    char buf[65536];
    std::string out;
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
    return out;
}

}  // namespace

TEST(PuppetrySources, ScriptedLeapSessionOverPipesAsTheViewerHoldsIt) {
    World world;
    const Entity a = world.create_avatar(Skeleton::default_skeleton());
    PuppetryTiming t;
    t.ease_in_s = 0.f;
    auto rt = PuppetryRuntime::install(world, t);
    ASSERT_TRUE(rt->attach(world, a));
    int in[2], out[2], log[2];
    ASSERT_EQ(::pipe(in), 0);
    ASSERT_EQ(::pipe(out), 0);
    ASSERT_EQ(::pipe(log), 0);
    ::fcntl(out[0], F_SETFL, O_NONBLOCK);
    ::fcntl(log[0], F_SETFL, O_NONBLOCK);
    auto leap = std::make_unique<LeapPuppetrySource>(a, in[0], out[1], log[1]);
    auto* src = leap.get();
    rt->add_source(std::move(leap));
    world.step(0.05f);
    LeapFrameReader rr;
    auto frames = read_frames(out[0], rr);
    ASSERT_EQ(frames.size(), 1u);  // the initial message, before anything is asked
    const std::string reply = frames[0].find("pump")->as_string();
    const std::string command = frames[0].find("data")->find("command")->as_string();
    EXPECT_TRUE(frames[0].find("data")->find("features")->is_map());
    const auto framed = [&](const std::string& pump, const std::string& data) {
        return leap_frame("{'pump':'" + pump + "','data':" + data + "}");
    };
    const float s = std::sin(0.2f);  // 0.4 rad about Z
    const std::string script =
        framed(command, "{'op':'listen','reqid':i-1,'source':'puppetry.controller','listener':'" + reply +
                            "','reply':'" + reply + "'}") +
        framed("puppetry", "{'command':'set','reqid':i1,'reply':'" + reply + "','data':{'j':{'mNeck':{'r':[r0,r0,r" +
                               std::to_string(s) + "]}}}}") +
        framed("puppetry", "{'command':'set','d':{'joint_state':{'8':{'rotation':[r0,r0,r" + std::to_string(s) +
                               "]},'mNoSuchJoint':{'r':[r0,r0,r0]}}}}") +
        framed("puppetry", "{'command':'get','data':['skeleton'],'reqid':i7,'reply':'" + reply + "'}");
    ASSERT_EQ(::write(in[1], script.data(), script.size()), static_cast<ssize_t>(script.size()));
    for (int k = 0; k < 20; ++k) world.step(0.05f);
    EXPECT_EQ(src->messages(), 4u);
    const std::string logged = read_text(log[0]);
    EXPECT_EQ(src->rejected(), 0u) << logged;
    EXPECT_EQ(src->host().counters().unknown_joints, 1u) << logged;
    EXPECT_NE(logged.find("message 3: unknown joint 'mNoSuchJoint'"), std::string::npos) << logged;
    const Quat expect = quat_from_axis_angle(0.4f, {0.f, 0.f, 1.f});
    EXPECT_LT(head_angle(world, a, expect), 1e-3f);
    const Quat neck = world.local_pose(a).rotations[static_cast<std::size_t>(test::skel().find("mNeck"))];
    EXPECT_NEAR(std::fabs(dot(neck, expect)), 1.f, 1e-5f);

    frames = read_frames(out[0], rr);
    ASSERT_EQ(frames.size(), 2u);
    // The listen reply on the reply pump, reqid echoed from data.reqid.
    EXPECT_EQ(frames[0].find("pump")->as_string(), reply);
    EXPECT_EQ(frames[0].find("data")->find("reqid")->as_integer(), -1);
    EXPECT_TRUE(frames[0].find("data")->find("status")->as_boolean());
    // The skeleton, as LLPuppetModule::send_skeleton posts it to puppetry.controller.
    EXPECT_EQ(frames[1].find("pump")->as_string(), "puppetry.controller");
    const Llsd* data = frames[1].find("data");
    EXPECT_EQ(data->find("command")->as_string(), "set_skeleton");
    EXPECT_EQ(data->find("reqid")->as_integer(), 7);
    const Llsd* sk = data->find("args");
    ASSERT_TRUE(sk);
    EXPECT_NEAR(*sk->find("scale")->to_number(), rt->playback(a)->arm_span(), 1e-6);
    const Llsd* head = sk->find("mHead");
    ASSERT_TRUE(head);
    EXPECT_EQ(head->find("id")->as_integer(), 8);
    EXPECT_EQ(head->find("parent_id")->as_integer(), 7);
    EXPECT_EQ(head->find("parent_relative_position")->size(), 3u);
    const Llsd* pelvis = sk->find("mPelvis");
    ASSERT_TRUE(pelvis);
    EXPECT_EQ(pelvis->find("parent_id")->as_integer(), -1);
    EXPECT_EQ(pelvis->find("children")->size(), 1u);  // only the first child, like the viewer
    // The stream closes: `stop` to the controller's listeners, once.
    ::close(in[1]);
    world.step(0.05f);
    world.step(0.05f);
    EXPECT_TRUE(src->finished());
    frames = read_frames(out[0], rr);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].find("pump")->as_string(), "puppetry.controller");
    EXPECT_EQ(frames[0].find("data")->find("command")->as_string(), "stop");
    for (int fd : {in[0], out[0], out[1], log[0], log[1]}) ::close(fd);
}

TEST(PuppetrySources, FrameSamplesResolveNamesAliasesAndNumbersAndMergeBothFrames) {
    const Skeleton& sk = test::skel();
    auto msg = parse_llsd_notation(
        "{'command':'set','d':{'j':{'mHead':{'r':[r0,r0,r0.1]},'7':{'p':[r0,r0,r0.05]}},"
        "'i':{'mHead':{'p':[r0.1,r0,r0.8]},'mWristLeft':{'d':true}}}}");
    ASSERT_TRUE(msg) << msg.error().describe();
    auto frame = puppetry_frame_from_leap(*msg, 0.0);
    ASSERT_TRUE(frame) << frame.error().describe();
    std::vector<PuppetryJointSample> samples;
    auto n = puppetry_frame_samples(*frame, sk, samples);
    ASSERT_TRUE(n) << n.error().describe();
    // mHead (parent rotation + root position target in one sample), mNeck (joint number 7) and
    // the wrist (disable_constraint only: a sample with that flag alone).
    ASSERT_EQ(*n, 3u);
    const auto by_joint = [&](const char* name) -> const PuppetryJointSample* {
        for (const auto& s : samples)
            if (s.joint == sk.find(name)) return &s;
        return nullptr;
    };
    const PuppetryJointSample* head = by_joint("mHead");
    ASSERT_NE(head, nullptr);
    EXPECT_EQ(head->flags, kPuppetLocalRot | kPuppetTargetPos);
    EXPECT_NEAR(head->rotation.z, 0.1f, 1e-6f);
    EXPECT_NEAR(head->rotation.w, std::sqrt(1.f - 0.01f), 1e-6f);
    EXPECT_EQ(head->position, (Vec3{0.1f, 0.f, 0.8f}));
    const PuppetryJointSample* neck = by_joint("mNeck");
    ASSERT_NE(neck, nullptr);
    EXPECT_EQ(neck->flags, kPuppetLocalPos);
    ASSERT_NE(by_joint("mWristLeft"), nullptr);
    EXPECT_EQ(by_joint("mWristLeft")->flags, kPuppetDisableConstraint);
    // The wire event carries the joint numbers.
    auto ev = puppetry_frame_event(*frame, sk, 1234);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->timestamp_ms, 1234);
    ASSERT_EQ(ev->joints.size(), 3u);
    for (const auto& je : ev->joints)
        EXPECT_TRUE(je.joint_id == 8 || je.joint_id == 7 || je.joint_id == 61) << je.joint_id;

    PuppetryFrame unknown;
    unknown.joints.push_back({"mTail9000", PuppetryRefFrame::Parent, {}, Quat::identity(), {}, false});
    auto bad = puppetry_frame_samples(unknown, sk, samples);
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("unknown joint 'mTail9000'"), std::string::npos);
}

TEST(PuppetrySources, ReplayPlaysAtTheCapturesOwnTimesAndLoopsWithIncreasingTimestamps) {
    const auto cap = parse_puppetry_capture(
        "{'mHead': {'rot': [0, 0, 0.1]}, 'time': '2022-05-06 17:23:57.000+00:00'}\n"
        "{'mHead': {'rot': [0, 0, 0.2]}, 'time': '2022-05-06 17:23:57.100+00:00'}\n"
        "\n"
        "{'mHead': {'rot': [0, 0, 0.3]}, 'time': '2022-05-06 17:23:57.200+00:00'}\n");
    ASSERT_TRUE(cap) << cap.error().describe();
    World world;
    const Entity a = world.create_avatar(Skeleton::default_skeleton());
    auto rt = PuppetryRuntime::install(world);
    double clock = 10.0;
    rt->set_clock([&] { return clock; });
    ASSERT_TRUE(rt->attach(world, a));
    auto src = ReplayPuppetrySource::create(*cap, test::skel(), a, true, "test.txt");
    ASSERT_TRUE(src) << src.error().describe();
    ReplayPuppetrySource* replay = src->get();
    EXPECT_EQ(replay->describe(), "replay:test.txt#loop");
    EXPECT_NEAR(replay->duration(), 0.2, 1e-6);
    EXPECT_NEAR(replay->loop_period(), 0.3, 1e-6);
    rt->add_source(std::move(*src));
    const std::pair<double, std::uint64_t> expect[] = {
        {10.0, 1}, {10.05, 1}, {10.101, 2}, {10.25, 3}, {10.301, 4}, {10.59, 6}, {10.601, 7}, {11.95, 20}};
    for (const auto& [t, events] : expect) {
        clock = t;
        world.step(0.01f);
        EXPECT_EQ(replay->events(), events) << "t = " << t;
    }
    EXPECT_FALSE(replay->finished());
    // The sender timestamps are the capture times plus whole loop periods: every spacing the
    // jitter buffer measured was the capture's 100 ms, across the loop seams too.
    EXPECT_NEAR(rt->playback(a)->period_s(test::skel().find("mHead")), 0.1f, 1e-6f);
    EXPECT_EQ(rt->playback(a)->stats().events_queued, 20u);

    // Once: finished after the last frame; an empty capture and an unknown joint are refused.
    auto once = ReplayPuppetrySource::create(*cap, test::skel(), a, false, "once.txt");
    ASSERT_TRUE(once);
    EXPECT_EQ((*once)->describe(), "replay:once.txt");
    EXPECT_FALSE(ReplayPuppetrySource::create(PuppetryCapture{}, test::skel(), a, false, "x"));
    PuppetryCapture odd = *cap;
    odd.frames[1].joints[0].joint = "mNoSuchJoint";
    auto r = ReplayPuppetrySource::create(odd, test::skel(), a, false, "odd.txt");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("frame 2: unknown joint 'mNoSuchJoint'"), std::string::npos)
        << r.error().message;
    auto spec = open_puppetry_source("replay:/no/such/capture.txt#loop", a, test::skel());
    ASSERT_FALSE(spec);
    EXPECT_NE(spec.error().message.find("/no/such/capture.txt"), std::string::npos) << spec.error().message;
    EXPECT_FALSE(open_puppetry_source("replay:", a, test::skel()));
    EXPECT_FALSE(open_puppetry_source("tcp://127.0.0.1:5", a, test::skel()));
}

TEST(PuppetrySources, ReplayOfTheWebcamCaptureMovesTheHeadAndTheWristTowardItsTarget) {
    const std::string path =
        std::string(SLANIM_SHARED_DIR) + "/puppetry/captured_webcam_sample_2022-05-06.txt";
    if (::access(path.c_str(), R_OK) != 0)
        GTEST_SKIP() << "the webcam capture is absent (" << path << "): shared data not available";
    auto cap = load_puppetry_capture(path);
    ASSERT_TRUE(cap) << cap.error().describe();
    World world;
    const Entity a = world.create_avatar(Skeleton::default_skeleton());
    auto rt = PuppetryRuntime::install(world);  // the world-step clock: simulated time
    ASSERT_TRUE(rt->attach(world, a));
    auto src = open_puppetry_source("replay:" + path, a, test::skel());
    ASSERT_TRUE(src) << src.error().describe();
    auto* replay = static_cast<ReplayPuppetrySource*>(src->get());
    rt->add_source(std::move(*src));

    const Skeleton& sk = test::skel();
    const auto wrist = static_cast<std::size_t>(sk.find("mWristLeft"));
    const auto head = static_cast<std::size_t>(sk.find("mHead"));
    const PuppetryFrame& last = cap->frames.back();
    const PuppetryJointTarget* target = last.find("mWristLeft", PuppetryRefFrame::Root);
    ASSERT_NE(target, nullptr);
    ASSERT_TRUE(target->position);
    const float span = rt->playback(a)->arm_span();
    world.step(0.f);
    const auto pelvis = static_cast<std::size_t>(sk.pelvis());
    const Vec3 goal = world.model_pose(a).positions[pelvis] +
                      rotate(*target->position * (0.5f * span), world.model_pose(a).rotations[pelvis]);
    const float before = length(world.model_pose(a).positions[wrist] - goal);
    for (int k = 0; k < 45; ++k) {  // 1.5 s at 30 Hz: the 0.47 s capture plus the jitter delay
        world.step(1.f / 30.f);
        const ModelPose& mp = world.model_pose(a);
        for (int j = 0; j < sk.num_bones(); ++j) {
            ASSERT_TRUE(is_finite(mp.positions[static_cast<std::size_t>(j)])) << sk.name(j) << " frame " << k;
            ASSERT_TRUE(is_finite(mp.rotations[static_cast<std::size_t>(j)])) << sk.name(j) << " frame " << k;
        }
    }
    EXPECT_EQ(replay->events(), cap->frames.size());
    EXPECT_TRUE(replay->finished());
    const float after = length(world.model_pose(a).positions[wrist] - goal);
    EXPECT_LT(after, 0.5f * before) << "before " << before << " m, after " << after << " m";
    const PuppetryStats& st = rt->playback(a)->stats();
    EXPECT_GT(st.targets_solved, 0u);
    EXPECT_EQ(st.targets_unsupported, 0u);  // the finger tips too, on chains hanging from the wrist
    // The head shows the capture's last parent-frame rotation.
    const PuppetryJointTarget* h = last.find("mHead", PuppetryRefFrame::Parent);
    ASSERT_NE(h, nullptr);
    EXPECT_GT(std::fabs(dot(world.local_pose(a).rotations[head], *h->rotation)), 1.f - 1e-6f);
    EXPECT_TRUE(rt->playback(a)->posed(static_cast<int>(head)));
}
