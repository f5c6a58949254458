// SPDX-License-Identifier: MIT
// `slanim crowd`: the summary line's exact format, the per-system table, every usage error
// (exit 2, nothing written), load failures that name the file, real motions, --lod (the camera's
// pixel areas and hidden avatars), --skin, and --render (skipped without an offscreen GL
// context, like render_test.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <regex>
#include <string>
#include <vector>

#include "temp_dir.hpp"
#include "cli_run.hpp"
#include "crowd_command.hpp"
#include "slanim/gfx/gl_context.hpp"
#include "slanim/gfx/image.hpp"

using namespace slanim;
namespace fs = std::filesystem;

namespace {

const fs::path kShared = fs::path(SLANIM_SHARED_DIR);

using slanim::test::TempDir;

test::CliRun crowd(std::vector<std::string> args) {
    args.insert(args.begin(), "crowd");
    return test::run_slanim(std::move(args));
}

/// The last line of `out` without its newline (empty when `out` does not end with one).
std::string last_line(const std::string& out) {
    if (out.size() < 2 || out.back() != '\n') return {};
    const auto nl = out.find_last_of('\n', out.size() - 2);
    const std::size_t start = nl == std::string::npos ? 0 : nl + 1;
    return out.substr(start, out.size() - 1 - start);
}

/// Checks the summary line for `avatars`, `threads` and the crowd's mode ("churn", the default,
/// or "settled") and returns (p50, p99, KiB).
std::vector<double> check_summary(const std::string& out, int avatars, int threads,
                                  const std::string& mode = "churn") {
    const std::string line = last_line(out);
    const std::regex re(R"(^crowd: (\d+) avatars, (\d+) threads, (churn|settled), (\d+\.\d\d) ms/step p50, (\d+\.\d\d) ms/step p99, (\d+\.\d) KiB/avatar$)");
    std::smatch m;
    EXPECT_TRUE(std::regex_match(line, m, re)) << "last line: '" << line << "'\n" << out;
    if (m.empty()) return {};
    EXPECT_EQ(std::stoi(m[1]), avatars);
    EXPECT_EQ(std::stoi(m[2]), threads);
    EXPECT_EQ(m[3], mode);
    return {std::stod(m[4]), std::stod(m[5]), std::stod(m[6])};
}

/// The count of the "churn: G gestures started in S s simulated" line, or −1 without it.
long long gestures_started(const std::string& out) {
    const std::regex re(R"((^|\n)churn: (\d+) gestures started in (\d+\.\d) s simulated \()");
    std::smatch m;
    if (!std::regex_search(out, m, re)) return -1;
    return std::stoll(m[2]);
}

/// The µs/step of a system's table row, or −1 when the row is missing.
double table_us(const std::string& out, const std::string& system, const std::string& phase) {
    const std::regex re("(^|\n)" + system + " +" + phase + R"( +(\d+\.\d) +(\d+\.\d)%(\n|$))");
    std::smatch m;
    if (!std::regex_search(out, m, re)) return -1.0;
    return std::stod(m[2]);
}

/// Why offscreen rendering is impossible here, or empty when it works (checked once).
const std::string& offscreen_problem() {
    static const std::string problem = [] {
        auto ctx = gfx::GlContext::create_offscreen();
        return ctx ? std::string() : ctx.error().message;
    }();
    return problem;
}

}  // namespace

TEST(CrowdCli, SummaryLineAndPhaseTable) {
    const auto r = crowd({"--avatars", "20", "--seconds", "0.2", "--threads", "2", "--settled"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("no FILE given: playing the built-in crowd mix"), std::string::npos) << r.err;
    EXPECT_EQ(gestures_started(r.out), -1) << r.out;  // settled: no gestures
    EXPECT_LT(table_us(r.out, "gesture_schedule", "host"), 0.0) << r.out;
    const auto v = check_summary(r.out, 20, 2, "settled");
    ASSERT_EQ(v.size(), 3u);
    EXPECT_GT(v[1], 0.0);
    EXPECT_LE(v[0], v[1]);  // p50 ≤ p99
    EXPECT_GT(v[2], 1.0);   // KiB per avatar: pose blocks and controllers
    EXPECT_LT(v[2], 200.0);
    // Every built-in system has its row: name, phase, µs/step, share.
    for (const auto& [system, phase] : std::vector<std::pair<std::string, std::string>>{
             {"lod_select", "control"},
             {"motion_control", "control"},
             {"keyframe_sampling", "sample"},
             {"pose_blend", "blend"},
             {"constraints", "sample"},
             {"local_to_model", "local_to_model"}})
        EXPECT_GE(table_us(r.out, system, phase), 0.0) << system << " missing:\n" << r.out;
    EXPECT_GT(table_us(r.out, "pose_blend", "blend"), 0.0);
    EXPECT_GT(table_us(r.out, "total", ""), 0.0) << r.out;
    EXPECT_NE(r.out.find("profiling off"), std::string::npos);
    EXPECT_NE(r.out.find("with profiling on (a separate run)"), std::string::npos);
    // No appearance: no morph or skin systems.
    EXPECT_EQ(r.out.find("appearance_skin"), std::string::npos);
    // Not a terminal: no progress bar.
    EXPECT_EQ(r.err.find('\r'), std::string::npos);
}

TEST(CrowdCli, OneThreadAndAtLeastOneStep) {
    // A run far shorter than one step still takes one.
    const auto r = crowd({"--avatars", "3", "--seconds", "0.000001", "--threads", "1"});
    ASSERT_EQ(r.code, 0) << r.err;
    check_summary(r.out, 3, 1);
    EXPECT_NE(r.out.find("steps: 1 of 1/60 s"), std::string::npos) << r.out;
}

TEST(CrowdCli, UsageErrorsWriteNothing) {
    TempDir dir;
    const std::string png = dir.file("never.png");
    struct Case {
        std::vector<std::string> args;
        std::string message;
    };
    const std::vector<Case> cases = {
        {{}, "--avatars is required"},
        {{"--avatars", "0"}, "--avatars must be a whole number from 1 to 1000000"},
        {{"--avatars", "-5"}, "--avatars must be a whole number"},
        {{"--avatars", "many"}, "--avatars must be a whole number"},
        {{"--avatars", "2.5"}, "--avatars must be a whole number"},
        {{"--avatars", "10", "--seconds", "0"}, "--seconds must be a number of seconds in (0, 3600]"},
        {{"--avatars", "10", "--seconds", "-1"}, "--seconds must be"},
        {{"--avatars", "10", "--seconds", "soon"}, "--seconds must be"},
        {{"--avatars", "10", "--threads", "-1"}, "--threads must be a whole number from 0 (one per core) to 256"},
        {{"--avatars", "10", "--threads", "257"}, "--threads must be"},
        {{"--avatars", "10", "--threads", "two"}, "--threads must be"},
        {{"--avatars", "10", "--skin"}, "--skin needs --character DIR"},
        {{"--avatars", "10", "--settled", "--gesture", "g.anim"}, "--gesture is for the churn crowd"},
    };
    for (const Case& c : cases) {
        std::vector<std::string> args = c.args;
        args.insert(args.end(), {"--render", png});
        const auto r = crowd(args);
        std::string joined;
        for (const auto& a : c.args) joined += a + " ";
        EXPECT_EQ(r.code, 2) << joined << r.err;
        EXPECT_NE(r.err.find(c.message), std::string::npos) << joined << "\n" << r.err;
        EXPECT_EQ(r.out, "") << joined;
        EXPECT_FALSE(fs::exists(png)) << joined;
    }
}

TEST(CrowdCli, LoadFailureNamesTheFile) {
    TempDir dir;
    const std::string png = dir.file("never.png");
    const std::string broken = dir.file("broken.anim");
    {
        std::ofstream f(broken, std::ios::binary);
        f << "not an animation";
    }
    auto r = crowd({broken, "--avatars", "5", "--seconds", "0.1", "--render", png});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("broken.anim"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
    r = crowd({dir.file("missing.anim"), "--avatars", "5", "--seconds", "0.1", "--render", png});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("missing.anim"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(fs::exists(png));
}

TEST(CrowdCli, RealAnimations) {
    const fs::path walk = kShared / "anims" / "linden" / "WALK.anim";
    const fs::path bow = kShared / "anims" / "linden" / "BOW.anim";  // not looping: made looping
    if (!fs::exists(walk) || !fs::exists(bow))
        GTEST_SKIP() << "the shared reference animations are absent (" << walk << ")";
    const auto r = crowd({walk.string(), bow.string(), "--avatars", "16", "--seconds", "0.2", "--threads", "2"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err.find("built-in"), std::string::npos) << r.err;
    check_summary(r.out, 16, 2);
    EXPECT_GT(table_us(r.out, "keyframe_sampling", "sample"), 0.0) << r.out;
}

TEST(CrowdCli, CameraPixelAreas) {
    using V = cli::CrowdView;
    EXPECT_NEAR(V::focal_px(), 360.0 / std::tan(std::numbers::pi / 6.0), 1e-3);
    // First row, middle column of a one-avatar crowd: the box centre 3 m ahead, 0.9 m below the eye.
    const Vec3 s0 = V::spot(0, 1);
    EXPECT_FLOAT_EQ(s0.x, 0.f);
    EXPECT_FLOAT_EQ(s0.y, 0.f);
    const double f = V::focal_px();
    const double d0 = std::sqrt(3.0 * 3.0 + 0.9 * 0.9);
    EXPECT_NEAR(V::pixel_area(s0), 0.9 * f * f / (d0 * d0), 1.0);
    // A 3 × 3 grid: rows recede along −X, columns 1.5 m apart centred on the camera.
    EXPECT_FLOAT_EQ(V::spot(4, 9).x, -1.5f);
    EXPECT_FLOAT_EQ(V::spot(4, 9).y, 0.f);
    EXPECT_FLOAT_EQ(V::spot(3, 9).y, -1.5f);  // column 0: y = 1.5 (0 − 1)
    EXPECT_FLOAT_EQ(V::spot(5, 9).y, 1.5f);
    EXPECT_GT(V::pixel_area(V::spot(0, 9)), V::pixel_area(V::spot(6, 9)));
    // Hidden: behind the camera, or beyond 64 m.
    EXPECT_FALSE(V::visible({4.f, 0.f, 0.f}));
    EXPECT_EQ(V::pixel_area({4.f, 0.f, 0.f}), 0.f);
    EXPECT_TRUE(V::visible({-60.f, 0.f, 0.f}));
    EXPECT_FALSE(V::visible({-62.f, 0.f, 0.f}));  // 65 m from the eye
}

TEST(CrowdCli, LodRunsAndHidesFarAvatars) {
    // 40 × 40: the back corners are farther than 64 m.
    constexpr int kAvatars = 1600;
    int expected[5] = {0, 0, 0, 0, 0};  // by update period; 0 = hidden
    for (int k = 0; k < kAvatars; ++k) {
        const Vec3 s = cli::CrowdView::spot(k, kAvatars);
        if (!cli::CrowdView::visible(s)) ++expected[0];
    }
    ASSERT_GT(expected[0], 0);
    const auto r = crowd({"--avatars", std::to_string(kAvatars), "--seconds", "0.2", "--threads", "2", "--lod"});
    ASSERT_EQ(r.code, 0) << r.err;
    check_summary(r.out, kAvatars, 2);
    const std::regex re(R"(\nlod: (\d+) avatars every step, (\d+) every 2nd, (\d+) every 4th, (\d+) hidden\n)");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, re)) << r.out;
    EXPECT_EQ(std::stoi(m[4]), expected[0]);
    EXPECT_GT(std::stoi(m[1]), 0);  // the first rows are near
    EXPECT_GT(std::stoi(m[3]), 0);  // most are far
    EXPECT_EQ(std::stoi(m[1]) + std::stoi(m[2]) + std::stoi(m[3]) + std::stoi(m[4]), kAvatars);
    EXPECT_GE(table_us(r.out, "lod_interpolate", "local_to_model"), 0.0) << r.out;
}

TEST(CrowdCli, RenderWritesAPng) {
    if (!offscreen_problem().empty()) GTEST_SKIP() << "no offscreen OpenGL context: " << offscreen_problem();
    TempDir dir;
    const std::string png = dir.file("crowd.png");
    const auto r = crowd({"--avatars", "12", "--seconds", "0.1", "--threads", "2", "--render", png});
    ASSERT_EQ(r.code, 0) << r.err;
    check_summary(r.out, 12, 2);
    EXPECT_NE(r.out.find("render: " + png + ": 1280x720, 12 of 12 avatars drawn (generated bodies)"),
              std::string::npos)
        << r.out;
    auto img = gfx::load_png(png);
    ASSERT_TRUE(img.ok()) << img.error().message;
    EXPECT_EQ(img->width, 1280);
    EXPECT_EQ(img->height, 720);
    // The bodies' skin colour (red over blue) covers a good part of the picture.
    int skin = 0;
    for (int y = 0; y < img->height; ++y)
        for (int x = 0; x < img->width; ++x) {
            const std::uint8_t* p = img->pixel(x, y);
            skin += p[0] > 60 && p[0] > p[2] + 25 && p[1] > p[2];
        }
    EXPECT_GT(skin, 1280 * 720 / 50);
    // No temporary file is left beside it (written atomically).
    int files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path)) ++files;
    EXPECT_EQ(files, 1);
}

TEST(CrowdCli, RenderWithoutAGlContextFailsBeforeStepping) {
    // The binary with every way to a context hidden: glvnd finds no EGL vendor, SDL has only
    // its dummy video driver and there is no display.
    TempDir dir;
    const std::string png = dir.file("nogl.png"), log = dir.file("err.txt");
    const std::string cmd = std::string("env -u DISPLAY -u WAYLAND_DISPLAY __EGL_VENDOR_LIBRARY_FILENAMES=") +
                            dir.file("none.json") + " SDL_VIDEODRIVER=dummy '" + SLANIM_CLI_BINARY +
                            "' crowd --avatars 3 --seconds 0.05 --render '" + png + "' >/dev/null 2>'" + log + "'";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << cmd;
    if (WEXITSTATUS(status) == 0) GTEST_SKIP() << "an OpenGL context was created even with EGL vendors hidden";
    EXPECT_EQ(WEXITSTATUS(status), 1);
    std::ifstream f(log);
    const std::string err((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_NE(err.find("slanim crowd: --render: cannot create an OpenGL context"), std::string::npos) << err;
    EXPECT_FALSE(fs::exists(png));
}

TEST(CrowdCli, SkinWithTheCharacter) {
    const fs::path character = kShared / "sl-character";
    if (!fs::exists(character / "avatar_lad.xml")) GTEST_SKIP() << "no character folder in " << kShared;
    const auto r = crowd({"--character", character.string(), "--skin", "--avatars", "4", "--seconds", "0.2",
                          "--threads", "2", "--settled"});
    ASSERT_EQ(r.code, 0) << r.err;
    check_summary(r.out, 4, 2, "settled");
    EXPECT_GT(table_us(r.out, "appearance_morph", "morph"), 0.0) << r.out;
    EXPECT_GT(table_us(r.out, "appearance_skin", "skin"), 0.0) << r.out;
    EXPECT_NE(r.err.find("given skeleton"), std::string::npos) << r.err;
    // One shape for the crowd: the 8 meshes' bind poses are read from 8 shared copies.
    EXPECT_NE(r.out.find("skin: 4 avatars read 8 shared bind poses (8 in use"), std::string::npos) << r.out;
}

// --solver picks the constraint solver of every avatar, like play; `none` skips the solves.
TEST(CrowdCli, SolverOption) {
    for (const char* solver : {"ccd", "fabrik", "viewer", "none"}) {
        const auto r = crowd({"--avatars", "4", "--seconds", "0.05", "--threads", "1", "--solver", solver});
        ASSERT_EQ(r.code, 0) << solver << "\n" << r.err;
        check_summary(r.out, 4, 1);
    }
    const auto bad = crowd({"--avatars", "4", "--seconds", "0.05", "--solver", "magic"});
    EXPECT_EQ(bad.code, 2);
    EXPECT_NE(bad.err.find("--solver"), std::string::npos) << bad.err;
}

// The default crowd churns: without files every avatar keeps one motion of the built-in mix and
// starts the generated gesture every 3-5 s; the summary line says "churn".
TEST(CrowdCli, ChurnIsTheDefault) {
    const auto r = crowd({"--avatars", "20", "--seconds", "0.2", "--threads", "2"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("churn crowd on the embedded default skeleton"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("gesture of (demo_gesture)"), std::string::npos) << r.err;
    check_summary(r.out, 20, 2, "churn");
    // The warm-up (7 s simulated) takes every avatar past its first gesture time (< 4 s); the
    // measured run adds more.
    EXPECT_GT(gestures_started(r.out), 5) << r.out;
    EXPECT_GT(table_us(r.out, "motion_control", "control"), 0.0) << r.out;
    EXPECT_GE(table_us(r.out, "gesture_schedule", "host"), 0.0) << r.out;  // the churn schedule's row
}

// A gesture file that does not load: an error naming it, exit 1, nothing on standard output.
TEST(CrowdCli, GestureThatFailsToLoadNamesTheFile) {
    TempDir dir;
    const std::string broken = dir.file("broken_gesture.anim");
    {
        std::ofstream f(broken, std::ios::binary);
        f << "not an animation";
    }
    for (const std::string& file : {broken, dir.file("missing_gesture.anim")}) {
        const auto r = crowd({"--avatars", "5", "--seconds", "0.1", "--gesture", file});
        EXPECT_EQ(r.code, 1) << file << "\n" << r.err;
        EXPECT_NE(r.err.find("slanim crowd: --gesture: " + file), std::string::npos) << r.err;
        EXPECT_EQ(r.out, "") << file;
    }
}

// Real gestures: --gesture files, and with --character the Linden mix beside it by default,
// with --skin the gesture's emote and hand pose morph (the morph phase runs).
TEST(CrowdCli, RealGesturesAndTheLindenMix) {
    const fs::path kiss = kShared / "anims" / "linden" / "BLOWKISS.anim";
    const fs::path walk = kShared / "anims" / "linden" / "WALK.anim";
    if (!fs::exists(kiss) || !fs::exists(walk)) GTEST_SKIP() << "the shared reference animations are absent";
    auto r = crowd({walk.string(), "--gesture", kiss.string(), "--avatars", "8", "--seconds", "0.2", "--threads", "1"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("one base motion of (WALK) and starts a gesture of (BLOWKISS)"), std::string::npos) << r.err;
    check_summary(r.out, 8, 1, "churn");
    EXPECT_GT(gestures_started(r.out), 0) << r.out;

    const fs::path character = kShared / "sl-character";
    if (!fs::exists(character / "avatar_lad.xml")) GTEST_SKIP() << "no character folder in " << kShared;
    r = crowd({"--character", character.string(), "--skin", "--avatars", "6", "--seconds", "0.3", "--threads", "2"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("one base motion of (ANIM_AGENT_FEMALE_WALK_NEW, DANCE1, ANIM_AGENT_BENTO_IDLE) and "
                         "starts a gesture of (BLOWKISS)"),
              std::string::npos)
        << r.err;
    check_summary(r.out, 6, 2, "churn");
    EXPECT_GT(gestures_started(r.out), 0) << r.out;
    EXPECT_GT(table_us(r.out, "appearance_morph", "morph"), 0.0) << r.out;
    EXPECT_GT(table_us(r.out, "appearance_skin", "skin"), 0.0) << r.out;
}
