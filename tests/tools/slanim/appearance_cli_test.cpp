// SPDX-License-Identifier: MIT
// `slanim info` on the appearance files: .llm meshes (layout from avatar_lad.xml), LLWearable
// .dat assets and avatar_lad.xml; text, -v and json; errors with byte offsets.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"

namespace slanim {
namespace {

namespace fs = std::filesystem;

const fs::path kShared = SLANIM_SHARED_DIR;

#define SKIP_WITHOUT_SHARED()                                                                 \
    do {                                                                                      \
        std::error_code ec_;                                                                  \
        if (!fs::is_directory(kShared / "sl-character", ec_) || !fs::is_directory(kShared / "wearables", ec_)) \
            GTEST_SKIP() << "the shared reference folder (../shared) is absent: " << kShared.string(); \
    } while (false)

TEST(AppearanceCli, MeshesDefinitionAndWearables) {
    SKIP_WITHOUT_SHARED();
    const std::string head = (kShared / "sl-character/avatar_head.llm").string();
    const std::string lod = (kShared / "sl-character/avatar_head_1.llm").string();
    const std::string lad = (kShared / "sl-character/avatar_lad.xml").string();
    const std::string eyes = (kShared / "wearables/base_eyes.dat").string();
    test::CliRun r = test::run_slanim({"info", head, lod, lad, eyes});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("avatar_head.llm: base mesh (avatar_lad.xml) | 1132 vertices, 1844 faces | 2 skin joints "
                         "(mHead mNeck) | 95 morphs"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("avatar_head_1.llm: LOD mesh (avatar_lad.xml) | 1290 faces"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("704 params (255 morph, 83 skeleton, 164 driver, 108 color, 94 alpha) | 31 meshes | 55 "
                         "attachment points"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("base_eyes.dat: LLWearable v22 eyes \"New Eyes\" | 2 params | 1 textures"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("  morph "), std::string::npos);

    r = test::run_slanim({"info", "-v", head, eyes});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("  morph Express_Smile ("), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  texture 3 6522e74d-1660-4e7f-b601-6f48c1659a77"), std::string::npos) << r.out;

    r = test::run_slanim({"info", "--format", "json", "-v", head, lad});
    ASSERT_EQ(r.code, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j.size(), 2u);
    EXPECT_EQ(j[0]["layout"], "base");
    EXPECT_EQ(j[0]["vertices"], 1132);
    EXPECT_EQ(j[0]["morph_list"].size(), 95u);
    EXPECT_EQ(j[1]["params_by_kind"]["driver"], 164);
}

TEST(AppearanceCli, DamagedFilesAreErrors) {
    SKIP_WITHOUT_SHARED();
    const fs::path dir = fs::temp_directory_path() / ("slanim_appearance_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ifstream in(kShared / "sl-character/avatar_eyelashes.llm", std::ios::binary);
    std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    bytes.resize(1000);  // no avatar_lad.xml here: base is tried, then LOD
    const fs::path cut = dir / "cut.llm";
    std::ofstream(cut, std::ios::binary) << bytes;
    const fs::path bad = dir / "bad.dat";
    std::ofstream(bad) << "LLWearable version 22\nname\n\n\tpermissions 7\n";
    test::CliRun r = test::run_slanim({"info", cut.string(), bad.string()});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("cut.llm: truncated"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("(at byte "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("bad.dat: line 4: permissions version 7"), std::string::npos) << r.err;
    fs::remove_all(dir);
}

}  // namespace
}  // namespace slanim
