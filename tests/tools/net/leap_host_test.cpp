// SPDX-License-Identifier: MIT
// LeapHost: the viewer's side of a LEAP puppetry conversation — the initial message, the
// command pump's operations and their replies (reqid from data.reqid, none without `reply`),
// the puppetry pump's joint-data forms (set data|d and set|s with i/j, the flat `move`), what
// reaches puppetry.controller listeners (set_skeleton, set_camera, stop), and bad input
// (counted, warned once per key, the rest applied).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "slanim/net/leap_host.hpp"
#include "slanim/net/leap_stream.hpp"
#include "test_util.hpp"

using namespace slanim;

namespace {

struct Session {
    World world;
    Entity avatar = world.create_avatar(Skeleton::default_skeleton());
    std::shared_ptr<PuppetryRuntime> rt;
    std::vector<Llsd> out;
    std::vector<std::string> warnings;
    LeapHost host;
    std::uint64_t number = 0;

    Session()
        : rt(make_runtime()),
          host(
              avatar,
              [this](std::string_view frame) {
                  LeapFrameReader r;
                  r.feed(frame);
                  auto it = r.next();
                  EXPECT_TRUE(it && it->text);
                  auto v = parse_llsd_notation(*it->text);
                  EXPECT_TRUE(v) << v.error().describe();
                  out.push_back(*v);
              },
              [this](const std::string& w) { warnings.push_back(w); }, "REPLY", "COMMAND") {
        rt->attach(world, avatar);
    }
    std::shared_ptr<PuppetryRuntime> make_runtime() {
        PuppetryTiming t;
        t.ease_in_s = 0.f;
        return PuppetryRuntime::install(world, t);
    }
    /// Sends {pump, data} (data in notation) and returns what the host wrote for it.
    std::vector<Llsd> send(const std::string& pump, const std::string& data) {
        out.clear();
        host.message(++number, "{'pump':'" + pump + "','data':" + data + "}", *rt, 1.0);
        return out;
    }
    void step(int n = 10) {
        for (int k = 0; k < n; ++k) world.step(0.05f);
    }
    Quat local(const char* joint) {
        return world.local_pose(avatar).rotations[static_cast<std::size_t>(test::skel().find(joint))];
    }
    Vec3 local_pos(const char* joint) {
        return world.local_pose(avatar).positions[static_cast<std::size_t>(test::skel().find(joint))];
    }
    Vec3 scale(const char* joint) {
        return world.local_pose(avatar).scales[static_cast<std::size_t>(test::skel().find(joint))];
    }
    Vec3 model_pos(const char* joint) {
        return world.model_pose(avatar).positions[static_cast<std::size_t>(test::skel().find(joint))];
    }
    std::string all_warnings() const {
        std::string s;
        for (const auto& w : warnings) s += w + "\n";
        return s;
    }
};

float angle(Quat a, Quat b) { return 2.f * std::acos(std::min(1.f, std::fabs(dot(a, b)))); }

}  // namespace

TEST(LeapHost, InitialMessageNamesTheReplyAndCommandPumps) {
    Session s;
    s.host.start();
    s.host.start();  // once
    ASSERT_EQ(s.out.size(), 1u);
    EXPECT_EQ(s.out[0].find("pump")->as_string(), "REPLY");
    EXPECT_EQ(s.out[0].find("data")->find("command")->as_string(), "COMMAND");
    EXPECT_EQ(*s.out[0].find("data")->find("features"), Llsd::empty_map());
    LeapHost random(s.avatar, [](std::string_view) {}, [](const std::string&) {});
    EXPECT_EQ(random.reply_pump().size(), 36u);
    EXPECT_NE(random.reply_pump(), random.command_pump());
}

TEST(LeapHost, CommandPumpOperationsReplyOnTheReplyPumpWithTheRequestsReqid) {
    Session s;
    auto r = s.send("COMMAND", "{'op':'ping','reqid':i42,'reply':'REPLY'}");
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].find("pump")->as_string(), "REPLY");
    EXPECT_EQ(*r[0].find("data"), Llsd(Llsd::Map{{"reqid", Llsd(42)}}));
    // Without reqid the reply still has the key (undefined), like LLReqID::stamp.
    r = s.send("COMMAND", "{'op':'ping','reply':'REPLY'}");
    ASSERT_EQ(r.size(), 1u);
    ASSERT_NE(r[0].find("data")->find("reqid"), nullptr);
    EXPECT_TRUE(r[0].find("data")->find("reqid")->is_undefined());
    // Without reply: no answer at all.
    EXPECT_TRUE(s.send("COMMAND", "{'op':'ping','reqid':i1}").empty());

    const std::string listen = "{'op':'listen','reqid':i-1,'source':'puppetry.controller','listener':'L',"
                               "'reply':'REPLY'}";
    r = s.send("COMMAND", listen);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_TRUE(r[0].find("data")->find("status")->as_boolean());
    EXPECT_EQ(r[0].find("data")->find("reqid")->as_integer(), -1);
    EXPECT_EQ(s.host.listeners("puppetry.controller"), 1u);
    r = s.send("COMMAND", listen);  // the same listener name again: DupListenerName
    EXPECT_FALSE(r[0].find("data")->find("status")->as_boolean());
    r = s.send("COMMAND", "{'op':'stoplistening','source':'puppetry.controller','listener':'L','reply':'REPLY'}");
    EXPECT_TRUE(r[0].find("data")->find("status")->as_boolean());
    EXPECT_EQ(s.host.listeners("puppetry.controller"), 0u);
    r = s.send("COMMAND", "{'op':'stoplistening','source':'puppetry.controller','listener':'L','reply':'REPLY'}");
    EXPECT_FALSE(r[0].find("data")->find("status")->as_boolean());

    r = s.send("COMMAND", "{'op':'getAPIs','reqid':i3,'reply':'REPLY'}");
    const Llsd* apis = r[0].find("data");
    EXPECT_TRUE(apis->find("puppetry")->find("desc")->is_string());
    EXPECT_TRUE(apis->find("COMMAND")->find("desc")->is_string());
    EXPECT_EQ(apis->find("reqid")->as_integer(), 3);
    r = s.send("COMMAND", "{'op':'getAPI','api':'puppetry','reply':'REPLY'}");
    EXPECT_EQ(r[0].find("data")->find("key")->as_string(), "command");
    EXPECT_GE(r[0].find("data")->find("ops")->size(), 3u);
    r = s.send("COMMAND", "{'op':'getFeatures','reply':'REPLY'}");
    EXPECT_EQ(r[0].find("data")->size(), 1u);  // reqid only: the baseline protocol

    // newpump: events posted to it come back to the plug-in; killpump removes it.
    r = s.send("COMMAND", "{'op':'newpump','name':'mine','reply':'REPLY'}");
    EXPECT_EQ(r[0].find("data")->find("name")->as_string(), "mine");
    r = s.send("mine", "{'hello':i1}");
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].find("pump")->as_string(), "mine");
    r = s.send("COMMAND", "{'op':'killpump','name':'mine','reply':'REPLY'}");
    EXPECT_TRUE(r[0].find("data")->find("status")->as_boolean());
    EXPECT_TRUE(s.send("mine", "{'hello':i1}").empty());
    EXPECT_EQ(s.host.counters().dropped_posts, 1u);

    // An unknown operation: an error reply, counted.
    r = s.send("COMMAND", "{'op':'frobnicate','reqid':i9,'reply':'REPLY'}");
    ASSERT_EQ(r.size(), 1u);
    EXPECT_NE(r[0].find("data")->find("error")->as_string().find("frobnicate"), std::string::npos);
    EXPECT_EQ(r[0].find("data")->find("reqid")->as_integer(), 9);
    r = s.send("COMMAND", "{'op':'listen','reply':'REPLY'}");
    EXPECT_NE(r[0].find("data")->find("error")->as_string().find("needs 'source'"), std::string::npos);
    EXPECT_EQ(s.host.counters().rejected, 2u);
}

TEST(LeapHost, SetDataWithJointStateAndInverseKinematicsInLongAndShortNames) {
    Session s;
    const float z = std::sin(0.15f);
    s.send("puppetry", "{'command':'set','data':{'joint_state':{'mNeck':{'rotation':[r0,r0,r" + std::to_string(z) +
                           "],'position':[r0,r0,r0.1]},'mChest':{'s':[r1.5,r1,r1]}},"
                           "'j':{'mHead':{'r':[r0,r" + std::to_string(z) + ",r0]}}}}");
    s.step();
    EXPECT_LT(angle(s.local("mNeck"), quat_from_axis_angle(0.3f, {0, 0, 1})), 1e-3f);
    EXPECT_NEAR(s.local_pos("mNeck").z, 0.1f, 1e-4f);
    EXPECT_NEAR(s.scale("mChest").x, 1.5f, 1e-4f);
    EXPECT_LT(angle(s.local("mHead"), quat_from_axis_angle(0.3f, {0, 1, 0})), 1e-3f);
    // i: a position target on the wrist pulls it (arm-span normalised, pelvis frame).
    const Vec3 before = s.model_pos("mWristLeft");
    s.send("puppetry", "{'command':'set','d':{'inverse_kinematics':{'mWristLeft':{'p':[r0.5,r0.3,r0.3]}}}}");
    s.step();
    EXPECT_GT(length(s.model_pos("mWristLeft") - before), 0.05f);
    // The 2022-11 branches' set|s payload key.
    s.send("puppetry", "{'command':'set','s':{'j':{'mNeck':{'r':[r0,r0,r0]}}}}");
    s.step();
    EXPECT_LT(angle(s.local("mNeck"), Quat::identity()), 1e-3f);
    EXPECT_EQ(s.host.counters().events, 3u);
    EXPECT_EQ(s.host.counters().skipped_keys, 0u) << s.all_warnings();
}

TEST(LeapHost, FlatMoveFormTakesLocalRotRotPosAndScale) {
    Session s;
    const float z = std::sin(0.1f);
    s.send("puppetry", "{'command':'move','reply':'REPLY','mHead':{'local_rot':[r0,r0,r" + std::to_string(z) +
                           "]},'mChest':{'scale':[r1,r1.2,r1]}}");
    s.step();
    EXPECT_LT(angle(s.local("mHead"), quat_from_axis_angle(0.2f, {0, 0, 1})), 1e-3f);
    EXPECT_NEAR(s.scale("mChest").y, 1.2f, 1e-4f);
    const Vec3 before = s.model_pos("mWristRight");
    s.send("puppetry", "{'command':'move','mWristRight':{'pos':[r0.5,r-0.3,r0.3],'no_constraint':true}}");
    s.step();
    EXPECT_GT(length(s.model_pos("mWristRight") - before), 0.05f);
    EXPECT_EQ(s.host.counters().skipped_keys, 0u) << s.all_warnings();
    // `move` keys belong to `move`: `rotation` there is unknown, skipped, the rest applied.
    s.send("puppetry", "{'command':'move','mHead':{'rotation':[r0,r0,r0],'local_rot':[r0,r0,r0]}}");
    s.step();
    EXPECT_LT(angle(s.local("mHead"), Quat::identity()), 1e-3f);
    EXPECT_EQ(s.host.counters().skipped_keys, 1u);
    EXPECT_NE(s.all_warnings().find("mHead.rotation: unknown parameter"), std::string::npos) << s.all_warnings();
}

TEST(LeapHost, UnknownKeysAndJointsAreSkippedCountedAndWarnedOncePerKey) {
    Session s;
    const float z = std::sin(0.1f);
    const std::string msg = "{'command':'set','data':{'j':{'mHead':{'r':[r0,r0,r" + std::to_string(z) +
                            "],'local_rotx':[r0,r0,r0]},'mTail9000':{'r':[r0,r0,r0]}},'q':{}}}";
    s.send("puppetry", msg);
    s.send("puppetry", msg);
    s.step();
    EXPECT_LT(angle(s.local("mHead"), quat_from_axis_angle(0.2f, {0, 0, 1})), 1e-3f);
    EXPECT_EQ(s.host.counters().skipped_keys, 4u);   // local_rotx and q, twice
    EXPECT_EQ(s.host.counters().unknown_joints, 2u);
    EXPECT_EQ(s.host.counters().rejected, 0u);
    EXPECT_EQ(s.warnings.size(), 3u) << s.all_warnings();  // one per key
    EXPECT_NE(s.all_warnings().find("message 1: data.j.mHead.local_rotx: unknown parameter"), std::string::npos)
        << s.all_warnings();
    EXPECT_NE(s.all_warnings().find("unknown joint 'mTail9000'"), std::string::npos);
    EXPECT_NE(s.host.describe_counters().find("4 keys skipped, 2 unknown joints"), std::string::npos);
}

TEST(LeapHost, BadInputIsCountedNamedByMessageAndKeyAndTheRestStillRead) {
    Session s;
    s.host.message(++s.number, "{'pump':'puppetry','data':{'command':'set'", *s.rt, 1.0);  // malformed
    s.host.message(++s.number, "{'data':{}}", *s.rt, 1.0);                                  // no pump
    s.host.framing_fault(++s.number, "at byte 7: expected a decimal length");
    // NaN and infinity: that value skipped; |xyz| > 1: normalised (w = 0) as the viewer does.
    s.send("puppetry", "{'command':'set','d':{'j':{'mNeck':{'r':[rnan,r0,r0]},'mHead':{'r':[r0,r0,r2]},"
                       "'mChest':{'p':[r0,rinf,r0]},'mTorso':{'r':[r0,r0]}}}}");
    s.step();
    EXPECT_EQ(s.host.counters().rejected, 3u);
    EXPECT_EQ(s.host.counters().skipped_keys, 3u) << s.all_warnings();
    EXPECT_LT(angle(s.local("mHead"), Quat{0, 0, 1, 0}), 1e-3f);  // 180° about Z
    EXPECT_LT(angle(s.local("mNeck"), Quat::identity()), 1e-3f);
    const std::string w = s.all_warnings();
    EXPECT_NE(w.find("message 1: malformed LLSD"), std::string::npos) << w;
    EXPECT_NE(w.find("message 2: expected a map with 'pump'"), std::string::npos) << w;
    EXPECT_NE(w.find("message 3: at byte 7"), std::string::npos) << w;
    EXPECT_NE(w.find("message 4: d.j.mChest.p: component 1 is inf"), std::string::npos) << w;  // the first non-finite value; the NaN after it is counted, not warned again
    EXPECT_NE(w.find("message 4: d.j.mHead.r: |xyz|² = 4"), std::string::npos) << w;
    EXPECT_NE(w.find("d.j.mTorso.r: expected an array of 3 numbers"), std::string::npos) << w;
    // A later good message still applies.
    s.send("puppetry", "{'command':'set','d':{'j':{'mHead':{'r':[r0,r0,r0]}}}}");
    s.step();
    EXPECT_LT(angle(s.local("mHead"), Quat::identity()), 1e-3f);
}

TEST(LeapHost, ControllerCommandsReachListenersOnlyAndStopIsSentOnce) {
    Session s;
    // Before any listen, set_skeleton has nowhere to go (the viewer drops it too).
    EXPECT_TRUE(s.send("puppetry", "{'command':'get','data':['skeleton'],'reply':'REPLY'}").empty());
    s.send("COMMAND", "{'op':'listen','source':'puppetry.controller','listener':'REPLY','reply':'REPLY'}");
    auto r = s.send("puppetry", "{'command':'get','data':['skeleton','camera'],'reqid':i5,'reply':'REPLY'}");
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].find("pump")->as_string(), "puppetry.controller");
    EXPECT_EQ(r[0].find("data")->find("command")->as_string(), "set_skeleton");
    EXPECT_TRUE(r[0].find("data")->find("args")->find("mWristLeft")->is_map());
    EXPECT_EQ(r[1].find("pump")->as_string(), "REPLY");
    EXPECT_EQ(r[1].find("data")->find("camera_id")->as_integer(), 0);
    EXPECT_EQ(r[1].find("data")->find("reqid")->as_integer(), 5);
    // Setting the camera: set_camera to the controller (LLPuppetModule::sendCameraNumber).
    r = s.send("puppetry", "{'command':'set','data':{'camera':i2}}");
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].find("data")->find("command")->as_string(), "set_camera");
    EXPECT_EQ(r[0].find("data")->find("args")->find("camera_id")->as_integer(), 2);
    EXPECT_EQ(s.host.camera(), 2);
    // The 2022-08 operations.
    r = s.send("puppetry", "{'command':'send_skeleton'}");
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].find("data")->find("command")->as_string(), "set_skeleton");
    r = s.send("puppetry", "{'command':'get_camera','reply':'REPLY'}");
    EXPECT_EQ(r[0].find("data")->find("camera_id")->as_integer(), 2);
    // stop: once.
    s.out.clear();
    s.host.stop();
    s.host.stop();
    ASSERT_EQ(s.out.size(), 1u);
    EXPECT_EQ(s.out[0].find("pump")->as_string(), "puppetry.controller");
    EXPECT_EQ(*s.out[0].find("data"), Llsd(Llsd::Map{{"command", Llsd("stop")}}));
    EXPECT_TRUE(s.host.stopped());
}
