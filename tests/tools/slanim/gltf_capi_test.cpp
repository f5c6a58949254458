// SPDX-License-Identifier: MIT
// slanim_gltf_to_anim (slanim/slanim_gltf.h, slanim::gltf_capi): the .anim bytes equal what
// `slanim convert IN -o OUT.anim` writes, for a .glb slanim exported (its source .anim back) and
// for the same file without the source .anim (the glTF keys imported); bad bytes fail with a message.
#include <gtest/gtest.h>
#include <tiny_gltf.h>

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

}  // namespace
