// SPDX-License-Identifier: MIT
// The slanim command, run in-process.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/anim.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/runtime/demo_motions.hpp"
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
    Motion m = make_demo_motion(*Skeleton::default_skeleton());
    const auto bytes = write_anim(encode_motion(m));
    const std::string path = (dir / "demo.anim").string();
    EXPECT_TRUE(write_file_atomic(path, bytes).ok());
    return path;
}

std::size_t count_lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

std::string slurp_text(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

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

namespace {

struct ChildRun {
    int status = 0;        ///< wait status
    long max_rss_kib = 0;  ///< peak resident set of the child
};

/// Runs the slanim binary with `args` (standard output and error to `log`); `while_running` is
/// called with its pid once it has started. Bounded: the child is killed after 120 s.
ChildRun run_child(const std::vector<std::string>& args, const fs::path& log,
                   const std::function<void(pid_t)>& while_running = {}) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        if (!std::freopen(log.c_str(), "w", stdout) || ::dup2(::fileno(stdout), 2) < 0) ::_exit(126);
        std::vector<char*> argv;
        std::string bin = SLANIM_CLI_BINARY;
        argv.push_back(bin.data());
        std::vector<std::string> copy = args;
        for (auto& a : copy) argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execv(bin.c_str(), argv.data());
        ::_exit(127);
    }
    if (while_running) while_running(pid);
    ChildRun r;
    rusage ru{};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (::wait4(pid, &r.status, WNOHANG, &ru) != pid) {
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid, SIGKILL);
            ::wait4(pid, &r.status, 0, &ru);
            ADD_FAILURE() << "slanim did not finish in 120 s";
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    r.max_rss_kib = ru.ru_maxrss;
    return r;
}

std::vector<std::string> folder_names(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace

// -o streams into the atomic write's temporary file: a long run's peak memory is that of a short
// one (the whole CSV used to be held in memory: 4001 frames are about 50 MB).
TEST(Cli, PlayOutputFileStreamsWithFlatMemory) {
    const fs::path dir = temp_dir() / "stream";
    fs::create_directories(dir);
    const fs::path small = dir / "small.csv", large = dir / "large.csv";
    const ChildRun s = run_child({"play", "--fps", "1000", "--duration", "0.03", "-o", small.string()}, dir / "s.log");
    ASSERT_TRUE(WIFEXITED(s.status) && WEXITSTATUS(s.status) == 0) << slurp_text(dir / "s.log");
    const ChildRun l = run_child({"play", "--fps", "1000", "--duration", "4", "-o", large.string()}, dir / "l.log");
    ASSERT_TRUE(WIFEXITED(l.status) && WEXITSTATUS(l.status) == 0) << slurp_text(dir / "l.log");
    EXPECT_GT(fs::file_size(large), 40'000'000u);
    {
        std::ifstream f(large, std::ios::binary);
        std::size_t lines = 0;
        std::string line;
        while (std::getline(f, line)) ++lines;
        EXPECT_EQ(lines, 1 + 4001 * 133u);  // frames 0..4000, every bone
    }
    EXPECT_LT(l.max_rss_kib - s.max_rss_kib, 8 * 1024) << "peak RSS " << l.max_rss_kib << " KiB for 4001 frames, "
                                                       << s.max_rss_kib << " KiB for 31";
    // The streamed file is what standard output gets.
    const CliRun r = run({"play", "--fps", "1000", "--duration", "0.03"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(slurp_text(small), r.out);
    EXPECT_EQ(folder_names(dir), (std::vector<std::string>{"l.log", "large.csv", "s.log", "small.csv"}));
    fs::remove_all(dir);
}

// SIGINT or SIGTERM during a long -o run: the old file stays, the temporary file is removed, and
// the command ends by the signal.
TEST(Cli, PlayInterruptedKeepsTheOldOutputAndRemovesTheTemporary) {
    for (const int sig : {SIGINT, SIGTERM}) {
        const fs::path dir = temp_dir() / ("interrupt" + std::to_string(sig));
        fs::create_directories(dir);
        const fs::path out = dir / "poses.csv";
        { std::ofstream(out) << "old"; }
        bool saw_temporary = false;
        const ChildRun r = run_child({"play", "--fps", "1000", "--duration", "3600", "-o", out.string()},
                                     temp_dir() / "interrupt.log", [&](pid_t pid) {
                                         const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
                                         while (!saw_temporary && std::chrono::steady_clock::now() < until) {
                                             for (const auto& e : fs::directory_iterator(dir))
                                                 if (e.path().filename().string().starts_with(".poses.csv.") &&
                                                     e.file_size() > 0)
                                                     saw_temporary = true;
                                             std::this_thread::sleep_for(std::chrono::milliseconds(10));
                                         }
                                         ::kill(pid, saw_temporary ? sig : SIGKILL);
                                     });
        ASSERT_TRUE(saw_temporary) << "no temporary file appeared next to " << out;
        EXPECT_TRUE(WIFSIGNALED(r.status) && WTERMSIG(r.status) == sig) << "wait status " << r.status;
        EXPECT_NE(slurp_text(temp_dir() / "interrupt.log").find("interrupted by signal " + std::to_string(sig)),
                  std::string::npos);
        EXPECT_EQ(slurp_text(out), "old");
        EXPECT_EQ(folder_names(dir), std::vector<std::string>{"poses.csv"});
        fs::remove_all(dir);
    }
}

// --procedural and --look-at: the eyes turn toward a target ahead-left (yaw limited to 27°,
// saccades at most 0.23 rad), the run repeats byte for byte (seeded per avatar), and bad
// lists or vectors are usage errors naming the entry.
TEST(Cli, PlayProceduralMotionsLookAtTheTarget) {
    const std::vector<std::string> args = {"play",         "--fps",     "10", "--duration", "2",
                                           "--procedural", "eye,head_rot,breathe,body_noise", "--look-at", "3,3,1.3"};
    const CliRun r = run(args);
    ASSERT_EQ(r.code, 0) << r.err;
    const std::size_t at = r.out.rfind(",mEyeLeft,");
    ASSERT_NE(at, std::string::npos);
    std::stringstream line(r.out.substr(at + 10, r.out.find('\n', at) - at - 10));
    std::vector<float> v;
    for (std::string cell; std::getline(line, cell, ',');) v.push_back(std::stof(cell));
    ASSERT_EQ(v.size(), 7u);  // px py pz qx qy qz qw
    EXPECT_GT(v[5], 0.1f);    // turned to the left
    EXPECT_EQ(run(args).out, r.out);
    EXPECT_NE(run({"play", "--fps", "10", "--duration", "2"}).out, r.out);

    CliRun bad = run({"play", "--procedural", "eye,head", "--duration", "0.1"});
    EXPECT_EQ(bad.code, 2);
    EXPECT_NE(bad.err.find("unknown motion 'head'"), std::string::npos) << bad.err;
    bad = run({"play", "--look-at", "1,2", "--duration", "0.1"});
    EXPECT_EQ(bad.code, 2);
    EXPECT_NE(bad.err.find("expected X,Y,Z"), std::string::npos) << bad.err;
}
