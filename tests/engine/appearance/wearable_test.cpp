// SPDX-License-Identifier: MIT
// `LLWearable version 22` reader and writer: every shipped .dat, the viewer's tolerances
// (CRLF, tabs/blanks, blank lines, legacy keywords), the viewer's terse weight format, round
// trips, and malformed lines giving their line numbers.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "slanim/appearance/wearable.hpp"

namespace slanim {
namespace {

const std::filesystem::path kWearablesDir = SLANIM_SHARED_DIR "/wearables";

std::string read_text(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string replace(std::string s, std::string_view from, std::string_view to) {
    const std::size_t p = s.find(from);
    EXPECT_NE(p, std::string::npos) << from;
    if (p != std::string::npos) s.replace(p, from.size(), to);
    return s;
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
    for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
        s.replace(p, from.size(), to);
    return s;
}

TEST(WearableShipped, EveryDatParsesAndRoundTrips) {
    std::error_code ec;
    if (!std::filesystem::is_directory(kWearablesDir, ec))
        GTEST_SKIP() << "the shared reference folder (../shared) is absent: " << kWearablesDir.string()
                     << " not found";
    int files = 0;
    for (const auto& e : std::filesystem::directory_iterator(kWearablesDir)) {
        if (e.path().extension() != ".dat") continue;  // the .xml files are asset-set indexes
        SCOPED_TRACE(e.path().filename().string());
        ++files;
        const Result<Wearable> w = load_wearable(e.path());
        ASSERT_TRUE(w.ok()) << w.error().describe();
        EXPECT_EQ(w->version, 22);
        EXPECT_FALSE(w->name.empty());
        EXPECT_TRUE(w->description.empty());
        EXPECT_EQ(w->sale_info.sale_type, "not");
        EXPECT_EQ(w->sale_info.sale_price, 10);
        const std::string text = write_wearable(*w);
        const Result<Wearable> again = parse_wearable(text);
        ASSERT_TRUE(again.ok()) << again.error().describe();
        EXPECT_EQ(*again, *w);
        // The viewer's exportStream form: the shipped files are exactly that, up to a final
        // blank line some of them have.
        std::string original = read_text(e.path());
        while (original.size() > 1 && original.ends_with("\n\n")) original.pop_back();
        EXPECT_EQ(text, original);
    }
    EXPECT_EQ(files, 10);
}

TEST(WearableShipped, SpotChecks) {
    std::error_code ec;
    if (!std::filesystem::is_directory(kWearablesDir, ec)) GTEST_SKIP() << "../shared/wearables not found";
    Result<Wearable> shape = load_wearable(kWearablesDir / "base_shape.dat");
    ASSERT_TRUE(shape.ok()) << shape.error().describe();
    EXPECT_EQ(shape->name, "New Shape");
    EXPECT_EQ(shape->type, WearableType::Shape);
    EXPECT_EQ(shape->params.size(), 142u);
    EXPECT_EQ(shape->params[25], (std::pair<int, float>{29, 0.12f}));
    EXPECT_EQ(shape->params[31], (std::pair<int, float>{36, -0.5f}));
    EXPECT_EQ(shape->permissions.base_mask, 0x7fffffffu);
    EXPECT_EQ(shape->permissions.next_owner_mask, 0x00082000u);
    EXPECT_EQ(shape->permissions.creator_id, "11111111-1111-0000-0000-000100bba000");
    EXPECT_EQ(shape->permissions.last_owner_id, std::string(kNullUuid));
    Result<Wearable> skin = load_wearable(kWearablesDir / "base_skin.dat");
    ASSERT_TRUE(skin.ok());
    EXPECT_EQ(skin->name, "Sexy - Female Skin");
    EXPECT_EQ(skin->type, WearableType::Skin);
    ASSERT_EQ(skin->textures.size(), 3u);
    EXPECT_EQ(skin->textures[1], (std::pair<int, std::string>{5, "00000000-0000-1111-9999-000000000010"}));
    Result<Wearable> pants = load_wearable(kWearablesDir / "newpants.dat");
    ASSERT_TRUE(pants.ok());
    EXPECT_EQ(pants->type, WearableType::Pants);
    EXPECT_STREQ(wearable_type_name(pants->type), "pants");
    EXPECT_STREQ(wearable_type_name(WearableType::Universal), "universal");
    EXPECT_STREQ(wearable_type_name(static_cast<WearableType>(17)), "invalid");
}

constexpr std::string_view kEyes =
    "LLWearable version 22\n"
    "New Eyes\n"
    "\n"
    "\tpermissions 0\n"
    "\t{\n"
    "\t\tbase_mask\t7fffffff\n"
    "\t\towner_mask\t7fffffff\n"
    "\t\tgroup_mask\t00000000\n"
    "\t\teveryone_mask\t00000000\n"
    "\t\tnext_owner_mask\t00082000\n"
    "\t\tcreator_id\t11111111-1111-0000-0000-000100bba000\n"
    "\t\towner_id\t11111111-1111-0000-0000-000100bba000\n"
    "\t\tlast_owner_id\t00000000-0000-0000-0000-000000000000\n"
    "\t\tgroup_id\t00000000-0000-0000-0000-000000000000\n"
    "\t}\n"
    "\tsale_info\t0\n"
    "\t{\n"
    "\t\tsale_type\tnot\n"
    "\t\tsale_price\t10\n"
    "\t}\n"
    "type 3\n"
    "parameters 2\n"
    "98 0\n"
    "99 .5\n"
    "textures 1\n"
    "3 6522e74d-1660-4e7f-b601-6f48c1659a77\n";

TEST(Wearable, Tolerances) {
    const Result<Wearable> base = parse_wearable(kEyes);
    ASSERT_TRUE(base.ok()) << base.error().describe();
    EXPECT_EQ(write_wearable(*base), kEyes);

    // CRLF line ends, blanks instead of tabs, blank lines between entries, trailing text.
    std::string loose = replace_all(std::string(kEyes), "\n", "\r\n");
    loose = replace_all(loose, "\t", "  ");
    loose = replace(loose, "98 0\r\n", "\r\n\r\n98   0 \r\n\r\n");
    loose = replace(loose, "6f48c1659a77", "6f48c1659a77 trailing words");
    loose += "\r\nanything after the textures block\r\n";
    Result<Wearable> w = parse_wearable(loose);
    ASSERT_TRUE(w.ok()) << w.error().describe();
    EXPECT_EQ(*w, *base);

    // Legacy keywords: creator_mask, sale perm_mask (fair-use fix), group_owned; unknown
    // keywords and sale types.
    std::string legacy = replace(std::string(kEyes), "base_mask", "creator_mask");
    legacy = replace(legacy, "\t\tgroup_id", "\t\tfrobnicate\t7\n\t\tgroup_owned\t1\n\t\tgroup_id");
    legacy = replace(legacy, "sale_type\tnot", "sale_type\tbogus\n\t\tperm_mask\t00000000");
    legacy = replace(legacy, "sale_price\t10", "sale_price\t-4");
    w = parse_wearable(legacy);
    ASSERT_TRUE(w.ok()) << w.error().describe();
    EXPECT_EQ(w->permissions.base_mask, 0x7fffffffu);
    EXPECT_TRUE(w->permissions.group_owned);
    EXPECT_EQ(w->permissions.next_owner_mask, 0x2000u);  // no copy → transfer added
    EXPECT_EQ(w->sale_info.sale_type, "not");
    EXPECT_EQ(w->sale_info.sale_price, 0);
    const Result<Wearable> again = parse_wearable(write_wearable(*w));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *w);

    // A description, an empty name, version 24 (the viewer's exception), newer is refused.
    w = parse_wearable(replace(replace(std::string(kEyes), "New Eyes\n\n", "\nmy description\n"), "version 22",
                               "version 24"));
    ASSERT_TRUE(w.ok()) << w.error().describe();
    EXPECT_EQ(w->name, "");
    EXPECT_EQ(w->description, "my description");
    EXPECT_EQ(w->version, 24);
}

// Found by slanim_fuzz_wearable: a description line ending in CR CR LF kept one CR, which the
// writer's LF line end then lost, so writing and reading again changed the wearable. Every CR
// before the LF is a line-end CR.
TEST(Wearable, NameAndDescriptionNeverEndInACarriageReturn) {
    const std::string text = replace(std::string(kEyes), "New Eyes\n\n", "New Eyes\r\r\nmy description\r\r\r\n");
    const Result<Wearable> w = parse_wearable(text);
    ASSERT_TRUE(w.ok()) << w.error().describe();
    EXPECT_EQ(w->name, "New Eyes");
    EXPECT_EQ(w->description, "my description");
    const Result<Wearable> again = parse_wearable(write_wearable(*w));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *w);
}

TEST(Wearable, TerseWeights) {
    Wearable w = *parse_wearable(kEyes);
    w.params = {{1, 0.f}, {2, 1.2f}, {3, 24.f}, {4, -0.59f}, {5, 0.59f}, {6, -0.f}, {7, 0.125f}, {8, 1e-7f}};
    const std::string text = write_wearable(w);
    EXPECT_NE(text.find("\n1 0\n2 1.2\n3 24\n4 -.59\n5 .59\n"), std::string::npos) << text;
    // Values the two-decimal form would change are written exactly.
    EXPECT_NE(text.find("\n7 0.125\n8 1e-07\n"), std::string::npos) << text;
    const Result<Wearable> back = parse_wearable(text);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, w);
}

void expect_error(const std::string& text, long long line, std::string_view what) {
    const Result<Wearable> r = parse_wearable(text);
    ASSERT_FALSE(r.ok()) << "expected: " << what;
    EXPECT_EQ(r.error().line, line) << r.error().message;
    EXPECT_EQ(r.error().offset, -1);
    EXPECT_EQ(r.error().message.rfind("line " + std::to_string(line) + ": ", 0), 0u) << r.error().message;
    EXPECT_NE(r.error().message.find(what), std::string::npos) << r.error().message;
}

TEST(Wearable, ErrorsWithLines) {
    const std::string e(kEyes);
    expect_error("", 1, "expected \"LLWearable version N\"");
    expect_error(replace(e, "LLWearable version 22", "LLWearable 22"), 1, "LLWearable version N");
    expect_error(replace(e, "version 22", "version 23"), 1, "newer");
    expect_error("LLWearable version 22", 2, "name line");
    expect_error("LLWearable version 22\nname\n", 3, "description");
    expect_error(replace(e, "New Eyes\n\n", "New Eyes\n"), 4, "description line");
    expect_error(replace(e, "permissions 0", "permissions 1"), 4, "permissions version 1");
    expect_error(replace(e, "owner_mask\t7fffffff", "owner_mask\t7ffxffff"), 7, "not a hexadecimal mask");
    expect_error(replace(e, "owner_id\t11111111-1111-0000-0000-000100bba000", "owner_id\tbob"), 12, "not a UUID");
    // An unclosed permissions block runs into the sale_info block's "}".
    expect_error(replace(e, "\t}\n\tsale_info", "\tsale_info"), 20, "expected \"sale_info 0\"");
    expect_error(e.substr(0, e.find("\t\tcreator_id")), 4, "not closed");
    expect_error(replace(e, "sale_info\t0", "sale_info\t2"), 16, "sale_info version 2");
    expect_error(replace(e, "type 3", "type 17"), 21, "wearable type 17");
    expect_error(replace(e, "type 3", " type 3"), 21, "expected \"type N\"");  // no leading blank, like sscanf
    expect_error(replace(e, "parameters 2", "parameters 1001"), 22, "limit of 1000");
    expect_error(replace(e, "parameters 2", "parameters -1"), 22, "negative");
    expect_error(replace(e, "99 .5", "99 abc"), 24, "ID WEIGHT");
    expect_error(replace(e, "99 .5", "99 nan"), 24, "finite");
    expect_error(replace(e, "parameters 2", "parameters 3"), 25, "ID WEIGHT");
    expect_error(replace(e, "textures 1", "texture 1"), 25, "expected \"textures N\"");
    expect_error(replace(e, "textures 1", "textures 101"), 25, "limit of 100");
    expect_error(replace(e, "textures 1", "textures 2"), 27, "texture 2 of 2");
    expect_error(replace(e, "\n3 6522e74d", "\n45 6522e74d"), 26, "texture index 45");
    expect_error(replace(e, "\n3 6522e74d", "\n-1 6522e74d"), 26, "texture index -1");
    expect_error(replace(e, "6522e74d-1660", "6522e74d+1660"), 26, "no valid UUID");
    // CRLF keeps the numbering.
    expect_error(replace_all(replace(e, "99 .5", "99 x"), "\n", "\r\n"), 24, "ID WEIGHT");
}

}  // namespace
}  // namespace slanim
