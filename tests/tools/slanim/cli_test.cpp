// SPDX-License-Identifier: MIT
// The slanim command, run in-process.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "demo_motion.hpp"
#include "slanim/formats/anim.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "test_util.hpp"

using namespace slanim;
namespace fs = std::filesystem;

namespace {

using test::CliRun;
CliRun run(std::vector<std::string> args) { return test::run_slanim(std::move(args)); }

/// This process's scratch folder, removed when the process exits (ctest runs every test case
/// as its own process).
fs::path temp_dir() {
    struct Scratch {
        fs::path path;
        Scratch() : path(fs::temp_directory_path() / ("slanim_cli_test_" + std::to_string(::getpid()))) {
            fs::create_directories(path);
        }
        ~Scratch() {
            std::error_code ec;
            fs::remove_all(path, ec);
        }
    };
    static const Scratch scratch;
    return scratch.path;
}

std::string write_demo(const fs::path& dir) {
    Motion m = cli::make_demo_motion();
    const auto bytes = write_anim(encode_motion(m));
    const std::string path = (dir / "demo.anim").string();
    EXPECT_TRUE(write_file_atomic(path, bytes).ok());
    return path;
}

std::size_t count_lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST(Cli, PlayDemoWritesEveryBoneEveryFrame) {
    const CliRun r = run({"play", "--fps", "10", "--duration", "0.5"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("demo"), std::string::npos);  // says it plays the demo
    EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "frame,time,joint,px,py,pz,qx,qy,qz,qw");
    EXPECT_EQ(count_lines(r.out), 1 + 6 * 133u);  // frames 0..5
    EXPECT_NE(r.out.find("\n0,0,mPelvis,0,0,0,0,0,0,1\n"), std::string::npos);
}

TEST(Cli, PlayJsonlAndOutputFile) {
    const fs::path dir = temp_dir();
    const std::string anim = write_demo(dir);
    const std::string out = (dir / "out.jsonl").string();
    const CliRun r = run({"play", anim, "--format", "jsonl", "--fps", "5", "-o", out});
    ASSERT_EQ(r.code, 0) << r.err;
    std::ifstream f(out);
    std::stringstream ss;
    ss << f.rdbuf();
    EXPECT_EQ(count_lines(ss.str()), 11u);  // 2 s at 5 fps: frames 0..10
    EXPECT_NE(ss.str().find("\"mShoulderRight\""), std::string::npos);
}

TEST(Cli, PlayErrorsLeaveNoOutputFile) {
    const fs::path dir = temp_dir();
    const std::string out = (dir / "never.csv").string();
    const CliRun r = run({"play", (dir / "missing.anim").string(), "-o", out});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("missing.anim"), std::string::npos);
    EXPECT_FALSE(fs::exists(out));
}

TEST(Cli, InfoTextJsonMarkdown) {
    const fs::path dir = temp_dir();
    const std::string anim = write_demo(dir);
    CliRun r = run({"info", anim});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("prio 3"), std::string::npos);
    EXPECT_NE(r.out.find("loop 0.000-2.000 s"), std::string::npos);
    EXPECT_NE(r.out.find("hand relaxed(1)"), std::string::npos);
    r = run({"info", "--format", "json", "-v", anim});
    ASSERT_EQ(r.code, 0);
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j[0]["base_priority"], 3);
    EXPECT_FLOAT_EQ(j[0]["duration_s"].get<float>(), 2.f);
    EXPECT_EQ(j[0]["joints"].size(), 6u);
    EXPECT_EQ(j[0]["joints"][0]["rotation"][0]["q"].size(), 4u);
    r = run({"info", "--format", "md", "-v", anim});
    EXPECT_NE(r.out.find("| # | joint |"), std::string::npos);
}

TEST(Cli, ValidateExitCodes) {
    const fs::path dir = temp_dir();
    const std::string good = write_demo(dir);
    const std::string bad = (dir / "bad.anim").string();
    {
        std::ofstream f(bad, std::ios::binary);
        f << "not an animation";
    }
    CliRun r = run({"validate", good});
    EXPECT_EQ(r.code, 0) << r.out;
    r = run({"validate", good, bad});  // the batch continues past the invalid file
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find("demo.anim: valid"), std::string::npos);
    EXPECT_NE(r.out.find("bad.anim: invalid"), std::string::npos);
    EXPECT_NE(r.out.find("[version]"), std::string::npos);
    r = run({"validate"});
    EXPECT_EQ(r.code, 2);
    r = run({"frobnicate"});
    EXPECT_EQ(r.code, 2);
}

TEST(Cli, ConvertIsByteIdenticalAndRefusesToOverwriteItsInput) {
    const fs::path dir = temp_dir();
    const std::string in = write_demo(dir);
    const std::string out = (dir / "copy.anim").string();
    CliRun r = run({"convert", in, "-o", out});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(*read_file_bytes(in), *read_file_bytes(out));
    r = run({"convert", in, "-o", in});
    EXPECT_EQ(r.code, 2);
}

// --stop-at makes looping motions ease out; --pelvis-fix then brings the pelvis back to 0.
TEST(Cli, PlayStopAtEasesOutAndPelvisFixReturnsThePelvis) {
    const fs::path dir = temp_dir();
    const std::string anim = write_demo(dir);  // looping wave, ease out 0.5 s, pelvis bob
    auto last_frame_row = [](const std::string& csv, const std::string& joint) {
        const auto at = csv.rfind("," + joint + ",");
        return csv.substr(csv.rfind('\n', at) + 1, csv.find('\n', at) - csv.rfind('\n', at) - 1);
    };
    const CliRun looping = run({"play", anim, "--fps", "10", "--duration", "4"});
    ASSERT_EQ(looping.code, 0) << looping.err;
    const CliRun stopped = run({"play", anim, "--fps", "10", "--duration", "4", "--stop-at", "1", "--pelvis-fix"});
    ASSERT_EQ(stopped.code, 0) << stopped.err;
    // Still waving at 4 s without a stop: the shoulder is raised, unlike the rest pose.
    const std::string rest = "0,0,0,1";
    EXPECT_EQ(last_frame_row(looping.out, "mShoulderRight").find(rest), std::string::npos);
    // Stopped at 1 s (deferred to the end of the loop at 2 s, minus the ease out) and eased out
    // by 2 s: nothing drives the arm, so it keeps its last pose, but the pelvis fix has returned
    // the pelvis to the root.
    EXPECT_EQ(last_frame_row(stopped.out, "mPelvis"), "40,4,mPelvis,0,0,0,0,0,0,1");
}

TEST(Cli, PlayWithACharacterFolder) {
    const fs::path character = fs::path(SLANIM_SHARED_DIR) / "sl-character";
    if (!fs::is_directory(character)) GTEST_SKIP() << "../shared is absent (" << character << ")";
    CliRun r = run({"play", "--duration", "0", "--character", character.string()});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(count_lines(r.out), 1 + 133u);
    r = run({"play", "--character", (temp_dir() / "no-such-folder").string()});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("no-such-folder"), std::string::npos);
}

TEST(Cli, ConvertImportsBvhLikeTheViewerWithOverrides) {
    const fs::path dir = temp_dir();
    const std::string bvh = (dir / "bend.bvh").string();
    {
        std::ofstream f(bvh);
        f << "HIERARCHY\nROOT hip\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition "
             "Zrotation Xrotation Yrotation\n JOINT abdomen\n {\n  OFFSET 0 3 0\n  CHANNELS 3 "
             "Zrotation Xrotation Yrotation\n  End Site\n  {\n   OFFSET 0 5 0\n  }\n }\n}\n"
             "MOTION\nFrames: 3\nFrame Time: 0.5\n0 40 0 0 0 0 0 0 0\n0 40 0 0 0 0 0 10 0\n"
             "0 40 0 0 0 0 0 20 0\n";
    }
    const std::string out = (dir / "bend.anim").string();
    CliRun r = run({"convert", bvh, "-o", out, "--priority", "4", "--ease-in", "0.1"});
    ASSERT_EQ(r.code, 0) << r.err;
    r = run({"info", out, "--format", "json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out)[0];
    EXPECT_EQ(j["base_priority"], 4);
    EXPECT_NEAR(j["duration_s"].get<double>(), 0.5, 1e-6);  // (3 − 2) × 0.5 s
    // A BVH joint that is not an SL joint fails like the viewer's upload, and writes nothing.
    {
        std::ofstream f(bvh);
        f << "HIERARCHY\nROOT hip\n{\n OFFSET 0 0 0\n CHANNELS 3 Zrotation Xrotation Yrotation\n"
             " JOINT tail\n {\n  OFFSET 0 3 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n"
             "  End Site\n  {\n   OFFSET 0 5 0\n  }\n }\n}\nMOTION\nFrames: 2\nFrame Time: 0.5\n"
             "0 0 0 0 0 0\n0 10 0 0 10 0\n";
    }
    const std::string out2 = (dir / "tail.anim").string();
    r = run({"convert", bvh, "-o", out2});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("tail"), std::string::npos);
    EXPECT_FALSE(fs::exists(out2));
    EXPECT_EQ(run({"convert", bvh, "-o", out2, "--skip-unknown"}).code, 0);
    fs::remove_all(dir);
}
