// SPDX-License-Identifier: MIT
// `slanim play --puppetry`: a replay of the real webcam capture mixed with a keyframe motion
// (in-process, tests/tools/cli_run.hpp), usage errors, and a scripted LEAP session (set + get)
// through the slanim binary's stdin and stdout.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "slanim/formats/llsd.hpp"
#include "slanim/net/puppetry_sources.hpp"

namespace fs = std::filesystem;
using slanim::test::run_slanim;

namespace {

const fs::path kShared = SLANIM_SHARED_DIR;
const fs::path kCapture = kShared / "puppetry" / "captured_webcam_sample_2022-05-06.txt";

struct Row {
    float p[3];
    float q[4];
};

/// `slanim play` CSV → (frame, joint) → row.
std::map<std::pair<int, std::string>, Row> parse_csv(const std::string& text) {
    std::map<std::pair<int, std::string>, Row> rows;
    std::istringstream in(text);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
        std::istringstream l(line);
        std::string frame, time, joint, v;
        std::getline(l, frame, ',');
        std::getline(l, time, ',');
        std::getline(l, joint, ',');
        Row r{};
        for (float* f : {&r.p[0], &r.p[1], &r.p[2], &r.q[0], &r.q[1], &r.q[2], &r.q[3]}) {
            std::getline(l, v, ',');
            *f = std::stof(v);
        }
        rows[{std::stoi(frame), joint}] = r;
    }
    return rows;
}

bool same(const Row& a, const Row& b) {
    for (int k = 0; k < 3; ++k)
        if (a.p[k] != b.p[k]) return false;
    for (int k = 0; k < 4; ++k)
        if (a.q[k] != b.q[k]) return false;
    return true;
}

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), {}};
}

}  // namespace

TEST(PuppetryCli, ReplayOfTheWebcamCaptureMovesTheHeadAndLeftArmOverADance) {
    const fs::path dance = kShared / "anims" / "linden" / "DANCE4.anim";
    if (!fs::exists(kCapture) || !fs::exists(dance))
        GTEST_SKIP() << "shared data absent (" << kCapture << ", " << dance << ")";
    const std::vector<std::string> common = {"play", dance.string(), "--duration", "1.5", "--fps", "20"};
    auto plain_args = common;
    auto puppet_args = common;
    puppet_args.insert(puppet_args.end(), {"--puppetry", "replay:" + kCapture.string()});
    const auto plain = run_slanim(plain_args);
    const auto puppet = run_slanim(puppet_args);
    ASSERT_EQ(plain.code, 0) << plain.err;
    ASSERT_EQ(puppet.code, 0) << puppet.err;
    EXPECT_NE(puppet.err.find("puppetry replay:"), std::string::npos) << puppet.err;
    EXPECT_NE(puppet.err.find(": 5 events,"), std::string::npos) << puppet.err;
    const auto a = parse_csv(plain.out), b = parse_csv(puppet.out);
    ASSERT_EQ(a.size(), b.size());
    ASSERT_EQ(a.size(), 31u * 133u);

    // Frame 0 is the puppet motion's activation (ease-in weight 0): identical. From frame 1 on
    // (a first event due in the future is applied as it is) the head (capture rotation) and the
    // left arm (wrist IK target) differ; joints the stream does not drive keep the dance (a
    // motion without constraints) exactly.
    for (const char* j : {"mHead", "mWristLeft", "mElbowLeft"})
        EXPECT_TRUE(same(a.at({0, j}), b.at({0, j}))) << j;
    for (int f = 1; f <= 30; ++f) {
        for (const char* j : {"mHead", "mWristLeft", "mElbowLeft"})
            EXPECT_FALSE(same(a.at({f, j}), b.at({f, j}))) << j << " frame " << f;
        for (const char* j : {"mWristRight", "mAnkleRight", "mPelvis", "mChest"})
            EXPECT_TRUE(same(a.at({f, j}), b.at({f, j}))) << j << " frame " << f;
    }
    for (const auto& [key, row] : b)
        for (float v : {row.p[0], row.p[1], row.p[2], row.q[0], row.q[1], row.q[2], row.q[3]})
            ASSERT_TRUE(std::isfinite(v)) << key.second << " frame " << key.first;
}

TEST(PuppetryCli, UsageErrors) {
    auto r = run_slanim({"play", "--puppetry", "tcp://127.0.0.1:1"});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("expected udp://HOST:PORT, leap:stdin or replay:FILE[#loop]"), std::string::npos) << r.err;
    r = run_slanim({"play", "--puppetry", "udp://127.0.0.1:0"});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("give --duration"), std::string::npos) << r.err;
    r = run_slanim({"play", "--puppetry", "leap:stdin", "--duration", "1"});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("-o FILE"), std::string::npos) << r.err;
    r = run_slanim({"play", "--puppetry", "replay:/no/such/capture.txt"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("/no/such/capture.txt"), std::string::npos) << r.err;
    r = run_slanim({"play", "--puppetry", "udp://not-an-ip:5000", "--duration", "0.1"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("not an IPv4 address"), std::string::npos) << r.err;
}

TEST(PuppetryCli, ScriptedLeapSessionThroughTheBinary) {
    const fs::path dir = fs::temp_directory_path() / ("slanim_leap_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    // The pump names are the host's own (random UUIDs in its initial message); a script that
    // cannot read them first uses the bare-command shorthand for `puppetry` and listens under
    // a listener name of its choice.
    const std::string script =
        slanim::leap_frame("{'command':'set','d':{'j':{'mHead':{'r':[r0,r0,r0.3]}},"
                           "'i':{'mWristLeft':{'p':[r0.3,r0.4,r0.5]}}}}") +
        slanim::leap_frame("{'command':'get','d':['skeleton'],'reqid':i3}") +
        slanim::leap_frame("{'command':'set','d':{'j':{'mNoSuchJoint':{'r':[r0,r0,r0]}}}}");
    std::ofstream(dir / "in.leap", std::ios::binary) << script;
    const std::string cmd = std::string("'") + SLANIM_CLI_BINARY +
                            "' play --puppetry leap:stdin --duration 0.3 --fps 20 -o '" +
                            (dir / "poses.csv").string() + "' < '" + (dir / "in.leap").string() +
                            "' > '" + (dir / "out.leap").string() + "' 2> '" + (dir / "err.txt").string() + "'";
    const int status = std::system(cmd.c_str());
    const std::string err = slurp(dir / "err.txt");
    ASSERT_EQ(status, 0) << cmd << "\n" << err;
    EXPECT_NE(err.find("message 3: unknown joint 'mNoSuchJoint'"), std::string::npos) << err;
    EXPECT_NE(err.find("puppetry leap:stdin: 1 events"), std::string::npos) << err;
    EXPECT_NE(err.find("3 LEAP messages read (0 rejected), 0 keys skipped, 1 unknown joints, 1 events queued"),
              std::string::npos) << err;
    // Nobody listened on puppetry.controller: the skeleton was not sent (as in the viewer), said once.
    EXPECT_NE(err.find("'set_skeleton' is not sent: no listener on puppetry.controller"), std::string::npos) << err;

    // stdout: the initial message only.
    slanim::LeapFrameReader reader;
    reader.feed(slurp(dir / "out.leap"));
    auto item = reader.next();
    ASSERT_TRUE(item && item->text);
    auto initial = slanim::parse_llsd_notation(*item->text);
    ASSERT_TRUE(initial) << initial.error().describe();
    EXPECT_EQ(initial->find("pump")->as_string().size(), 36u);
    EXPECT_EQ(initial->find("data")->find("command")->as_string().size(), 36u);
    EXPECT_FALSE(reader.next());

    // The poses show the `set`: the head's rotation (its ancestors are at rest, so its world
    // rotation is the local one) and the left wrist pulled toward its target.
    const auto rows = parse_csv(slurp(dir / "poses.csv"));
    ASSERT_EQ(rows.size(), 7u * 133u);
    const Row& head = rows.at({6, "mHead"});
    EXPECT_NEAR(head.q[2], 0.3f, 1e-5f);
    EXPECT_NEAR(head.q[3], std::sqrt(1.f - 0.09f), 1e-5f);
    const Row& w0 = rows.at({0, "mWristLeft"});
    const Row& w6 = rows.at({6, "mWristLeft"});
    EXPECT_GT(std::fabs(w6.p[1] - w0.p[1]), 0.1f) << "the wrist moved toward the body";
    fs::remove_all(dir);
}
