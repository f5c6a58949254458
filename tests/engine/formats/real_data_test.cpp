// SPDX-License-Identifier: MIT
// The .anim codec over the real files of the shared data folder (SLANIM_SHARED_DIR "/anims",
// read in place, never copied). Every test skips when that folder is absent.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "slanim/formats/anim.hpp"
#include "slanim/core/clip.hpp"
#include "slanim/core/sampling.hpp"
#include "slanim/core/math.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/formats/anim_codec.hpp"

#ifndef SLANIM_SHARED_DIR
#error "SLANIM_SHARED_DIR must name the shared data folder"
#endif

namespace slanim {
namespace {

namespace fs = std::filesystem;

const fs::path& anims_dir() {
    static const fs::path dir = fs::path(SLANIM_SHARED_DIR) / "anims";
    return dir;
}

struct AnimFile {
    std::string name;  // relative to anims_dir(), for messages
    std::vector<std::uint8_t> bytes;
};

// Every *.anim below anims_dir(), sorted by path, read once for all tests.
const std::vector<AnimFile>& anim_files() {
    static const std::vector<AnimFile> files = [] {
        std::vector<fs::path> paths;
        std::error_code ec;
        for (fs::recursive_directory_iterator it(anims_dir(), ec), end; !ec && it != end;
             it.increment(ec)) {
            if (it->is_regular_file() && it->path().extension() == ".anim")
                paths.push_back(it->path());
        }
        std::sort(paths.begin(), paths.end());
        std::vector<AnimFile> out;
        for (const fs::path& p : paths) {
            auto bytes = read_file_bytes(p.string());
            EXPECT_TRUE(bytes.ok()) << (bytes.ok() ? "" : bytes.error().describe());
            if (bytes.ok())
                out.push_back({fs::relative(p, anims_dir()).string(), std::move(bytes.value())});
        }
        return out;
    }();
    return files;
}

#define SLANIM_REQUIRE_ANIMS()                                                                  \
    do {                                                                                        \
        if (!fs::is_directory(anims_dir()))                                                     \
            GTEST_SKIP() << "../shared is absent: " << anims_dir().string()                     \
                         << " does not exist, so the real .anim files cannot be tested";        \
        ASSERT_FALSE(anim_files().empty()) << "no .anim file below " << anims_dir().string();   \
    } while (false)

std::string errors_of(const ParseResult& r) {
    std::string s;
    for (const auto& d : r.diagnostics)
        if (d.severity == Severity::Error) s += "\n  " + d.describe();
    return s;
}

bool has_rule(const ParseResult& r, const char* rule) {
    return std::any_of(r.diagnostics.begin(), r.diagnostics.end(),
                       [&](const Diagnostic& d) { return d.rule == rule; });
}

// True when `text` names "byte N" (and not a longer number that starts with N).
bool names_byte(const std::string& text, std::size_t n) {
    const std::string needle = "byte " + std::to_string(n);
    for (std::size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) {
        const std::size_t e = p + needle.size();
        if (e == text.size() || text[e] < '0' || text[e] > '9') return true;
    }
    return false;
}

// ---------------------------------------------------------------------------------------------

TEST(RealAnims, ParseWithoutErrorsAndWriteBackByteIdentical) {
    SLANIM_REQUIRE_ANIMS();
    std::cout << "[ files    ] " << anim_files().size() << " .anim files below "
              << anims_dir().string() << "\n";
    for (const AnimFile& f : anim_files()) {
        SCOPED_TRACE(f.name);
        const ParseResult r = parse_anim(f.bytes);
        ASSERT_TRUE(r.has_motion) << errors_of(r);
        EXPECT_TRUE(r.ok()) << errors_of(r);
        EXPECT_EQ(r.count(Severity::Error), 0u) << errors_of(r);
        const std::vector<std::uint8_t> out = write_anim(r.motion);
        EXPECT_EQ(out.size(), f.bytes.size());
        EXPECT_TRUE(out == f.bytes) << "write_anim(parse_anim(file)) differs from the file";
    }
}

TEST(RealAnims, DecodeBuildSampleAndReencode) {
    SLANIM_REQUIRE_ANIMS();
    const Skeleton& skel = *Skeleton::default_skeleton();
    for (const AnimFile& f : anim_files()) {
        SCOPED_TRACE(f.name);
        const ParseResult r = parse_anim(f.bytes);
        ASSERT_TRUE(r.ok()) << errors_of(r);
        const Motion m = decode_motion(r.motion, skel);
        ASSERT_EQ(m.joints.size(), r.motion.joints.size());
        EXPECT_LE(m.base_priority, 6);

        const auto clip = MotionClip::build(m, skel, f.name);
        ASSERT_NE(clip, nullptr);
        EXPECT_EQ(clip->duration(), m.duration);
        std::vector<int> animated;
        for (const MotionJoint& j : m.joints) {
            EXPECT_TRUE(std::is_sorted(j.rot_keys.begin(), j.rot_keys.end(),
                                       [](const RotKey& a, const RotKey& b) { return a.time < b.time; }));
            if (j.joint >= 0) animated.push_back(j.joint);
        }
        std::sort(animated.begin(), animated.end());
        animated.erase(std::unique(animated.begin(), animated.end()), animated.end());
        EXPECT_EQ(clip->tracks().size(), animated.size());  // one track per animated joint

        // Sample across the clip and a little outside it: every output is finite, rotations
        // unit length (over-long keys are normalized by the clip).
        SamplingCursor cursor;
        cursor.reset(*clip);
        std::vector<Quat> rots(clip->tracks().size());
        std::vector<Vec3> poss(clip->tracks().size());
        for (const float u : {-0.1f, 0.f, 0.13f, 0.5f, 0.77f, 1.f, 1.2f, 0.3f}) {
            SamplingJob job;
            job.clip = clip.get();
            job.time = u * m.duration;
            job.cursor = &cursor;
            job.rotations = rots;
            job.positions = poss;
            ASSERT_TRUE(job.run());
            for (std::size_t k = 0; k < clip->tracks().size(); ++k) {
                const ClipTrack& t = clip->tracks()[k];
                if (t.usage & kUsageRot) {
                    ASSERT_TRUE(is_finite(rots[k])) << "track " << k << " at " << job.time;
                    EXPECT_NEAR(dot(rots[k], rots[k]), 1.f, 1e-3f) << "track " << k;
                }
                if (t.usage & kUsagePos) {
                    ASSERT_TRUE(is_finite(poss[k])) << "track " << k;
                }
            }
        }

        // Load → save as the viewer does it (upload: deserialize, then serialize): the result
        // is a valid 1.0 file with the same keys, each code within the viewer's drift.
        const RawMotion enc = encode_motion(m);
        const std::vector<std::uint8_t> saved = write_anim(enc);
        const ParseResult r2 = parse_anim(saved);
        ASSERT_TRUE(r2.ok()) << errors_of(r2);
        ASSERT_EQ(r2.motion.joints.size(), r.motion.joints.size());
        if (r.motion.is_legacy() || has_rule(r, "duplicate-key-time") ||
            has_rule(r, "rot-key-overlong"))
            continue;  // keys merged, converted or renormalized: codes are not comparable
        for (std::size_t j = 0; j < r.motion.joints.size(); ++j) {
            const RawJoint& a = r.motion.joints[j];
            const RawJoint& b = r2.motion.joints[j];
            ASSERT_EQ(a.rot_keys.size(), b.rot_keys.size()) << "joint " << j;
            ASSERT_EQ(a.pos_keys.size(), b.pos_keys.size()) << "joint " << j;
            // Keys come back sorted by time: compare against the file's keys in time order.
            for (const bool rot : {true, false}) {
                std::vector<RawKey> ka = rot ? a.rot_keys : a.pos_keys;
                const std::vector<RawKey>& kb = rot ? b.rot_keys : b.pos_keys;
                std::stable_sort(ka.begin(), ka.end(),
                                 [](const RawKey& x, const RawKey& y) { return x.time < y.time; });
                for (std::size_t k = 0; k < ka.size(); ++k) {
                    // Time: one floor encode (≤ 1 LSB down); values: quantize16 then floor
                    // (≤ 2 LSB; spec §1.4). Rotations are also renormalized by packToVector3.
                    const int dt = int{kb[k].time} - int{ka[k].time};
                    const int dx = int{kb[k].x} - int{ka[k].x};
                    const int dy = int{kb[k].y} - int{ka[k].y};
                    const int dz = int{kb[k].z} - int{ka[k].z};
                    EXPECT_TRUE(dt >= -1 && dt <= 0) << "joint " << j << " key " << k;
                    EXPECT_TRUE(std::abs(dx) <= 2 && std::abs(dy) <= 2 && std::abs(dz) <= 2)
                        << "joint " << j << (rot ? " rotation" : " position") << " key " << k
                        << ": " << dx << " " << dy << " " << dz;
                }
                if (testing::Test::HasFailure()) return;  // one file's report is enough
            }
        }
    }
}

// Truncation points tested for a file of `size` bytes. Files up to 4 KiB: every offset
// 0..size−1. Larger files (to keep the suite fast): every offset in the first 2 KiB (the
// header and the first joints: every field kind), then every 7th byte (a stride coprime with
// the 8-byte keys and 4-byte fields, so it lands on every position within a key), and the last
// 64 offsets (the constraint block and the file's end).
std::vector<std::size_t> truncation_points(std::size_t size) {
    std::vector<std::size_t> pts;
    if (size <= 4096) {
        for (std::size_t n = 0; n < size; ++n) pts.push_back(n);
        return pts;
    }
    for (std::size_t n = 0; n < 2048; ++n) pts.push_back(n);
    for (std::size_t n = 2048; n < size - 64; n += 7) pts.push_back(n);
    for (std::size_t n = size - 64; n < size; ++n) pts.push_back(n);
    return pts;
}

TEST(RealAnims, EveryTruncationIsAnErrorNamingTheTruncationPoint) {
    SLANIM_REQUIRE_ANIMS();
    std::size_t parsed = 0;
    for (const AnimFile& f : anim_files()) {
        SCOPED_TRACE(f.name);
        const ParseResult full = parse_anim(f.bytes);
        ASSERT_TRUE(full.ok()) << errors_of(full);
        // Bytes the reader ignores (trailing bytes, ignored constraint data) may be cut without
        // an error: only the prefix up to the last field read must be complete.
        const std::size_t structural_end = f.bytes.size() - full.motion.trailing.size();
        int failures = 0;
        for (const std::size_t n : truncation_points(f.bytes.size())) {
            const ParseResult r = parse_anim(std::span<const std::uint8_t>(f.bytes.data(), n));
            ++parsed;
            std::string problem;
            if (n >= structural_end) {
                if (!r.ok()) problem = "a cut in the ignored trailing bytes is an error:" + errors_of(r);
            } else if (r.ok() || r.has_motion) {
                problem = "accepted";
            } else {
                const auto it = std::find_if(r.diagnostics.begin(), r.diagnostics.end(),
                                             [](const Diagnostic& d) { return d.rule == "truncated"; });
                if (it == r.diagnostics.end())
                    problem = "no [truncated] diagnostic:" + errors_of(r);
                else if (it->severity != Severity::Error || !names_byte(it->describe(), n))
                    problem = "the diagnostic does not name byte " + std::to_string(n) + ": " +
                              it->describe();
                else if (it->offset < 0 || static_cast<std::size_t>(it->offset) > n)
                    problem = "the offending field starts after the end: " + it->describe();
            }
            if (!problem.empty()) {
                ADD_FAILURE() << "truncated at byte " << n << " of " << f.bytes.size() << ": "
                              << problem;
                if (++failures == 5) break;
            }
        }
    }
    std::cout << "[ truncate ] " << parsed << " truncated parses\n";
}

TEST(RealAnims, ValidateAllSummary) {
    SLANIM_REQUIRE_ANIMS();
    // Playback (allow_invalid_joints = true) and upload (false) validation of every file.
    std::map<std::string, int> playback, upload_errors;
    int files_with_warnings = 0, rejected_for_upload = 0;
    ParseOptions upload;
    upload.allow_invalid_joints = false;
    for (const AnimFile& f : anim_files()) {
        const ParseResult r = parse_anim(f.bytes);
        EXPECT_EQ(r.count(Severity::Error), 0u) << f.name << errors_of(r);
        files_with_warnings += r.count(Severity::Warning) > 0;
        for (const Diagnostic& d : r.diagnostics) ++playback[d.rule];
        const ParseResult u = parse_anim(f.bytes, upload);
        rejected_for_upload += !u.ok();
        for (const Diagnostic& d : u.diagnostics)
            if (d.severity == Severity::Error) ++upload_errors[d.rule];
        // Upload only adds errors for unknown joints.
        for (const Diagnostic& d : u.diagnostics) {
            if (d.severity == Severity::Error) {
                EXPECT_EQ(d.rule, "joint-unknown") << f.name << ": " << d.describe();
            }
        }
    }
    std::cout << "[ validate ] " << anim_files().size() << " files, " << files_with_warnings
              << " with warnings, " << rejected_for_upload << " rejected for upload\n";
    for (const auto& [rule, n] : playback) {
        std::cout << "[ validate ]   warning " << rule << ": " << n << "\n";
        RecordProperty("warning." + rule, n);
    }
    for (const auto& [rule, n] : upload_errors) {
        std::cout << "[ validate ]   upload error " << rule << ": " << n << "\n";
        RecordProperty("upload_error." + rule, n);
    }
    RecordProperty("files", static_cast<int>(anim_files().size()));
}

// Re-encoding a decoded motion moves some codes by two U16 steps, and that is the viewer's own
// quantization, not an encoder slip: LLKeyframeMotion::serialize takes packToVector3 of the
// decoded key, rounds it through LLVector3::quantize16 (F32_to_U16 then U16_to_F32) and then
// floors it with F32_to_U16 again. F32_to_U16 floors, and U16_to_F32 of a code, scaled back, can
// land just below that code: each of the two floors may drop a step. A float32 emulation of those
// viewer functions (outside the project) gives, for Kneel_2's mWristLeft rotation key 58,
// (26265, 23617, 23514) → (26265, 23615, 23514) and 83 two-step moves in that file — the codes
// slanim's encode_motion writes.
TEST(AnimRealData, ReencodingMovesSomeCodesTwoStepsLikeTheViewer) {
    const fs::path file = fs::path(SLANIM_SHARED_DIR) / "anims" / "opencollar" / "Kneel_2.anim";
    if (!fs::exists(file)) GTEST_SKIP() << "no " << file << " (real test data in ../shared)";
    auto bytes = read_file_bytes(file.string());
    ASSERT_TRUE(bytes.ok());
    const ParseResult pr = parse_anim(*bytes);
    ASSERT_TRUE(pr.ok());
    const auto sk = Skeleton::default_skeleton();
    const RawMotion again = encode_motion(decode_motion(pr.motion, *sk));
    ASSERT_EQ(again.joints.size(), pr.motion.joints.size());
    int two_steps = 0, worse = 0;
    for (std::size_t j = 0; j < again.joints.size(); ++j) {
        const auto& a = pr.motion.joints[j].rot_keys;
        const auto& b = again.joints[j].rot_keys;
        ASSERT_EQ(a.size(), b.size());
        for (std::size_t k = 0; k < a.size(); ++k) {
            const int d = std::min({int{b[k].x} - a[k].x, int{b[k].y} - a[k].y, int{b[k].z} - a[k].z});
            two_steps += d == -2;
            worse += d < -2 || std::max({int{b[k].x} - a[k].x, int{b[k].y} - a[k].y, int{b[k].z} - a[k].z}) > 0;
        }
        if (pr.motion.joints[j].name == "mWristLeft") {
            ASSERT_GT(b.size(), 58u);
            EXPECT_EQ(a[58].y, 23617);
            EXPECT_EQ(b[58].y, 23615);
            EXPECT_EQ(b[58].x, a[58].x);
            EXPECT_EQ(b[58].z, a[58].z);
        }
    }
    EXPECT_EQ(two_steps, 83);
    EXPECT_EQ(worse, 0);  // never up, never more than two steps down
}

}  // namespace
}  // namespace slanim
