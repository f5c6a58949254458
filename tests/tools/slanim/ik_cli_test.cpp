// SPDX-License-Identifier: MIT
// `slanim ik`, run in-process on a motion with a constraint written by the test.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "slanim/formats/anim.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "test_util.hpp"

using namespace slanim;
namespace fs = std::filesystem;

namespace {

using test::CliRun;
CliRun run(std::vector<std::string> args) { return test::run_slanim(std::move(args)); }

class IkCli : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("slanim_ik_cli_" + std::to_string(::getpid()));
        fs::create_directories(dir_);
        // The right hand reaches a point in front of the chest from 0.2 s to 0.8 s.
        Motion m = test::motion({test::rot_joint("mShoulderRight", {{0.f, 0.f}, {1.f, 20.f}}),
                                 test::rot_joint("mElbowRight", {{0.f, 0.f}}),
                                 test::rot_joint("mWristRight", {{0.f, 0.f}})},
                                1.f, 3);
        MotionConstraint c;
        c.chain_length = 2;
        c.source_volume = "R_HAND";
        c.target_volume = "CHEST";
        c.target_offset = {2.5f, 0.f, 0.f};
        c.ease_in_start = 0.2f;
        c.ease_in_stop = 0.4f;
        c.ease_out_start = 0.6f;
        c.ease_out_stop = 0.8f;
        m.constraints = {c};
        file_ = (dir_ / "reach.anim").string();
        ASSERT_TRUE(write_file_atomic(file_, write_anim(encode_motion(m))).ok());
    }
    void TearDown() override { fs::remove_all(dir_); }
    fs::path dir_;
    std::string file_;
};

TEST_F(IkCli, TextShowsEverySolverSideBySideWithASummary) {
    const CliRun r = run({"ik", file_, "--solver", "all", "--fps", "10"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("point R_HAND -> CHEST"), std::string::npos) << r.out;
    for (const char* s : {"ccd", "fabrik", "viewer"}) EXPECT_NE(r.out.find(s), std::string::npos) << s;
    EXPECT_NE(r.out.find("summary"), std::string::npos);
    EXPECT_NE(r.out.find("us/solve"), std::string::npos);
}

TEST_F(IkCli, JsonReportsBeforeAfterAndIterationsPerFrame) {
    const CliRun r = run({"ik", file_, "--solver", "all", "--fps", "10", "--format", "json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j.size(), 1u);
    const auto& ccd = j[0]["solvers"]["ccd"];
    EXPECT_EQ(ccd["frames"].size(), 11u);  // 0..1 s at 10 fps, one constraint
    int applied = 0;
    for (const auto& f : ccd["frames"]) {
        const double t = f["time"];
        if (f["outcome"] == "applied") {
            ++applied;
            EXPECT_GE(t, 0.2 - 1e-6);
            EXPECT_LE(t, 0.8 + 1e-6);
            EXPECT_LE(f["after_m"].get<double>(), f["before_m"].get<double>());
            EXPECT_GE(f["iterations"].get<int>(), 0);
        } else {
            EXPECT_TRUE(t < 0.2 + 1e-6 || t > 0.8 - 1e-6) << t << " " << f["outcome"];
        }
    }
    EXPECT_GE(applied, 5);
    EXPECT_LE(ccd["summary"]["max_full_weight_reachable_residual_m"].get<double>(), 0.001);
    EXPECT_TRUE(j[0]["solvers"].contains("viewer"));
}

TEST_F(IkCli, CsvHasOneRowPerFrameConstraintAndSolver) {
    const std::string out = (dir_ / "ik.csv").string();
    const CliRun r = run({"ik", file_, "--solver", "all", "--fps", "10", "--format", "csv", "-o", out});
    ASSERT_EQ(r.code, 0) << r.err;
    std::ifstream in(out);
    std::string header, line;
    std::getline(in, header);
    EXPECT_EQ(header, "file,solver,frame,time,constraint,label,outcome,weight,before_m,after_m,"
                      "residual_m,iterations,solve_us");
    int rows = 0;
    while (std::getline(in, line)) ++rows;
    EXPECT_EQ(rows, 33);  // 11 frames × 3 solvers
}

TEST_F(IkCli, PlotWritesAPng) {
    const std::string png = (dir_ / "residual.png").string();
    const CliRun r = run({"ik", file_, "--solver", "all", "--fps", "20", "--plot", png});
    ASSERT_EQ(r.code, 0) << r.err;
    std::ifstream in(png, std::ios::binary);
    char sig[8] = {};
    in.read(sig, 8);
    EXPECT_EQ(std::string(sig + 1, 3), "PNG");
}

TEST(IkCliSynthetic, SolvesAChainAndReportsEverySolver) {
    const CliRun r = run({"ik", "--chain", "2", "--target", "0.1,0.3,0.1", "--solver", "all",
                          "--format", "json"});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j.size(), 4u);  // ccd, fabrik, viewer and the analytic two-bone
    for (const auto& s : j) {
        EXPECT_TRUE(s["reachable"].get<bool>());
        if (s["solver"] != "viewer") {
            EXPECT_LT(s["error_m"].get<double>(), 0.0005) << s["solver"];
        }
    }
    EXPECT_EQ(j[3]["solver"], "two_bone");
    const CliRun plane = run({"ik", "--chain", "3", "--target", "0,0,0.2", "--plane", "0,0,1"});
    EXPECT_EQ(plane.code, 0) << plane.err;
    EXPECT_NE(plane.out.find("plane through"), std::string::npos);
}

TEST(IkCliSynthetic, BadArgumentsAreUsageErrors) {
    EXPECT_EQ(run({"ik", "--chain", "2", "--target", "1,2"}).code, 2);
    EXPECT_EQ(run({"ik", "--chain", "40", "--target", "1,2,3"}).code, 2);
    EXPECT_EQ(run({"ik", "--chain", "2"}).code, 2);
    EXPECT_EQ(run({"ik"}).code, 2);
    EXPECT_EQ(run({"ik", "x.anim", "--chain", "2", "--target", "0,0,1"}).code, 2);
    EXPECT_EQ(run({"ik", "--chain", "2", "--target", "0,0,1", "--plane", "0,0,0"}).code, 2);
    EXPECT_EQ(run({"ik", "--chain", "2", "--target", "0,0,1", "--solver", "magic"}).code, 2);
    const CliRun missing = run({"ik", "/nonexistent/none.anim"});
    EXPECT_EQ(missing.code, 1);
    EXPECT_NE(missing.err.find("none.anim"), std::string::npos);
}

}  // namespace
