// SPDX-License-Identifier: MIT
// libFuzzer target for the BVH text reader and writer: parse_bvh → write_bvh → parse_bvh.
//
// Properties checked (a violation aborts, which libFuzzer reports as a crash):
//  * no crash, no sanitizer finding, no read out of bounds, whatever the bytes;
//  * an error names a line that exists (1 … lines + 1) in Error::line and in a message that
//    starts "line L, column C: ", with C within that line (1 … length + 1);
//  * a parsed motion keeps parse_bvh's guarantees: one root, parents before children, at most
//    1024 joints nested at most 256 deep, 0–6 distinct channels per joint, non-empty trimmed
//    names without line breaks, 1 ≤ Frames ≤ 1,000,000, a finite Frame Time > 0,
//    num_frames × total_channels finite values, non-blank trailing lines without line breaks;
//  * parse_bvh(write_bvh(m)) == m, also with the written text's line breaks turned into CRLF,
//    and write_bvh is idempotent.
//
// Run:   slanim_fuzz_bvh -max_total_time=60 NEW_CORPUS_DIR SEED_DIR...
// libFuzzer writes new inputs to the first folder: make it a writable scratch folder, e.g.
//   mkdir -p /tmp/bvh-corpus && cp ../shared/bvh/linden/*.bvh /tmp/bvh-corpus/
//   slanim_fuzz_bvh -max_total_time=60 /tmp/bvh-corpus
// Seeds for what the real files lack (CR/CRLF mixes, wrapped frames, inline braces, odd channel
// sets, number forms, names with spaces): `slanim_fuzz_bvh -write_seeds=DIR` writes them to DIR
// and exits (the `slanim_fuzz_bvh_seeds` target writes them to <build>/fuzz/bvh-seeds).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "fuzz_check.hpp"
#include "slanim/formats/bvh.hpp"
#include "fuzz_seeds.hpp"

namespace {

using namespace slanim;

constexpr const char* kFuzzTarget = "slanim_fuzz_bvh";

// The physical lines as parse_bvh splits them (CRLF, LF or CR; a leading BOM dropped).
std::vector<std::string_view> split_lines(std::string_view t) {
    if (t.substr(0, 3) == "\xEF\xBB\xBF") t.remove_prefix(3);
    std::vector<std::string_view> out;
    std::size_t p = 0;
    while (p < t.size()) {
        std::size_t e = p;
        while (e < t.size() && t[e] != '\n' && t[e] != '\r') ++e;
        out.push_back(t.substr(p, e - p));
        if (e < t.size() && t[e] == '\r' && e + 1 < t.size() && t[e + 1] == '\n') p = e + 2;
        else p = e + 1;
    }
    return out;
}

void check_error(const Error& e, std::string_view data) {
    const std::vector<std::string_view> lines = split_lines(data);
    SLANIM_FUZZ_CHECK(e.offset == -1, data);
    SLANIM_FUZZ_CHECK(e.line >= 1 && e.line <= static_cast<long long>(lines.size()) + 1, data);
    const std::string prefix = "line " + std::to_string(e.line) + ", column ";
    SLANIM_FUZZ_CHECK(e.message.compare(0, prefix.size(), prefix) == 0, data);
    long long col = 0;
    const char* first = e.message.data() + prefix.size();
    const char* last = e.message.data() + e.message.size();
    const auto r = std::from_chars(first, last, col);
    SLANIM_FUZZ_CHECK(r.ec == std::errc() && r.ptr + 1 < last && r.ptr[0] == ':', data);
    const std::size_t len =
        e.line <= static_cast<long long>(lines.size()) ? lines[static_cast<std::size_t>(e.line - 1)].size() : 0;
    SLANIM_FUZZ_CHECK(col >= 1 && col <= static_cast<long long>(len) + 1, data);
    SLANIM_FUZZ_CHECK(!e.describe().empty(), data);
}

bool has_line_break(std::string_view s) { return s.find_first_of("\r\n") != std::string_view::npos; }
bool is_blank(std::string_view s) {
    return s.find_first_not_of(" \t\v\f") == std::string_view::npos;
}

void check_motion(const BvhMotion& m, std::string_view data) {
    SLANIM_FUZZ_CHECK(!m.joints.empty() && m.joints.size() <= kBvhMaxJoints, data);
    std::vector<int> depth(m.joints.size(), 1);
    for (std::size_t i = 0; i < m.joints.size(); ++i) {
        const BvhJoint& j = m.joints[i];
        if (i == 0) {
            SLANIM_FUZZ_CHECK(j.parent == -1, data);
        } else {
            SLANIM_FUZZ_CHECK(j.parent >= 0 && static_cast<std::size_t>(j.parent) < i, data);
            depth[i] = depth[static_cast<std::size_t>(j.parent)] + 1;
            SLANIM_FUZZ_CHECK(depth[i] <= kBvhMaxDepth, data);
        }
        SLANIM_FUZZ_CHECK(!j.name.empty() && !is_blank(j.name.substr(0, 1)) &&
                              !is_blank(j.name.substr(j.name.size() - 1)) &&
                              !has_line_break(j.name),
                          data);
        SLANIM_FUZZ_CHECK(j.channels.size() <= 6, data);
        for (std::size_t a = 0; a < j.channels.size(); ++a)
            for (std::size_t b = a + 1; b < j.channels.size(); ++b)
                SLANIM_FUZZ_CHECK(j.channels[a] != j.channels[b], data);
        SLANIM_FUZZ_CHECK(std::isfinite(j.offset.x) && std::isfinite(j.offset.y) &&
                              std::isfinite(j.offset.z),
                          data);
        SLANIM_FUZZ_CHECK(std::isfinite(j.end_site_offset.x) &&
                              std::isfinite(j.end_site_offset.y) &&
                              std::isfinite(j.end_site_offset.z),
                          data);
        SLANIM_FUZZ_CHECK(j.has_end_site || j.end_site_offset == Vec3{}, data);
        SLANIM_FUZZ_CHECK(j.line >= 1, data);
    }
    SLANIM_FUZZ_CHECK(m.num_frames >= 1 && m.num_frames <= kBvhMaxFrames, data);
    SLANIM_FUZZ_CHECK(std::isfinite(m.frame_time) && m.frame_time > 0.f, data);
    SLANIM_FUZZ_CHECK(m.values.size() ==
                          static_cast<std::size_t>(m.num_frames) * m.total_channels(),
                      data);
    for (const float v : m.values) SLANIM_FUZZ_CHECK(std::isfinite(v), data);
    for (const std::string& l : m.trailing_lines)
        SLANIM_FUZZ_CHECK(!is_blank(l) && !has_line_break(l), data);
}

std::string to_crlf(const std::string& s) {
    std::string out;
    out.reserve(s.size() + s.size() / 8);
    for (const char c : s) {
        if (c == '\n') out += '\r';
        out += c;
    }
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    const std::string_view data(reinterpret_cast<const char*>(bytes), size);
    const Result<BvhMotion> r = parse_bvh(data);
    if (!r.ok()) {
        check_error(r.error(), data);
        return 0;
    }
    const BvhMotion& m = r.value();
    check_motion(m, data);

    const std::string written = write_bvh(m);
    const Result<BvhMotion> again = parse_bvh(written);
    SLANIM_FUZZ_CHECK(again.ok(), data);
    SLANIM_FUZZ_CHECK(again.value() == m, data);
    SLANIM_FUZZ_CHECK(write_bvh(again.value()) == written, data);

    const Result<BvhMotion> crlf = parse_bvh(to_crlf(written));
    SLANIM_FUZZ_CHECK(crlf.ok() && crlf.value() == m, data);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Seed corpus generator: `slanim_fuzz_bvh -write_seeds=DIR`.

namespace {

constexpr std::string_view kBase =
    "HIERARCHY\n"
    "ROOT hip\n"
    "{\n"
    "\tOFFSET 0.00 0.00 0.00\n"
    "\tCHANNELS 6 Xposition Yposition Zposition Xrotation Zrotation Yrotation\n"
    "\tJOINT abdomen\n"
    "\t{\n"
    "\t\tOFFSET 0.000000 3.422050 0.000000\n"
    "\t\tCHANNELS 3 Xrotation Zrotation Yrotation\n"
    "\t\tEnd Site\n"
    "\t\t{\n"
    "\t\t\tOFFSET 0.000000 3.148289 0.000000\n"
    "\t\t}\n"
    "\t}\n"
    "\tJOINT lThigh\n"
    "\t{\n"
    "\t\tOFFSET 5.308129 -1.633274 1.361059\n"
    "\t\tCHANNELS 3 Zrotation Yrotation Xrotation\n"
    "\t}\n"
    "}\n"
    "MOTION\n"
    "Frames:\t3\n"
    "Frame Time: 0.033333\n"
    "0 43.5 0 0 0 0 0 0 0 0 0 0\n"
    "1.5 -0 +2 1e-5 -1E+2 .5 3. 10 20 30 -45 90\n"
    "0 43.5 0 0 0 0 0 0 0 0 0 0\n";

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
    for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
        s.replace(p, from.size(), to);
    return s;
}

std::vector<std::pair<std::string, std::string>> seeds() {
    std::vector<std::pair<std::string, std::string>> out;
    const std::string base(kBase);
    out.emplace_back("base.bvh", base);
    out.emplace_back("crlf.bvh", replace_all(base, "\n", "\r\n"));
    out.emplace_back("cr.bvh", replace_all(base, "\n", "\r"));
    out.emplace_back("mixed_eol_bom.bvh",
                     "\xEF\xBB\xBF" + replace_all(replace_all(base, "}\n", "}\r\n"), "MOTION\n",
                                                  "MOTION\r"));
    out.emplace_back("wrapped_frames.bvh",
                     replace_all(replace_all(base, " 0 0 0 0 0 0\n", "\n 0 0 0\n\n0 0 0\n"),
                                 "-45 90\n", "-45\n\t90\n"));
    out.emplace_back("trailing_lines.bvh",
                     base + "\n10 1 14 29 59 \n--------- readme.txt----------\n\n\tLEAVE ME "
                            "HERE\n");
    out.emplace_back(
        "flexible_header.bvh",
        replace_all(replace_all(replace_all(base, "Frames:\t3", "  frames :3 "),
                                "Frame Time: 0.033333", "FRAME\tTIME:0.033333"),
                    "JOINT", "joint"));
    out.emplace_back("inline_braces_names.bvh",
                     replace_all(replace_all(replace_all(base, "JOINT abdomen\n\t{",
                                                         "JOINT my abdomen (SL) {"),
                                             "End Site\n\t\t{", "End Site {"),
                                 "ROOT hip\n{", "ROOT  hip \t{"));
    out.emplace_back(
        "channel_sets.bvh",
        "HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
        "JOINT a\n{\nOFFSET 0 1 0\nCHANNELS 6 Zrotation Yposition Xrotation Xposition "
        "Yrotation Zposition\nJOINT b\n{\nOFFSET 0 1 0\nCHANNELS 0\nEnd Site\n{\nOFFSET 0 0 1\n}"
        "\n}\n}\nJOINT c\n{\nOFFSET 0 1 0\nCHANNELS 2 Yrotation Xposition\n}\n"
        "End Site\n{\nOFFSET 1 2 3\n}\n}\nMOTION\nFrames: 2\nFrame Time: 1e-2\n"
        "1 2 3 4 5 6 7 8 9 10 11\n-1 -2 -3 -4 -5 -6 -7 -8 -9 -10 -11\n");
    out.emplace_back("zero_channels.bvh",
                     "HIERARCHY\nROOT r\n{\nOFFSET 0 0 0\nCHANNELS 0\n}\nMOTION\nFrames: 5\n"
                     "Frame Time: 0.5\nnote\n");
    // A few rejected files, so that the error paths start covered.
    out.emplace_back("short_frame.bvh", replace_all(base, "-45 90\n", "-45\n"));
    out.emplace_back("two_roots.bvh",
                     replace_all(base, "MOTION\n", "ROOT x\n{\nOFFSET 0 0 0\nCHANNELS 0\n}\nMOTION\n"));
    out.emplace_back("bad_channels.bvh", replace_all(base, "CHANNELS 3 Xrotation Zrotation Yrotation",
                                                     "CHANNELS 4 Xrotation Wrotation Xrotation"));
    return out;
}

std::vector<slanim::fuzz::Seed> seed_bytes() {
    std::vector<slanim::fuzz::Seed> out;
    for (auto& [name, text] : seeds()) out.emplace_back(name, std::vector<std::uint8_t>(text.begin(), text.end()));
    return out;
}

}  // namespace

// Runs before libFuzzer parses its flags: handles -write_seeds=DIR and exits.
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    slanim::fuzz::write_seeds_and_exit_if_asked(*argc, *argv, "slanim_fuzz_bvh", seed_bytes);
    return 0;
}
