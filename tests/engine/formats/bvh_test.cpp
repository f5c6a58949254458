// SPDX-License-Identifier: MIT
// The BVH raw model, parser and writer: hand-written edge cases, every error with its line and
// column, and the real files of the shared data folder (SLANIM_SHARED_DIR "/bvh", read in
// place, never copied; those tests skip when the folder is absent).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slanim/formats/bvh.hpp"
#include "slanim/formats/io.hpp"

#ifndef SLANIM_SHARED_DIR
#error "SLANIM_SHARED_DIR must name the shared data folder"
#endif

namespace slanim {
namespace {

namespace fs = std::filesystem;

// Line numbers are in the comments: the error tests below refer to them.
constexpr std::string_view kSmall =
    "HIERARCHY\n"                                                                  // 1
    "ROOT hip\n"                                                                   // 2
    "{\n"                                                                          // 3
    "\tOFFSET 0 0 0\n"                                                             // 4
    "\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"   // 5
    "\tJOINT abdomen\n"                                                            // 6
    "\t{\n"                                                                        // 7
    "\t\tOFFSET 0 3.5 -0.5\n"                                                      // 8
    "\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n"                               // 9
    "\t\tEnd Site\n"                                                               // 10
    "\t\t{\n"                                                                      // 11
    "\t\t\tOFFSET 0 4 0\n"                                                         // 12
    "\t\t}\n"                                                                      // 13
    "\t}\n"                                                                        // 14
    "}\n"                                                                          // 15
    "MOTION\n"                                                                     // 16
    "Frames: 2\n"                                                                  // 17
    "Frame Time: 0.04\n"                                                           // 18
    "1 2 3 4 5 6 7 8 9\n"                                                          // 19
    "-1 -2 -3 -4 -5 -6 -7 -8 -9\n";                                                // 20

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
    for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
        s.replace(p, from.size(), to);
    return s;
}

// kSmall with its 1-based line `n` replaced by `text` (several lines allowed, or none).
std::string with_line(std::string_view src, int n, std::string_view text) {
    std::string out;
    int line = 1;
    std::size_t p = 0;
    while (p < src.size()) {
        const std::size_t e = src.find('\n', p);
        const std::size_t end = e == std::string_view::npos ? src.size() : e + 1;
        if (line == n) out += text;
        else out += src.substr(p, end - p);
        p = end;
        ++line;
    }
    return out;
}

BvhMotion parse_ok(std::string_view text) {
    auto r = parse_bvh(text);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().describe()) << "\n--- input:\n" << text;
    return r.ok() ? r.value() : BvhMotion{};
}

void expect_round_trip(const BvhMotion& m, const std::string& what = {}) {
    const std::string text = write_bvh(m);
    auto again = parse_bvh(text);
    ASSERT_TRUE(again.ok()) << what << ": " << again.error().describe() << "\n" << text;
    EXPECT_TRUE(again.value() == m) << what << ": write → parse differs";
    EXPECT_EQ(write_bvh(again.value()), text) << what << ": the writer is not idempotent";
}

// Expects an Error at `line` whose message starts "line L, column C:" and contains `part`.
void expect_error(std::string_view text, long long line, long long column, std::string_view part) {
    auto r = parse_bvh(text);
    ASSERT_FALSE(r.ok()) << "parsed, expected an error containing \"" << part << "\"\n" << text;
    const Error& e = r.error();
    EXPECT_EQ(e.line, line) << e.message;
    EXPECT_EQ(e.offset, -1);
    const std::string prefix =
        "line " + std::to_string(line) + ", column " + std::to_string(column) + ": ";
    EXPECT_EQ(e.message.substr(0, prefix.size()), prefix) << e.message;
    EXPECT_NE(e.message.find(part), std::string::npos)
        << "message \"" << e.message << "\" lacks \"" << part << "\"";
}

// A generated file: a ROOT and `joints` − 1 JOINTs (a chain, or siblings under the root), each
// with 3 rotation channels; `lines` are appended after "MOTION".
std::string synthetic_hierarchy(int joints, bool chain) {
    std::string s = "HIERARCHY\nROOT j0\n{\nOFFSET 0 0 0\nCHANNELS 3 Xrotation Yrotation Zrotation\n";
    for (int i = 1; i < joints; ++i) {
        s += "JOINT j" + std::to_string(i) +
             "\n{\nOFFSET 0 1 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n";
        if (!chain) s += "}\n";
    }
    if (chain)
        for (int i = 1; i < joints; ++i) s += "}\n";
    s += "}\n";
    return s;
}

long long count_lines(std::string_view s) { return std::count(s.begin(), s.end(), '\n'); }

std::string row(int values, std::string_view v = "1") {
    std::string s;
    for (int i = 0; i < values; ++i) {
        if (i) s += ' ';
        s += v;
    }
    return s + "\n";
}

// ---------------------------------------------------------------------------------------------
// Hand-written files

TEST(BvhParse, SmallFileFields) {
    const BvhMotion m = parse_ok(kSmall);
    ASSERT_EQ(m.joints.size(), 2u);
    EXPECT_EQ(m.joints[0].name, "hip");
    EXPECT_EQ(m.joints[0].parent, -1);
    EXPECT_EQ(m.joints[0].line, 2);
    EXPECT_EQ(m.joints[0].offset, (Vec3{0.f, 0.f, 0.f}));
    EXPECT_EQ(m.joints[0].channels,
              (std::vector<BvhChannel>{BvhChannel::Xposition, BvhChannel::Yposition,
                                       BvhChannel::Zposition, BvhChannel::Zrotation,
                                       BvhChannel::Xrotation, BvhChannel::Yrotation}));
    EXPECT_FALSE(m.joints[0].has_end_site);
    EXPECT_EQ(m.joints[1].name, "abdomen");
    EXPECT_EQ(m.joints[1].parent, 0);
    EXPECT_EQ(m.joints[1].line, 6);
    EXPECT_EQ(m.joints[1].offset, (Vec3{0.f, 3.5f, -0.5f}));
    EXPECT_EQ(m.joints[1].channels, (std::vector<BvhChannel>{BvhChannel::Zrotation,
                                                             BvhChannel::Xrotation,
                                                             BvhChannel::Yrotation}));
    EXPECT_TRUE(m.joints[1].has_end_site);
    EXPECT_EQ(m.joints[1].end_site_offset, (Vec3{0.f, 4.f, 0.f}));
    EXPECT_EQ(m.num_frames, 2);
    EXPECT_EQ(m.frame_time, 0.04f);
    EXPECT_EQ(m.total_channels(), 9u);
    EXPECT_EQ(m.channel_offset(0), 0u);
    EXPECT_EQ(m.channel_offset(1), 6u);
    ASSERT_EQ(m.values.size(), 18u);
    EXPECT_EQ(m.value(0, 0, 0), 1.f);
    EXPECT_EQ(m.value(0, 1, 0), 7.f);   // abdomen Zrotation, frame 0
    EXPECT_EQ(m.value(1, 1, 2), -9.f);  // abdomen Yrotation, frame 1
    ASSERT_EQ(m.frame_values(1).size(), 9u);
    EXPECT_EQ(m.frame_values(1)[0], -1.f);
    EXPECT_EQ(m.find_joint("abdomen"), 1);
    EXPECT_EQ(m.find_joint("chest"), -1);
    EXPECT_TRUE(m.trailing_lines.empty());
    expect_round_trip(m);
    EXPECT_EQ(bvh_channel_name(BvhChannel::Zrotation), "Zrotation");
}

TEST(BvhParse, LineEndingsCrlfCrAndMixed) {
    const BvhMotion lf = parse_ok(kSmall);
    const BvhMotion crlf = parse_ok(replace_all(std::string(kSmall), "\n", "\r\n"));
    const BvhMotion cr = parse_ok(replace_all(std::string(kSmall), "\n", "\r"));
    std::string mixed = replace_all(std::string(kSmall), "}\n", "}\r\n");
    mixed = replace_all(mixed, "MOTION\n", "MOTION\r");
    const BvhMotion mix = parse_ok(mixed);
    EXPECT_EQ(crlf, lf);
    EXPECT_EQ(cr, lf);
    EXPECT_EQ(mix, lf);
    // Line numbers count CRLF as one line break.
    ASSERT_EQ(crlf.joints.size(), 2u);
    EXPECT_EQ(crlf.joints[1].line, 6);
    EXPECT_EQ(cr.joints[1].line, 6);
    // No final line break, and a byte order mark.
    EXPECT_EQ(parse_ok(std::string(kSmall.substr(0, kSmall.size() - 1))), lf);
    EXPECT_EQ(parse_ok("\xEF\xBB\xBF" + std::string(kSmall)), lf);
}

TEST(BvhParse, FlexibleWhitespaceAndCase) {
    const BvhMotion ref = parse_ok(kSmall);
    std::string s = with_line(kSmall, 17, "  Frames:2\t \n");
    s = with_line(s, 18, "Frame\t Time :\t0.04   \n");
    EXPECT_EQ(parse_ok(s), ref);
    s = with_line(kSmall, 17, "frames :   2\n");
    s = with_line(s, 18, "FrameTime:0.04\n");
    EXPECT_EQ(parse_ok(s), ref);
    // Keywords in any case, spaces instead of tabs, blank lines and whitespace-only lines.
    s = replace_all(std::string(kSmall), "\t", "   ");
    s = replace_all(s, "OFFSET", "offset");
    s = replace_all(s, "End Site", "end  site");
    s = replace_all(s, "JOINT", "Joint");
    s = replace_all(s, "MOTION\n", "\n \t \nmotion\n\n");
    s = replace_all(s, "Xrotation", "XROTATION");
    EXPECT_EQ(parse_ok(s), ref);
}

TEST(BvhParse, WrappedFrameLinesAndBlankLines) {
    const BvhMotion ref = parse_ok(kSmall);
    std::string s = with_line(kSmall, 19, "1 2 3\n4 5 6 7\n\n8 9\n");
    s = with_line(s, 23, "-1\n-2 -3 -4 -5 -6 -7 -8\n\t-9\n\n\n");
    const BvhMotion m = parse_ok(s);
    EXPECT_EQ(m, ref);
    EXPECT_TRUE(m.trailing_lines.empty());
}

TEST(BvhParse, TrailingLinesKeptVerbatim) {
    std::string s(kSmall);
    s += "\n  \n10 1 14 29 59 \n--------- readme.txt----------\n\tLEAVE ME HERE\r\n\r\nend";
    const BvhMotion m = parse_ok(s);
    EXPECT_EQ(m.trailing_lines,
              (std::vector<std::string>{"10 1 14 29 59 ", "--------- readme.txt----------",
                                        "\tLEAVE ME HERE", "end"}));
    EXPECT_EQ(m.num_frames, 2);
    expect_round_trip(m);
    const std::string written = write_bvh(m);
    EXPECT_NE(written.find("-9\n10 1 14 29 59 \n--------- readme.txt----------\n\tLEAVE ME "
                           "HERE\nend\n"),
              std::string::npos)
        << written;
}

TEST(BvhParse, ChannelOrdersSubsetsAndThreeChannelRoot) {
    const std::string s =
        "HIERARCHY\nROOT root\n{\n OFFSET 1 2 3\n CHANNELS 3 Zrotation Xrotation Yrotation\n"
        " JOINT a\n {\n  OFFSET 0 1 0\n  CHANNELS 6 Zrotation Yposition Xrotation Xposition "
        "Yrotation Zposition\n }\n"
        " JOINT b\n {\n  OFFSET 0 1 0\n  CHANNELS 2 Yrotation Xposition\n }\n"
        " JOINT c\n {\n  OFFSET 0 1 0\n  CHANNELS 0\n  End Site\n  {\n   OFFSET 0 0 1\n  }\n }\n"
        " JOINT d\n {\n  OFFSET 0 1 0\n  CHANNELS 1 yrotation\n }\n"
        "}\nMOTION\nFrames: 1\nFrame Time: 0.5\n1 2 3 4 5 6 7 8 9 10 11 12\n";
    const BvhMotion m = parse_ok(s);
    ASSERT_EQ(m.joints.size(), 5u);
    EXPECT_EQ(m.joints[0].channels, (std::vector<BvhChannel>{BvhChannel::Zrotation,
                                                             BvhChannel::Xrotation,
                                                             BvhChannel::Yrotation}));
    EXPECT_EQ(m.joints[1].channels,
              (std::vector<BvhChannel>{BvhChannel::Zrotation, BvhChannel::Yposition,
                                       BvhChannel::Xrotation, BvhChannel::Xposition,
                                       BvhChannel::Yrotation, BvhChannel::Zposition}));
    EXPECT_EQ(m.joints[2].channels,
              (std::vector<BvhChannel>{BvhChannel::Yrotation, BvhChannel::Xposition}));
    EXPECT_TRUE(m.joints[3].channels.empty());
    EXPECT_TRUE(m.joints[3].has_end_site);
    EXPECT_EQ(m.joints[4].channels, std::vector<BvhChannel>{BvhChannel::Yrotation});
    for (std::size_t i = 1; i < m.joints.size(); ++i) EXPECT_EQ(m.joints[i].parent, 0);
    EXPECT_EQ(m.total_channels(), 12u);
    EXPECT_EQ(m.channel_offset(4), 11u);
    EXPECT_EQ(m.value(0, 1, 3), 7.f);   // a: Xposition
    EXPECT_EQ(m.value(0, 2, 1), 11.f);  // b: Xposition
    EXPECT_EQ(m.value(0, 4, 0), 12.f);  // d: Yrotation
    EXPECT_EQ(m.frame_time, 0.5f);
    expect_round_trip(m);
}

TEST(BvhParse, EndSiteBeforeBetweenAndAfterChildren) {
    // The model records only that a joint has an End Site; the writer puts it after the child
    // joints, which still reads back equal.
    const std::string s =
        "HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 3 Xrotation Yrotation Zrotation\n"
        "End Site\n{\nOFFSET 0 0 7\n}\n"
        "JOINT a {\nOFFSET 0 1 0\nCHANNELS 3 Xrotation Yrotation Zrotation\n"
        "End Site {\nOFFSET 1 1 1\n}\n}\n"
        "}\nMOTION\nFrames: 1\nFrame Time: 1\n0 0 0 0 0 0\n";
    const BvhMotion m = parse_ok(s);
    ASSERT_EQ(m.joints.size(), 2u);
    EXPECT_TRUE(m.joints[0].has_end_site);
    EXPECT_EQ(m.joints[0].end_site_offset, (Vec3{0.f, 0.f, 7.f}));
    EXPECT_TRUE(m.joints[1].has_end_site);
    EXPECT_EQ(m.joints[1].end_site_offset, (Vec3{1.f, 1.f, 1.f}));
    expect_round_trip(m);
}

TEST(BvhParse, NamesAreTheRestOfTheLine) {
    std::string s = with_line(kSmall, 2, "ROOT   Left Hip Joint \t\n");
    s = with_line(s, 6, "\tJOINT mChest (SL)\n");
    const BvhMotion m = parse_ok(s);
    ASSERT_EQ(m.joints.size(), 2u);
    EXPECT_EQ(m.joints[0].name, "Left Hip Joint");
    EXPECT_EQ(m.joints[1].name, "mChest (SL)");
    // A '{' at the end of the line opens the block.
    s = with_line(kSmall, 6, "\tJOINT a b {\n");
    s = with_line(s, 7, "");
    const BvhMotion inl = parse_ok(s);
    ASSERT_EQ(inl.joints.size(), 2u);
    EXPECT_EQ(inl.joints[1].name, "a b");
    expect_round_trip(m);
    expect_round_trip(inl);
}

TEST(BvhParse, NumberForms) {
    const std::string s = with_line(kSmall, 19, "+1.5 -0 1e-5 2E+3 .5 1. -.25 1e-40 1e-50\n");
    const BvhMotion m = parse_ok(s);
    ASSERT_EQ(m.values.size(), 18u);
    EXPECT_EQ(m.values[0], 1.5f);
    EXPECT_EQ(m.values[1], 0.f);
    EXPECT_TRUE(std::signbit(m.values[1]));
    EXPECT_EQ(m.values[2], 1e-5f);
    EXPECT_EQ(m.values[3], 2000.f);
    EXPECT_EQ(m.values[4], 0.5f);
    EXPECT_EQ(m.values[5], 1.f);
    EXPECT_EQ(m.values[6], -0.25f);
    EXPECT_EQ(m.values[7], 1e-40f);  // subnormal, kept
    EXPECT_EQ(m.values[8], 0.f);     // below the float range: 0
    expect_round_trip(m);
    // Shortest round-trip text: odd floats come back bit for bit.
    BvhMotion odd = m;
    odd.values = {0.1f, 1.f / 3.f, 123456789.f, -1e-38f, 3.4028235e38f, 1e-45f,
                  0.066667f, 16777217.f, -7.5e-7f, 42.f, -0.f, 1e10f, 2.f, 3.f, 4.f,
                  5.f, 6.f, 7.f};
    odd.frame_time = 0.0333333f;
    expect_round_trip(odd);
}

TEST(BvhParse, ZeroChannelsOnlyTrailingLines) {
    const std::string s =
        "HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 0\n}\nMOTION\nFrames: 3\nFrame Time: "
        "0.1\n\n\nnote\n";
    const BvhMotion m = parse_ok(s);
    EXPECT_EQ(m.total_channels(), 0u);
    EXPECT_TRUE(m.values.empty());
    EXPECT_EQ(m.num_frames, 3);
    EXPECT_EQ(m.trailing_lines, std::vector<std::string>{"note"});
    expect_round_trip(m);
}

TEST(BvhWrite, CanonicalText) {
    BvhMotion m = parse_ok(kSmall);
    m.values[0] = 0.1f;
    m.values[1] = -0.f;
    m.values[2] = 1e-5f;
    m.trailing_lines = {"x y"};
    const std::string expected =
        "HIERARCHY\n"
        "ROOT hip\n"
        "{\n"
        "\tOFFSET 0 0 0\n"
        "\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
        "\tJOINT abdomen\n"
        "\t{\n"
        "\t\tOFFSET 0 3.5 -0.5\n"
        "\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n"
        "\t\tEnd Site\n"
        "\t\t{\n"
        "\t\t\tOFFSET 0 4 0\n"
        "\t\t}\n"
        "\t}\n"
        "}\n"
        "MOTION\n"
        "Frames: 2\n"
        "Frame Time: 0.04\n"
        "0.1 -0 1e-05 4 5 6 7 8 9\n"
        "-1 -2 -3 -4 -5 -6 -7 -8 -9\n"
        "x y\n";
    EXPECT_EQ(write_bvh(m), expected);
    expect_round_trip(m);
}

TEST(BvhWrite, InvalidModelsDoNotCrash) {
    BvhMotion m = parse_ok(kSmall);
    m.values.resize(5);  // fewer values than frames × channels
    EXPECT_FALSE(write_bvh(m).empty());
    m.joints[1].parent = 7;  // not an open joint
    m.num_frames = -3;
    EXPECT_FALSE(write_bvh(m).empty());
    EXPECT_FALSE(write_bvh(BvhMotion{}).empty());
}

TEST(BvhFile, SaveAndLoad) {
    const fs::path dir = fs::temp_directory_path() /
                         ("slanim_bvh_test_" + std::to_string(::testing::UnitTest::GetInstance()
                                                                  ->random_seed()));
    fs::create_directories(dir);
    const BvhMotion m = parse_ok(kSmall);
    const std::string path = (dir / "small.bvh").string();
    auto saved = save_bvh(path, m);
    ASSERT_TRUE(saved.ok()) << saved.error().describe();
    auto loaded = load_bvh(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
    EXPECT_EQ(loaded.value(), m);

    auto missing = load_bvh((dir / "missing.bvh").string());
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().message.find("missing.bvh"), std::string::npos);

    const std::string bad = (dir / "bad.bvh").string();
    const std::string text = with_line(kSmall, 7, "");
    ASSERT_TRUE(write_file_atomic(bad, std::span<const std::uint8_t>(
                                           reinterpret_cast<const std::uint8_t*>(text.data()),
                                           text.size()))
                    .ok());
    auto failed = load_bvh(bad);
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(failed.error().line, 7);
    EXPECT_EQ(failed.error().message.rfind(bad + ": line 7, column 3: ", 0), 0u)
        << failed.error().message;
    std::error_code ec;
    fs::remove_all(dir, ec);
}

// ---------------------------------------------------------------------------------------------
// Errors: each names the line (Error::line and the message) and the column.

TEST(BvhErrors, MissingHierarchy) {
    expect_error("", 1, 1, "expected HIERARCHY, found end of file");
    expect_error("\n\n", 2, 1, "expected HIERARCHY, found end of file");
    expect_error(kSmall.substr(kSmall.find("ROOT")), 1, 1, "expected HIERARCHY, found 'ROOT'");
    expect_error(with_line(kSmall, 1, "HIERARCHY x\n"), 1, 11,
                 "expected end of line after HIERARCHY, found 'x'");
    expect_error(with_line(kSmall, 2, "JOINT hip\n"), 2, 1, "expected ROOT, found 'JOINT'");
    expect_error(with_line(kSmall, 2, "ROOT\n"), 2, 5,
                 "expected a joint name after ROOT, found end of line");
    expect_error(with_line(kSmall, 2, "ROOT {\n"), 2, 6,
                 "expected a joint name after ROOT, found '{'");
}

TEST(BvhErrors, MissingMotion) {
    expect_error(with_line(kSmall, 16, ""), 16, 1,
                 "expected MOTION after the ROOT block (closed at line 15), found 'Frames:'");
    expect_error(kSmall.substr(0, kSmall.find("MOTION")), 15, 2,
                 "expected MOTION after the ROOT block, found end of file");
    expect_error(with_line(kSmall, 16, "MOTION 2\n"), 16, 8,
                 "expected end of line after MOTION, found '2'");
}

TEST(BvhErrors, UnbalancedBraces) {
    expect_error(with_line(kSmall, 15, ""), 15, 1,
                 "expected JOINT, End Site or '}', found 'MOTION' (unbalanced braces: 1 block(s) "
                 "still open, the innermost is joint 'hip' from line 2)");
    expect_error(with_line(kSmall, 15, "}\n}\n"), 16, 1,
                 "unbalanced '}': the ROOT block already closed at line 15");
    expect_error(kSmall.substr(0, kSmall.find("\t}\n}")), 13, 4,
                 "expected JOINT, End Site or '}', found end of file (unbalanced braces: 2");
    expect_error(with_line(kSmall, 14, "\t} }\n"), 14, 4,
                 "expected end of line after '}', found '}'");
}

TEST(BvhErrors, MissingBraceAndKeywords) {
    // The example of the task: a JOINT line followed by OFFSET.
    expect_error(with_line(kSmall, 7, ""), 7, 3,
                 "expected '{' after the JOINT name, found 'OFFSET'");
    expect_error(with_line(kSmall, 3, "(\n"), 3, 1, "expected '{' after the ROOT name, found '('");
    expect_error(with_line(kSmall, 8, ""), 8, 3, "expected OFFSET, found 'CHANNELS'");
    expect_error(with_line(kSmall, 9, ""), 9, 3, "expected CHANNELS, found 'End'");
    expect_error(with_line(kSmall, 11, ""), 11, 4, "expected '{' after End Site, found 'OFFSET'");
    expect_error(with_line(kSmall, 12, ""), 12, 3, "expected OFFSET in the End Site, found '}'");
    expect_error(with_line(kSmall, 13, "\t\tCHANNELS 0\n"), 13, 3,
                 "expected '}' to close the End Site, found 'CHANNELS'");
    expect_error(with_line(kSmall, 10, "\t\tEnd\n"), 10, 6,
                 "expected 'Site' after 'End', found end of line");
    expect_error(with_line(kSmall, 10, "\t\tEnd Site here\n"), 10, 12,
                 "expected end of line after End Site, found 'here'");
    expect_error(with_line(kSmall, 6, "\tJOINTabdomen\n"), 6, 2,
                 "expected JOINT, End Site or '}', found 'JOINTabdomen'");
    expect_error(with_line(kSmall, 6, "\tJOINT a { {\n"), 6, 10,
                 "unexpected '{' in the JOINT name 'a {'");
    expect_error(with_line(kSmall, 13, "\t\t}\n\t\tEnd Site\n\t\t{\n\t\t\tOFFSET 0 0 0\n\t\t}\n"),
                 14, 3, "joint 'abdomen' has a second End Site");
}

TEST(BvhErrors, Offsets) {
    expect_error(with_line(kSmall, 8, "\t\tOFFSET 0 3.5\n"), 8, 15,
                 "expected 3 numbers after OFFSET, found 2");
    expect_error(with_line(kSmall, 8, "\t\tOFFSET 0 abc 1\n"), 8, 12,
                 "expected a number for OFFSET y, found 'abc'");
    expect_error(with_line(kSmall, 8, "\t\tOFFSET 0 1,5 1\n"), 8, 12,
                 "expected a number for OFFSET y, found '1,5'");
    expect_error(with_line(kSmall, 8, "\t\tOFFSET 0 0x10 1\n"), 8, 12,
                 "expected a number for OFFSET y");
    expect_error(with_line(kSmall, 8, "\t\tOFFSET 0 1 nan\n"), 8, 14,
                 "OFFSET z is 'nan', not a finite number");
    expect_error(with_line(kSmall, 12, "\t\t\tOFFSET -inf 1 2\n"), 12, 11,
                 "OFFSET x is '-inf', not a finite number");
    expect_error(with_line(kSmall, 8, "\t\tOFFSET 1e39 0 0\n"), 8, 10,
                 "OFFSET x '1e39' is out of the float range");
    expect_error(with_line(kSmall, 8, "\t\tOFFSET 0 1 2 3\n"), 8, 16,
                 "expected end of line after the 3 OFFSET numbers, found '3'");
}

TEST(BvhErrors, Channels) {
    expect_error(with_line(kSmall, 9, "\t\tCHANNELS 7 Zrotation Xrotation Yrotation\n"), 9, 12,
                 "expected a channel count from 0 to 6 after CHANNELS, found '7'");
    expect_error(with_line(kSmall, 9, "\t\tCHANNELS -1\n"), 9, 12,
                 "expected a channel count from 0 to 6 after CHANNELS, found '-1'");
    expect_error(with_line(kSmall, 9, "\t\tCHANNELS three\n"), 9, 12,
                 "found 'three'");
    expect_error(with_line(kSmall, 9, "\t\tCHANNELS\n"), 9, 11,
                 "expected a channel count from 0 to 6 after CHANNELS, found end of line");
    expect_error(with_line(kSmall, 9, "\t\tCHANNELS 3 Zrotation Xrotation\n"), 9, 33,
                 "expected 3 channel names after 'CHANNELS 3', found 2");
    expect_error(with_line(kSmall, 9, "\t\tCHANNELS 2 Zrotation Xrotation Yrotation\n"), 9, 34,
                 "expected end of line after the 2 channel name(s) of 'CHANNELS 2', found "
                 "'Yrotation'");
    expect_error(with_line(kSmall, 9, "\t\tCHANNELS 3 Zrotation Wrotation Yrotation\n"), 9, 24,
                 "unknown channel 'Wrotation' (expected Xposition, Yposition, Zposition, "
                 "Xrotation, Yrotation or Zrotation)");
    expect_error(with_line(kSmall, 9, "\t\tCHANNELS 3 Zrotation Xrotation zrotation\n"), 9, 34,
                 "channel Zrotation is listed twice for joint 'abdomen'");
}

TEST(BvhErrors, MultipleRoots) {
    std::string s(kSmall.substr(0, kSmall.find("MOTION")));
    s += "ROOT other\n{\nOFFSET 0 0 0\nCHANNELS 0\n}\n";
    s += kSmall.substr(kSmall.find("MOTION"));
    expect_error(s, 16, 1,
                 "a second ROOT 'other': only one ROOT is supported (the first, 'hip', is at "
                 "line 2)");
}

TEST(BvhErrors, FramesHeader) {
    expect_error(with_line(kSmall, 17, "Frames: 0\n"), 17, 9, "Frames must be at least 1, found 0");
    expect_error(with_line(kSmall, 17, "Frames:\t-3\n"), 17, 9,
                 "Frames must be at least 1, found -3");
    expect_error(with_line(kSmall, 17, "Frames: 1000001\n"), 17, 9,
                 "Frames '1000001' exceeds the limit of 1000000");
    expect_error(with_line(kSmall, 17, "Frames: 99999999999999999999999\n"), 17, 9,
                 "exceeds the limit of 1000000");
    expect_error(with_line(kSmall, 17, "Frames: 2.5\n"), 17, 9,
                 "expected a whole number of frames after 'Frames:', found '2.5'");
    expect_error(with_line(kSmall, 17, "Frames:\n"), 17, 8,
                 "expected the number of frames after 'Frames:', found end of line");
    expect_error(with_line(kSmall, 17, "Frames 2\n"), 17, 8,
                 "expected ':' after 'Frames', found '2'");
    expect_error(with_line(kSmall, 17, "Frames: 2 3\n"), 17, 11,
                 "expected end of line after the number of frames, found '3'");
    expect_error(with_line(kSmall, 17, ""), 17, 1, "expected 'Frames:', found 'Frame'");
    expect_error(kSmall.substr(0, kSmall.find("Frames")), 16, 7,
                 "expected 'Frames:', found end of file");
    // Frames × channels beyond the limit: 200 joints × 3 channels × 1,000,000 frames.
    const std::string big = synthetic_hierarchy(200, false) + "MOTION\nFrames: 1000000\nFrame Time: 1\n";
    expect_error(big, count_lines(big) - 1, 9,
                 "Frames × channels = 1000000 × 600 = 600000000 values exceeds the limit of "
                 "100000000");
}

TEST(BvhErrors, FrameTime) {
    expect_error(with_line(kSmall, 18, "Frame Time: 0\n"), 18, 13,
                 "Frame Time must be greater than 0, found '0'");
    expect_error(with_line(kSmall, 18, "Frame Time: -0.1\n"), 18, 13,
                 "Frame Time must be greater than 0, found '-0.1'");
    expect_error(with_line(kSmall, 18, "Frame Time: -0\n"), 18, 13,
                 "Frame Time must be greater than 0");
    expect_error(with_line(kSmall, 18, "Frame Time: nan\n"), 18, 13,
                 "Frame Time 'nan' is not a finite float");
    expect_error(with_line(kSmall, 18, "Frame Time: 1e300\n"), 18, 13,
                 "Frame Time '1e300' is not a finite float");
    expect_error(with_line(kSmall, 18, "Frame Time: fast\n"), 18, 13,
                 "expected the frame time in seconds after 'Frame Time:', found 'fast'");
    expect_error(with_line(kSmall, 18, "Frame Time 0.04\n"), 18, 12,
                 "expected ':' after 'Frame Time', found '0.04'");
    expect_error(with_line(kSmall, 18, "Time: 0.04\n"), 18, 1,
                 "expected 'Frame Time:', found 'Time:'");
    expect_error(with_line(kSmall, 18, "Frame Time: 0.04 s\n"), 18, 18,
                 "expected end of line after the frame time, found 's'");
}

TEST(BvhErrors, FrameValues) {
    // Too few values, then the end of the file: the end of the last value.
    expect_error(with_line(kSmall, 20, "-1 -2 -3 -4 -5 -6 -7 -8\n"), 20, 24,
                 "frame 2 has 8 values, expected 9 (end of file)");
    // Too few values, then the next frame's line.
    std::string s = with_line(kSmall, 17, "Frames: 3\n");
    s = with_line(s, 19, "1 2 3 4 5 6 7 8\n1 2 3 4 5 6 7 8 9\n");
    expect_error(s, 19, 16, "frame 1 has 8 values, expected 9 (line 20 holds 9 more");
    // Too many on one line.
    expect_error(with_line(kSmall, 19, "1 2 3 4 5 6 7 8 9 10\n"), 19, 19,
                 "frame 1 has 10 values, expected 9");
    expect_error(with_line(kSmall, 19, "1 2 3 4 5 6 7 8 9 #\n"), 19, 19,
                 "expected end of line after the 9 values of frame 1, found '#'");
    // Missing frames.
    expect_error(with_line(kSmall, 20, ""), 19, 18,
                 "expected frame 2 of 2 (9 values), found end of file");
    expect_error(with_line(kSmall, 20, "Frame 2 follows\n"), 20, 1,
                 "expected frame 2 of 2 (9 values), found 'Frame'");
    // Bad values.
    expect_error(with_line(kSmall, 19, "1 2 3 x 5 6 7 8 9\n"), 19, 7,
                 "expected a number for value 4 of frame 1 (9 values per frame), found 'x'");
    expect_error(with_line(kSmall, 19, "1 2 3 4 5 6 7 8 inf\n"), 19, 17,
                 "value 9 of frame 1 is 'inf', not a finite number");
    expect_error(with_line(kSmall, 20, "-1 -2 -3 -4 -5 -6 -7 -8 NaN\n"), 20, 25,
                 "value 9 of frame 2 is 'NaN', not a finite number");
    expect_error(with_line(kSmall, 19, "1 2 3 4 5 6 7 8 -1e40\n"), 19, 17,
                 "value 9 of frame 1 ('-1e40') is out of the float range");
    // The task's example: 16 joints × 3 channels, frame 37 has 45 values.
    std::string big = synthetic_hierarchy(16, true) + "MOTION\nFrames: 40\nFrame Time: 0.04\n";
    const long long header = count_lines(big);
    for (int f = 1; f <= 40; ++f) big += row(f == 37 ? 45 : 48);
    expect_error(big, header + 37, 90, "frame 37 has 45 values, expected 48");
}

TEST(BvhErrors, JointAndDepthLimits) {
    const auto motion = [](int joints) {
        return "MOTION\nFrames: 1\nFrame Time: 1\n" + row(3 * joints, "0");
    };
    // 1024 joints parse; the 1025th is rejected at its JOINT line.
    const BvhMotion ok = parse_ok(synthetic_hierarchy(1024, false) + motion(1024));
    EXPECT_EQ(ok.joints.size(), 1024u);
    // Root: lines 2–5; sibling i (1-based): JOINT on line 5 + 5 (i − 1) + 1.
    expect_error(synthetic_hierarchy(1025, false) + motion(1025), 5 + 5 * 1023 + 1, 1,
                 "more than 1024 joints (the limit)");
    // Depth 256 parses; 257 is rejected. Chain joint i: JOINT on line 5 + 4 (i − 1) + 1.
    const BvhMotion deep = parse_ok(synthetic_hierarchy(256, true) + motion(256));
    EXPECT_EQ(deep.joints.size(), 256u);
    EXPECT_EQ(deep.joints.back().parent, 254);
    expect_round_trip(deep);
    expect_error(synthetic_hierarchy(257, true) + motion(257), 5 + 4 * 255 + 1, 1,
                 "joint 'j256' is nested deeper than 256 levels (the limit)");
    // Very deep nesting (no recursion, stopped at the limit).
    std::string nest = "HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 0\n";
    for (int i = 0; i < 100000; ++i) nest += "JOINT a\n{\nOFFSET 0 0 0\nCHANNELS 0\n";
    expect_error(nest, 5 + 4 * 255 + 1, 1, "nested deeper than 256 levels");
}

// ---------------------------------------------------------------------------------------------
// The real files of ../shared/bvh

const fs::path& bvh_dir() {
    static const fs::path dir = fs::path(SLANIM_SHARED_DIR) / "bvh";
    return dir;
}

struct BvhFileText {
    std::string name;  // relative to bvh_dir(), for messages
    std::string text;
};

bool is_bvh(const fs::path& p) {
    std::string ext = p.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return ext == ".bvh";
}

// Every *.bvh below bvh_dir(), sorted by path, read once for all tests.
const std::vector<BvhFileText>& bvh_files() {
    static const std::vector<BvhFileText> files = [] {
        std::vector<fs::path> paths;
        std::error_code ec;
        for (fs::recursive_directory_iterator it(bvh_dir(), ec), end; !ec && it != end;
             it.increment(ec)) {
            if (it->is_regular_file() && is_bvh(it->path())) paths.push_back(it->path());
        }
        std::sort(paths.begin(), paths.end());
        std::vector<BvhFileText> out;
        for (const fs::path& p : paths) {
            auto bytes = read_file_bytes(p.string());
            EXPECT_TRUE(bytes.ok()) << (bytes.ok() ? "" : bytes.error().describe());
            if (bytes.ok())
                out.push_back({fs::relative(p, bvh_dir()).string(),
                               std::string(bytes.value().begin(), bytes.value().end())});
        }
        return out;
    }();
    return files;
}

const BvhFileText* bvh_file(std::string_view name) {
    for (const BvhFileText& f : bvh_files())
        if (f.name == name) return &f;
    return nullptr;
}

#define SLANIM_NEED_BVH_DIR()                                                                   \
    do {                                                                                        \
        if (!fs::is_directory(bvh_dir()))                                                       \
            GTEST_SKIP() << "the shared reference folder is absent: " << bvh_dir().string()     \
                         << " (set SLANIM_SHARED_DIR to a folder with bvh/ to run this test)";  \
    } while (false)

TEST(BvhRealFiles, EveryFileParsesAndRoundTrips) {
    SLANIM_NEED_BVH_DIR();
    const auto& files = bvh_files();
    EXPECT_GE(files.size(), 200u) << "expected the ~214 BVH files of ../shared/bvh";
    std::size_t with_trailing = 0, with_end_sites = 0;
    std::map<std::string, int> orders;
    for (const BvhFileText& f : files) {
        SCOPED_TRACE(f.name);
        auto r = parse_bvh(f.text);
        ASSERT_TRUE(r.ok()) << f.name << ": " << r.error().describe();
        const BvhMotion& m = r.value();
        EXPECT_FALSE(m.joints.empty()) << f.name;
        EXPECT_GE(m.num_frames, 1) << f.name;
        EXPECT_GT(m.frame_time, 0.f) << f.name;
        EXPECT_EQ(m.values.size(), static_cast<std::size_t>(m.num_frames) * m.total_channels())
            << f.name;
        for (std::size_t i = 1; i < m.joints.size(); ++i) {
            EXPECT_GE(m.joints[i].parent, 0) << f.name;
            EXPECT_LT(m.joints[i].parent, static_cast<int>(i)) << f.name;
        }
        expect_round_trip(m, f.name);
        if (!m.trailing_lines.empty()) ++with_trailing;
        if (std::any_of(m.joints.begin(), m.joints.end(),
                        [](const BvhJoint& j) { return j.has_end_site; }))
            ++with_end_sites;
        for (const BvhJoint& j : m.joints) {
            std::string o;
            for (const BvhChannel c : j.channels) o += bvh_channel_name(c).substr(0, 2);
            ++orders[o];
        }
    }
    std::cout << "[ bvh      ] " << files.size() << " files, " << with_trailing
              << " with trailing lines, " << with_end_sites << " with End Sites; channel orders:";
    for (const auto& [o, n] : orders) std::cout << ' ' << o << "×" << n;
    std::cout << "\n";
}

TEST(BvhRealFiles, LindenAvatarBow) {
    SLANIM_NEED_BVH_DIR();
    const BvhFileText* f = bvh_file("linden/avatar_bow.bvh");
    ASSERT_NE(f, nullptr) << "linden/avatar_bow.bvh is missing from " << bvh_dir().string();
    auto r = parse_bvh(f->text);
    ASSERT_TRUE(r.ok()) << r.error().describe();
    const BvhMotion& m = r.value();
    // Checked by hand in the file: ROOT hip (line 2) with 6 channels, 20 JOINTs (line 22 is
    // JOINT head), 5 End Sites (figureHair, lHand, rHand, lFoot, rFoot), Frames: 30,
    // Frame Time: 0.066667, the first frame starting "3.102233 42.545193 -3.468529".
    ASSERT_EQ(m.joints.size(), 21u);
    EXPECT_EQ(m.joints[0].name, "hip");
    EXPECT_EQ(m.joints[0].line, 2);
    EXPECT_EQ(m.joints[0].channels.size(), 6u);
    EXPECT_EQ(m.joints[0].channels[3], BvhChannel::Xrotation);
    EXPECT_EQ(m.joints[0].channels[4], BvhChannel::Zrotation);
    EXPECT_EQ(m.joints[0].channels[5], BvhChannel::Yrotation);
    const int head = m.find_joint("head");
    ASSERT_GE(head, 0);
    EXPECT_EQ(m.joints[static_cast<std::size_t>(head)].line, 22);
    EXPECT_EQ(m.joints[static_cast<std::size_t>(m.joints[static_cast<std::size_t>(head)].parent)]
                  .name,
              "neck");
    const int chest = m.find_joint("chest");
    ASSERT_GE(chest, 0);
    EXPECT_EQ(m.joints[static_cast<std::size_t>(chest)].offset,
              (Vec3{0.f, 5.018152f, -1.882228f}));
    EXPECT_EQ(std::count_if(m.joints.begin(), m.joints.end(),
                            [](const BvhJoint& j) { return j.has_end_site; }),
              5);
    EXPECT_EQ(m.total_channels(), 66u);
    EXPECT_EQ(m.num_frames, 30);
    EXPECT_EQ(m.frame_time, 0.066667f);
    EXPECT_EQ(m.value(0, 0, 0), 3.102233f);
    EXPECT_EQ(m.value(0, 0, 1), 42.545193f);
    EXPECT_EQ(m.value(0, 0, 2), -3.468529f);
    EXPECT_EQ(m.values.back(), 2.361151f);
    EXPECT_TRUE(m.trailing_lines.empty());
}

TEST(BvhRealFiles, OddFiles) {
    SLANIM_NEED_BVH_DIR();
    // Notes appended after the frames.
    if (const BvhFileText* f = bvh_file("opencollar/-00.bvh")) {
        const BvhMotion m = parse_ok(f->text);
        EXPECT_EQ(m.trailing_lines,
                  (std::vector<std::string>{"eterm##$:BKUW300PS345672:",
                                            "--------- readme.txt----------", "\tLEAVE ME HERE",
                                            "------------------------------"}));
    } else {
        ADD_FAILURE() << "opencollar/-00.bvh is missing";
    }
    // 24 numeric lines (key frame lists) after the 290 frames.
    if (const BvhFileText* f = bvh_file("opencollar/foot-bottom.bvh")) {
        const BvhMotion m = parse_ok(f->text);
        EXPECT_EQ(m.num_frames, 290);
        ASSERT_EQ(m.trailing_lines.size(), 24u);
        EXPECT_EQ(m.trailing_lines.front(), "10 1 14 29 59 60 89 119 149 209 289 ");
    } else {
        ADD_FAILURE() << "opencollar/foot-bottom.bvh is missing";
    }
    // CR-only line endings.
    if (const BvhFileText* f = bvh_file("opencollar/run.bvh")) {
        ASSERT_EQ(f->text.find('\n'), std::string::npos);
        const BvhMotion m = parse_ok(f->text);
        EXPECT_EQ(m.num_frames, 31);
        EXPECT_EQ(m.joints.size(), 20u);
    } else {
        ADD_FAILURE() << "opencollar/run.bvh is missing";
    }
}

TEST(BvhRealFiles, TruncationNeverCrashes) {
    SLANIM_NEED_BVH_DIR();
    const BvhFileText* f = bvh_file("linden/avatar_bow.bvh");
    ASSERT_NE(f, nullptr);
    const std::string& text = f->text;
    const std::size_t motion_at = text.find("MOTION");
    ASSERT_NE(motion_at, std::string::npos);
    // The last value ends 2 bytes before the end ("2.361151 \n"): every cut before it is an
    // error (the sampled cut points all lie before it).
    const std::size_t last_value_end = text.size() - 2;
    int failed = 0;
    for (int i = 0; i < 200; ++i) {
        const std::size_t cut =
            std::min(text.size(), text.size() * static_cast<std::size_t>(i) / 200 + (i % 7));
        const std::string_view part = std::string_view(text).substr(0, cut);
        auto r = parse_bvh(part);
        if (r.ok()) {
            EXPECT_GE(cut, last_value_end) << "cut at " << cut << " parsed";
            expect_round_trip(r.value(), "cut at " + std::to_string(cut));
            continue;
        }
        ++failed;
        const Error& e = r.error();
        EXPECT_GE(e.line, 1) << "cut at " << cut;
        EXPECT_LE(e.line, count_lines(part) + 1) << "cut at " << cut;
        EXPECT_EQ(e.message.rfind("line " + std::to_string(e.line) + ", column ", 0), 0u)
            << e.message;
        if (cut > motion_at + 6) {
            EXPECT_GE(e.line, 127) << e.message;
        }
    }
    EXPECT_EQ(failed, 200);
    // Cut inside the last frame's line: "frame 30 has N values, expected 66".
    auto r = parse_bvh(std::string_view(text).substr(0, text.size() - 30));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("frame 30 has "), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("expected 66 (end of file)"), std::string::npos)
        << r.error().message;
    EXPECT_EQ(r.error().line, 159);
}

}  // namespace
}  // namespace slanim
