// Mutation test over the real .anim files (an .anim comes from anyone, damaged or hostile): seeded
// byte flips, insertions, deletions and truncations of every file of SLANIM_SHARED_DIR/anims. Each
// mutant either reads as a motion the viewer would accept — and then plays, constraints and all,
// with finite poses — or is rejected with an error that names a byte offset. A crash, a hang
// (ctest's timeout) or a non-finite pose fails the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "slanim/core/clip.hpp"
#include "slanim/formats/anim.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/runtime/world.hpp"

namespace fs = std::filesystem;
using namespace slanim;

namespace {

std::vector<fs::path> real_anims() {
    std::vector<fs::path> files;
    const fs::path dir = fs::path(SLANIM_SHARED_DIR) / "anims";
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return files;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file() && e.path().extension() == ".anim") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    return files;
}

/// One mutation of `in`: 1–4 byte flips, an insertion of 1–16 random bytes, a deletion of 1–16
/// bytes, a truncation, or two of these.
std::vector<std::uint8_t> mutate(std::vector<std::uint8_t> b, std::mt19937& rng, std::string& what) {
    const auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n)(rng); };
    const int rounds = pick(3) == 0 ? 2 : 1;
    for (int r = 0; r < rounds; ++r) {
        switch (pick(3)) {
            case 0: {
                const std::size_t flips = 1 + pick(3);
                for (std::size_t i = 0; i < flips && !b.empty(); ++i) {
                    const std::size_t at = pick(b.size() - 1);
                    b[at] = static_cast<std::uint8_t>(b[at] ^ (1u << pick(7)));
                    what += " flip@" + std::to_string(at);
                }
                break;
            }
            case 1: {
                const std::size_t at = pick(b.size()), n = 1 + pick(15);
                std::vector<std::uint8_t> ins(n);
                for (auto& x : ins) x = static_cast<std::uint8_t>(pick(255));
                b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), ins.begin(), ins.end());
                what += " insert" + std::to_string(n) + "@" + std::to_string(at);
                break;
            }
            case 2: {
                if (b.empty()) break;
                const std::size_t at = pick(b.size() - 1), n = std::min(b.size() - at, 1 + pick(15));
                b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + n));
                what += " delete" + std::to_string(n) + "@" + std::to_string(at);
                break;
            }
            default: {
                const std::size_t len = pick(b.size());
                b.resize(len);
                what += " truncate@" + std::to_string(len);
                break;
            }
        }
    }
    return b;
}

bool finite(const ModelPose& p) {
    for (const Vec3& v : p.positions)
        if (!std::isfinite(v.x) || !std::isfinite(v.y) || !std::isfinite(v.z)) return false;
    for (const Quat& q : p.rotations)
        if (!std::isfinite(q.x) || !std::isfinite(q.y) || !std::isfinite(q.z) || !std::isfinite(q.w)) return false;
    return true;
}

}  // namespace

TEST(AnimMutation, EveryMutantIsRejectedWithAnOffsetOrPlaysFinite) {
    const std::vector<fs::path> files = real_anims();
    if (files.empty()) GTEST_SKIP() << "no .anim files in " << SLANIM_SHARED_DIR << "/anims (shared data absent)";
    std::vector<std::vector<std::uint8_t>> originals;
    for (const auto& f : files) {
        auto bytes = read_file_bytes(f.string());
        ASSERT_TRUE(bytes.ok()) << bytes.error().message;
        originals.push_back(std::move(*bytes));
    }
    const auto skeleton = Skeleton::default_skeleton();
    constexpr int kCases = 10000;
    constexpr std::uint32_t kSeed = 0x51A417u;  // fixed: every run checks the same mutants
    std::mt19937 rng(kSeed);
    int accepted = 0, rejected = 0;
    for (int c = 0; c < kCases; ++c) {
        const std::size_t fi = std::uniform_int_distribution<std::size_t>(0, files.size() - 1)(rng);
        std::string what;
        const std::vector<std::uint8_t> bytes = mutate(originals[fi], rng, what);
        const std::string label = files[fi].filename().string() + what + " (case " + std::to_string(c) + ")";
        const ParseResult parsed = parse_anim(bytes);
        if (!parsed.ok()) {
            ++rejected;
            const Diagnostic* e = parsed.first_error();
            ASSERT_NE(e, nullptr) << label;
            EXPECT_GE(e->offset, 0) << label << ": " << e->describe();
            EXPECT_LE(e->offset, static_cast<long long>(bytes.size())) << label << ": " << e->describe();
            continue;
        }
        ++accepted;
        const Motion motion = decode_motion(parsed.motion, *skeleton);
        const auto clip = MotionClip::build(motion, *skeleton, label);
        ASSERT_TRUE(clip) << label;
        World world;
        const Entity avatar = world.create_avatar(skeleton);
        world.controller(avatar).start(clip);
        // Through ease in, the body and (for loops) the wrap, at 10 Hz for up to 4 s.
        const float span = std::min(4.f, std::max(motion.duration, 0.f) + 0.5f);
        for (float t = 0.f; t < span; t += 0.1f) {
            world.step(0.1f);
            ASSERT_TRUE(finite(world.model_pose(avatar))) << label << " at " << t << " s";
        }
    }
    std::printf("mutants: %d cases over %zu files, %d accepted and played, %d rejected with an offset\n",
                kCases, files.size(), accepted, rejected);
    EXPECT_GT(accepted, 0);
    EXPECT_GT(rejected, 0);
}
