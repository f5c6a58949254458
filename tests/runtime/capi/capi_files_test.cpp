// SPDX-License-Identifier: MIT
// The C API's file functions (slanim_anim_info_line, slanim_anim_edit, slanim_poser_to_anim)
// against the `slanim` command: the same line, the same bytes.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "capi_test_util.hpp"

namespace slanim::capi_test {
namespace {

namespace fs = std::filesystem;

#ifdef SLANIM_CLI_BINARY
/// A scratch folder removed at the end of the test.
struct TempDir {
    fs::path path = fs::temp_directory_path() / ("slanim_capi_files_" + std::to_string(::getpid()));
    TempDir() { fs::create_directories(path); }
    ~TempDir() { fs::remove_all(path); }
};

/// Runs the command line, its standard output into `out`; returns its exit status.
int run(const std::string& cmd, const fs::path& out) {
    const int rc = std::system((cmd + " > " + out.string() + " 2>&1").c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
#endif

/// slanim_anim_info_line's text ("" on failure, with the status in `status`).
std::string info_line(const std::vector<std::uint8_t>& bytes, const char* file, slanim_status& status) {
    std::size_t needed = 0;
    status = slanim_anim_info_line(bytes.data(), bytes.size(), file, nullptr, nullptr, 0, &needed);
    if (status != SLANIM_ERROR_BUFFER_TOO_SMALL) return {};
    std::string line(needed, '\0');
    status = slanim_anim_info_line(bytes.data(), bytes.size(), file, nullptr, line.data(), line.size(), &needed);
    line.resize(needed - 1);
    return line;
}

/// slanim_anim_edit's bytes (empty on failure, with the status in `status`).
std::vector<std::uint8_t> edit(const std::vector<std::uint8_t>& bytes, const char* edits, slanim_status& status) {
    std::size_t needed = 0;
    status = slanim_anim_edit(bytes.data(), bytes.size(), edits, nullptr, nullptr, 0, &needed);
    if (status != SLANIM_ERROR_BUFFER_TOO_SMALL) return {};
    std::vector<std::uint8_t> out(needed);
    status = slanim_anim_edit(bytes.data(), bytes.size(), edits, nullptr, out.data(), out.size(), &needed);
    out.resize(needed);
    return out;
}

TEST(CApiFiles, InfoLineEqualsSlanimInfo) {
#ifndef SLANIM_CLI_BINARY
    GTEST_SKIP() << "built without the slanim command (SLANIM_BUILD_TOOLS=OFF)";
#else
    SKIP_WITHOUT(kDance);
    TempDir tmp;
    ASSERT_EQ(run(std::string(SLANIM_CLI_BINARY) + " info " + kDance, tmp.path / "info.txt"), 0);
    std::string want = read_text(tmp.path / "info.txt");
    ASSERT_FALSE(want.empty());
    want.pop_back();  // the newline
    slanim_status status{};
    EXPECT_EQ(info_line(read_or_skip(kDance), kDance.c_str(), status), want);
    EXPECT_EQ(status, SLANIM_OK);
#endif
}

TEST(CApiFiles, InfoLineOfATruncatedFileNamesTheByteOffset) {
    SKIP_WITHOUT(kDance);
    auto bytes = read_or_skip(kDance);
    bytes.resize(bytes.size() / 2);
    slanim_status status{};
    EXPECT_EQ(info_line(bytes, "half.anim", status), "");
    EXPECT_EQ(status, SLANIM_ERROR_INVALID_DATA);
    const std::string message = slanim_last_error();
    EXPECT_NE(message.find("half.anim: error: ["), std::string::npos) << message;
    EXPECT_NE(message.find("at byte "), std::string::npos) << message;
    std::size_t needed = 0;
    EXPECT_EQ(slanim_anim_info_line(nullptr, 0, "x", nullptr, nullptr, 0, &needed), SLANIM_ERROR_INVALID_DATA);
    EXPECT_EQ(slanim_anim_info_line(bytes.data(), bytes.size(), nullptr, nullptr, nullptr, 0, &needed),
              SLANIM_ERROR_NULL_ARGUMENT);
}

TEST(CApiFiles, EditEqualsSlanimEditByteForByte) {
#ifndef SLANIM_CLI_BINARY
    GTEST_SKIP() << "built without the slanim command (SLANIM_BUILD_TOOLS=OFF)";
#else
    SKIP_WITHOUT(kDance);
    TempDir tmp;
    const fs::path out = tmp.path / "edited.anim";
    const std::string cmd = std::string(SLANIM_CLI_BINARY) + " edit " + kDance +
                            " --priority 5 --joint-priority 'mHip*=3' --ease-in 0.25 --loop --loop-in 10% --loop-out 90%"
                            " --hand-pose fist --emote express_smile --mirror --speed 1.5 --drop-pos -o " +
                            out.string();
    ASSERT_EQ(run(cmd, tmp.path / "log.txt"), 0) << read_text(tmp.path / "log.txt");
    const auto want = read_or_skip(out.string());
    slanim_status status{};
    const auto got = edit(read_or_skip(kDance),
                          "--priority 5\n--joint-priority mHip*=3\n--ease-in 0.25\n--loop\n--loop-in 10%\n"
                          "--loop-out 90%\n--hand-pose fist\n--emote express_smile\n--mirror\n--speed 1.5\n--drop-pos\n",
                          status);
    EXPECT_EQ(status, SLANIM_OK) << slanim_last_error();
    EXPECT_EQ(got, want);
#endif
}

TEST(CApiFiles, EditErrorsNameTheLine) {
    SKIP_WITHOUT(kDance);
    const auto bytes = read_or_skip(kDance);
    slanim_status status{};
    edit(bytes, "--priority 9", status);
    EXPECT_EQ(status, SLANIM_ERROR_INVALID_DATA);
    EXPECT_EQ(std::string(slanim_last_error()).find("slanim_anim_edit: --priority 9: "), 0u) << slanim_last_error();
    edit(bytes, "--speed fast", status);
    EXPECT_EQ(status, SLANIM_ERROR_OUT_OF_RANGE);
    EXPECT_NE(std::string(slanim_last_error()).find("--speed fast: 'fast' is not a number"), std::string::npos);
    edit(bytes, "--wobble", status);
    EXPECT_EQ(status, SLANIM_ERROR_OUT_OF_RANGE);
    edit(bytes, "\n\n", status);
    EXPECT_EQ(status, SLANIM_ERROR_OUT_OF_RANGE);
    std::size_t needed = 0;
    EXPECT_EQ(slanim_anim_edit(bytes.data(), bytes.size(), nullptr, nullptr, nullptr, 0, &needed),
              SLANIM_ERROR_NULL_ARGUMENT);
}

TEST(CApiFiles, PoserToAnimEqualsSlanimConvert) {
#ifndef SLANIM_CLI_BINARY
    GTEST_SKIP() << "built without the slanim command (SLANIM_BUILD_TOOLS=OFF)";
#else
    const fs::path pose = fs::path(kShared) / "poses" / "Okay.xml";
    SKIP_WITHOUT(pose);
    TempDir tmp;
    const fs::path out = tmp.path / "pose.anim";
    ASSERT_EQ(run(std::string(SLANIM_CLI_BINARY) + " convert " + pose.string() + " -o " + out.string(),
                  tmp.path / "log.txt"),
              0)
        << read_text(tmp.path / "log.txt");
    const auto want = read_or_skip(out.string());
    const std::string xml = read_text(pose);
    std::size_t needed = 0;
    ASSERT_EQ(slanim_poser_to_anim(xml.data(), xml.size(), 0, nullptr, 0, &needed), SLANIM_ERROR_BUFFER_TOO_SMALL);
    std::vector<std::uint8_t> got(needed);
    ASSERT_EQ(slanim_poser_to_anim(xml.data(), xml.size(), 0, got.data(), got.size(), &needed), SLANIM_OK)
        << slanim_last_error();
    EXPECT_EQ(got, want);
    EXPECT_EQ(slanim_poser_to_anim("<llsd>", 6, 0, nullptr, 0, &needed), SLANIM_ERROR_INVALID_DATA);
#endif
}

TEST(CApiFiles, BvjToAnimEqualsSlanimConvert) {
#ifndef SLANIM_CLI_BINARY
    GTEST_SKIP() << "built without the slanim command (SLANIM_BUILD_TOOLS=OFF)";
#else
    SKIP_WITHOUT(kDance);
    TempDir tmp;
    const fs::path bvj = tmp.path / "dance.bvj", out = tmp.path / "dance.anim";
    const std::string cli(SLANIM_CLI_BINARY);
    ASSERT_EQ(run(cli + " convert " + kDance + " -o " + bvj.string(), tmp.path / "log1.txt"), 0)
        << read_text(tmp.path / "log1.txt");
    ASSERT_EQ(run(cli + " convert " + bvj.string() + " -o " + out.string(), tmp.path / "log2.txt"), 0)
        << read_text(tmp.path / "log2.txt");
    const auto want = read_or_skip(out.string());
    const std::string text = read_text(bvj);
    std::size_t needed = 0;
    ASSERT_EQ(slanim_bvj_to_anim(text.data(), text.size(), nullptr, 0, &needed), SLANIM_ERROR_BUFFER_TOO_SMALL)
        << slanim_last_error();
    std::vector<std::uint8_t> got(needed);
    ASSERT_EQ(slanim_bvj_to_anim(text.data(), text.size(), got.data(), got.size(), &needed), SLANIM_OK)
        << slanim_last_error();
    EXPECT_EQ(got, want);
    EXPECT_EQ(slanim_bvj_to_anim("{", 1, nullptr, 0, &needed), SLANIM_ERROR_INVALID_DATA);
#endif
}

// slanim_world_profile: the World's systems in run order with the steps' times, zeroed by reset.
TEST(CApiProfile, PerSystemTimesAsText) {
    SKIP_WITHOUT(kDance);
    const auto bytes = read_or_skip(kDance);
    WorldPtr w;
    ASSERT_EQ(slanim_world_create(1, &w.w), SLANIM_OK);
    ASSERT_EQ(slanim_world_load_motion(w.w, kDanceId, bytes.data(), bytes.size()), SLANIM_OK);
    SkeletonPtr s;
    ASSERT_EQ(slanim_skeleton_default(&s.s), SLANIM_OK);
    slanim_avatar a = 0;
    ASSERT_EQ(slanim_avatar_create(w.w, s.s, &a), SLANIM_OK);
    ASSERT_EQ(slanim_avatar_start_motion(w.w, a, kDanceId, 0.f), SLANIM_OK);
    ASSERT_EQ(slanim_world_set_profiling(w.w, 1), SLANIM_OK);
    for (int i = 0; i < 3; ++i) ASSERT_EQ(slanim_world_step(w.w, 1.f / 30.f), SLANIM_OK);
    std::size_t needed = 0;
    char tiny[4];
    EXPECT_EQ(slanim_world_profile(w.w, 1, tiny, sizeof tiny, &needed), SLANIM_ERROR_BUFFER_TOO_SMALL);
    std::string text(needed, '\0');
    ASSERT_EQ(slanim_world_profile(w.w, 1, text.data(), text.size(), &needed), SLANIM_OK);  // then reset
    text.resize(needed - 1);
    const std::size_t at = text.find("keyframe_sampling ");
    ASSERT_NE(at, std::string::npos) << text;
    EXPECT_NE(text.find("pose_blend "), std::string::npos) << text;
    EXPECT_NE(text.find("local_to_model "), std::string::npos) << text;
    const std::string line = text.substr(at, text.find('\n', at) - at);
    EXPECT_EQ(line.substr(line.rfind(' ') + 1), "3") << line;  // 3 steps of one avatar
    std::string after(4096, '\0');
    ASSERT_EQ(slanim_world_profile(w.w, 0, after.data(), after.size(), &needed), SLANIM_OK);
    after.resize(needed - 1);
    EXPECT_NE(after.find("keyframe_sampling 0 0"), std::string::npos) << after;
    EXPECT_EQ(slanim_world_set_profiling(nullptr, 1), SLANIM_ERROR_NULL_ARGUMENT);
    EXPECT_EQ(slanim_world_profile(w.w, 0, nullptr, 0, nullptr), SLANIM_ERROR_NULL_ARGUMENT);
}

}  // namespace
}  // namespace slanim::capi_test
