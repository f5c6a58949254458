// SPDX-License-Identifier: MIT
// slanim_gltf_to_anim (slanim/slanim_gltf.h, slanim::gltf_capi): the .anim bytes equal what
// `slanim convert IN -o OUT.anim` writes, for a .glb slanim exported (its source .anim back) and
// for the same file without the source .anim (the glTF keys imported); bad bytes fail with a message.
// slanim_anim_to_glb: the .glb equals what `slanim convert NAME.anim -o OUT.glb` writes, for
// every reference .anim and an edited one; bad bytes fail with a message and write nothing.
#include <gtest/gtest.h>
#include <tiny_gltf.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/gltf/import.hpp"
#include "slanim/slanim_gltf.h"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
using namespace slanim;
using slanim::test::run_slanim;
using slanim::test::TempDir;

namespace {

const fs::path kShared = SLANIM_SHARED_DIR;

std::vector<std::uint8_t> bytes_of(const std::string& path) {
    auto b = read_file_bytes(path);
    EXPECT_TRUE(static_cast<bool>(b)) << path;
    return b ? *b : std::vector<std::uint8_t>{};
}

/// slanim_gltf_to_anim through its two calls (size, then bytes).
std::vector<std::uint8_t> c_import(const std::vector<std::uint8_t>& in, slanim_status* status) {
    std::size_t needed = 0;
    *status = slanim_gltf_to_anim(in.data(), in.size(), nullptr, 0, &needed);
    if (*status != SLANIM_ERROR_BUFFER_TOO_SMALL) return {};
    std::vector<std::uint8_t> out(needed);
    *status = slanim_gltf_to_anim(in.data(), in.size(), out.data(), out.size(), &needed);
    return out;
}

TEST(GltfCApi, ImportEqualsSlanimConvertWithAndWithoutTheSourceAnim) {
    const std::string anim = (kShared / "anims/linden/DANCE1.anim").string();
    if (!fs::exists(anim)) GTEST_SKIP() << anim << " is absent (../shared)";
    TempDir dir;
    const std::string glb = dir / "dance.glb";
    ASSERT_EQ(run_slanim({"convert", anim, "-o", glb}).code, 0);

    // The exported .glb: the source .anim comes back.
    const std::string cli_anim = dir / "cli.anim";
    ASSERT_EQ(run_slanim({"convert", glb, "-o", cli_anim}).code, 0);
    slanim_status st = SLANIM_OK;
    const auto from_glb = c_import(bytes_of(glb), &st);
    ASSERT_EQ(st, SLANIM_OK) << slanim_last_error();
    EXPECT_EQ(from_glb, bytes_of(cli_anim));

    // Without the source .anim (binary and JSON with embedded buffers): the glTF keys imported.
    tinygltf::TinyGLTF io;
    tinygltf::Model m;
    std::string e, w;
    ASSERT_TRUE(io.LoadBinaryFromFile(&m, &e, &w, glb)) << e;
    tinygltf::Value::Object ex = m.animations.at(0).extras.Get<tinygltf::Value::Object>();
    ASSERT_EQ(ex.erase(gltf::kSourceAnimKey), 1u);
    m.animations[0].extras = tinygltf::Value(std::move(ex));
    for (const bool binary : {true, false}) {
        const std::string stripped = dir / (binary ? "stripped.glb" : "stripped.gltf");
        ASSERT_TRUE(io.WriteGltfSceneToFile(&m, stripped, true, true, !binary, binary));
        const std::string want = dir / (binary ? "stripped_glb.anim" : "stripped_gltf.anim");
        ASSERT_EQ(run_slanim({"convert", stripped, "-o", want}).code, 0) << stripped;
        const auto got = c_import(bytes_of(stripped), &st);
        ASSERT_EQ(st, SLANIM_OK) << slanim_last_error();
        EXPECT_EQ(got, bytes_of(want)) << stripped;
        EXPECT_NE(got, from_glb);  // re-encoded from the keys, not the source file
    }
}

TEST(GltfCApi, BadBytesFailWithAMessage) {
    const std::vector<std::uint8_t> junk = {'g', 'l', 'T', 'F', 2, 0, 0, 0, 99, 0, 0, 0};
    slanim_status st = SLANIM_OK;
    c_import(junk, &st);
    EXPECT_EQ(st, SLANIM_ERROR_INVALID_DATA);
    EXPECT_NE(std::string(slanim_last_error()).find("slanim_gltf_to_anim"), std::string::npos) << slanim_last_error();
    std::size_t needed = 0;
    EXPECT_EQ(slanim_gltf_to_anim(junk.data(), junk.size(), nullptr, 0, nullptr), SLANIM_ERROR_NULL_ARGUMENT);
    EXPECT_EQ(slanim_gltf_to_anim(nullptr, 4, nullptr, 0, &needed), SLANIM_ERROR_NULL_ARGUMENT);
}

/// slanim_anim_to_glb through its two calls (size, then bytes).
std::vector<std::uint8_t> c_export(const std::vector<std::uint8_t>& in, const char* name, slanim_status* status) {
    std::size_t needed = 0;
    *status = slanim_anim_to_glb(in.data(), in.size(), name, nullptr, 0, &needed);
    if (*status != SLANIM_ERROR_BUFFER_TOO_SMALL) return {};
    std::vector<std::uint8_t> out(needed);
    *status = slanim_anim_to_glb(in.data(), in.size(), name, out.data(), out.size(), &needed);
    return out;
}

TEST(GltfCApi, AnimToGlbEqualsSlanimConvertForEveryReferenceAnim) {
    const fs::path anims = kShared / "anims";
    if (!fs::exists(anims)) GTEST_SKIP() << anims << " is absent (../shared)";
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(anims))
        if (e.path().extension() == ".anim") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    ASSERT_GE(files.size(), 100u);
    TempDir dir;
    for (const fs::path& f : files) {
        const std::string want = dir / "cli.glb";
        ASSERT_EQ(run_slanim({"convert", f.string(), "-o", want}).code, 0) << f;
        slanim_status st = SLANIM_OK;
        const auto anim = bytes_of(f.string());
        const auto got = c_export(anim, f.filename().string().c_str(), &st);
        ASSERT_EQ(st, SLANIM_OK) << f << ": " << slanim_last_error();
        ASSERT_EQ(got, bytes_of(want)) << f;
        // The .glb gives its .anim back (the source .anim in the extras).
        ASSERT_EQ(c_import(got, &st), anim) << f;
    }
}

TEST(GltfCApi, AnimToGlbOfAnEditedAnimEqualsSlanimEditThenConvert) {
    const std::string anim = (kShared / "anims/linden/DANCE1.anim").string();
    if (!fs::exists(anim)) GTEST_SKIP() << anim << " is absent (../shared)";
    TempDir dir;
    const std::string edited = dir / "DANCE1.anim";
    ASSERT_EQ(run_slanim({"edit", anim, "-o", edited, "--priority", "5", "--ease-in", "0.5", "--mirror"}).code, 0);
    const std::string want = dir / "DANCE1.glb";
    ASSERT_EQ(run_slanim({"convert", edited, "-o", want}).code, 0);
    slanim_status st = SLANIM_OK;
    const auto got = c_export(bytes_of(edited), "DANCE1.anim", &st);
    ASSERT_EQ(st, SLANIM_OK) << slanim_last_error();
    EXPECT_EQ(got, bytes_of(want));
    // Another name: another animation name and comment, so other bytes.
    EXPECT_NE(c_export(bytes_of(edited), "other.anim", &st), got);
    EXPECT_EQ(st, SLANIM_OK);
}

TEST(GltfCApi, AnimToGlbRefusesBadBytesAndWritesNothing) {
    const std::string anim = (kShared / "anims/linden/DANCE1.anim").string();
    if (!fs::exists(anim)) GTEST_SKIP() << anim << " is absent (../shared)";
    const auto dance = bytes_of(anim);
    std::vector<std::uint8_t> junk(3000);
    for (std::size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<std::uint8_t>((i * 7919 + 13) & 255);
    const std::vector<std::uint8_t> truncated(dance.begin(), dance.begin() + 400);
    const std::vector<std::uint8_t> empty;
    struct Case {
        const char* what;
        const std::vector<std::uint8_t>& bytes;
        const char* message;  // a part of slanim_last_error()
    };
    for (const Case& c : {Case{"empty", empty, "size 0"}, Case{"truncated", truncated, "at byte 393"},
                          Case{"junk", junk, "[version]"}}) {
        std::vector<std::uint8_t> out(1 << 20, 0xAB);
        std::size_t needed = 12345;
        const slanim_status st = slanim_anim_to_glb(c.bytes.data(), c.bytes.size(), "x.anim", out.data(), out.size(), &needed);
        EXPECT_EQ(st, SLANIM_ERROR_INVALID_DATA) << c.what;
        const std::string msg = slanim_last_error();
        EXPECT_NE(msg.find("slanim_anim_to_glb: "), std::string::npos) << c.what << ": " << msg;
        EXPECT_NE(msg.find(c.message), std::string::npos) << c.what << ": " << msg;
        EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](std::uint8_t b) { return b == 0xAB; })) << c.what;
        EXPECT_EQ(needed, 12345u) << c.what;  // nothing to report: no output
    }
    // Arguments: a null pointer with a size, no name, no `needed`; a buffer too small is left as it was.
    std::size_t needed = 0;
    EXPECT_EQ(slanim_anim_to_glb(nullptr, 10, "x.anim", nullptr, 0, &needed), SLANIM_ERROR_NULL_ARGUMENT);
    EXPECT_EQ(slanim_anim_to_glb(nullptr, 0, "x.anim", nullptr, 0, &needed), SLANIM_ERROR_INVALID_DATA);
    EXPECT_EQ(slanim_anim_to_glb(dance.data(), dance.size(), nullptr, nullptr, 0, &needed), SLANIM_ERROR_NULL_ARGUMENT);
    EXPECT_EQ(slanim_anim_to_glb(dance.data(), dance.size(), "x.anim", nullptr, 0, nullptr), SLANIM_ERROR_NULL_ARGUMENT);
    ASSERT_EQ(slanim_anim_to_glb(dance.data(), dance.size(), "x.anim", nullptr, 0, &needed), SLANIM_ERROR_BUFFER_TOO_SMALL);
    std::vector<std::uint8_t> small(needed - 1, 0xAB);
    EXPECT_EQ(slanim_anim_to_glb(dance.data(), dance.size(), "x.anim", small.data(), small.size(), &needed),
              SLANIM_ERROR_BUFFER_TOO_SMALL);
    EXPECT_TRUE(std::all_of(small.begin(), small.end(), [](std::uint8_t b) { return b == 0xAB; }));
    EXPECT_EQ(needed, small.size() + 1);
}

}  // namespace
