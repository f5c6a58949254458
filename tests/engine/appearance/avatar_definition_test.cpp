// SPDX-License-Identifier: MIT
// avatar_lad.xml reader: the shipped file's counts and spot checks against its text, the
// viewer's defaults (driven ramps, value_default clamping, label), unknown elements noted, and
// errors with line numbers.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>

#include "slanim/appearance/avatar_definition.hpp"

namespace slanim {
namespace {

const std::filesystem::path kCharacterDir = SLANIM_SHARED_DIR "/sl-character";

const AvatarDefinition* shipped() {
    static const Result<AvatarDefinition> def = load_avatar_definition(kCharacterDir);
    return def.ok() ? &def.value() : nullptr;
}

#define SKIP_WITHOUT_CHARACTER()                                                                   \
    do {                                                                                           \
        std::error_code ec_;                                                                       \
        if (!std::filesystem::is_directory(kCharacterDir, ec_))                                    \
            GTEST_SKIP() << "the shared reference folder (../shared) is absent: "                  \
                         << kCharacterDir.string() << " not found";                                \
        ASSERT_NE(shipped(), nullptr) << load_avatar_definition(kCharacterDir).error().describe(); \
    } while (false)

TEST(AvatarDefinitionShipped, Counts) {
    SKIP_WITHOUT_CHARACTER();
    const AvatarDefinition& d = *shipped();
    EXPECT_EQ(d.version_major, 2);
    EXPECT_EQ(d.version_minor, 0);
    EXPECT_EQ(d.wearable_definition_version, 22);
    EXPECT_EQ(d.skeleton_file, "avatar_skeleton.xml");
    std::map<VisualParamKind, int> kinds;
    int shared = 0, clothing = 0, volume_morphs = 0, bones = 0, driven = 0;
    for (const VisualParamDef& p : d.params) {
        ++kinds[p.kind];
        shared += p.shared;
        clothing += p.clothing_morph;
        volume_morphs += static_cast<int>(p.volume_morphs.size());
        bones += static_cast<int>(p.bones.size());
        driven += static_cast<int>(p.driven.size());
    }
    EXPECT_EQ(d.params.size(), 704u);
    EXPECT_EQ(kinds[VisualParamKind::Driver], 164);
    EXPECT_EQ(kinds[VisualParamKind::Skeleton], 83);
    EXPECT_EQ(kinds[VisualParamKind::Morph], 255);
    EXPECT_EQ(kinds[VisualParamKind::Color], 108);
    EXPECT_EQ(kinds[VisualParamKind::Alpha], 94);
    EXPECT_EQ(shared, 32);
    EXPECT_EQ(clothing, 23);  // 25 attributes: one "false", one on a driver (not a morph)
    EXPECT_EQ(volume_morphs, 111);
    EXPECT_EQ(bones, 617);
    EXPECT_EQ(driven, 359);
    EXPECT_EQ(d.meshes.size(), 31u);
    EXPECT_EQ(d.attachment_points.size(), 55u);
    EXPECT_TRUE(d.ignored.empty()) << d.ignored.front();
}

TEST(AvatarDefinitionShipped, MeshEntries) {
    SKIP_WITHOUT_CHARACTER();
    const AvatarDefinition& d = *shipped();
    const MeshDef& hair0 = d.meshes.front();
    EXPECT_EQ(hair0.type, "hairMesh");
    EXPECT_EQ(hair0.lod, 0);
    EXPECT_EQ(hair0.file_name, "avatar_hair.llm");
    EXPECT_EQ(hair0.min_pixel_width, 320);
    EXPECT_EQ(hair0.min_pixel_area, 320.f * 320.f);
    EXPECT_TRUE(hair0.reference.empty());
    const MeshDef& hair5 = d.meshes[5];
    EXPECT_EQ(hair5.lod, 5);
    EXPECT_EQ(hair5.reference, "avatar_hair.llm");
    EXPECT_EQ(hair5.min_pixel_area, 0.f);
    int with_reference = 0;
    for (const MeshDef& m : d.meshes) with_reference += !m.reference.empty();
    EXPECT_EQ(with_reference, 21);
    // The eyes' lod 1 has no reference: avatar_eye_1.llm is a base-layout file.
    const auto eye1 = std::find_if(d.meshes.begin(), d.meshes.end(), [](const MeshDef& m) {
        return m.type == "eyeBallLeftMesh" && m.lod == 1;
    });
    ASSERT_NE(eye1, d.meshes.end());
    EXPECT_EQ(eye1->file_name, "avatar_eye_1.llm");
    EXPECT_TRUE(eye1->reference.empty());
}

TEST(AvatarDefinitionShipped, SpotChecks) {
    SKIP_WITHOUT_CHARACTER();
    const AvatarDefinition& d = *shipped();

    // <param id="663" name="Shift_Mouth" value_min="-2" value_max="2"> driving 20663 with the
    // defaults and 31663/32663 with explicit ramps.
    const VisualParamDef* shift = d.find(663);
    ASSERT_NE(shift, nullptr);
    EXPECT_EQ(shift->kind, VisualParamKind::Driver);
    EXPECT_EQ(shift->name, "Shift_Mouth");
    ASSERT_EQ(shift->driven.size(), 3u);
    EXPECT_EQ(shift->driven[0], (DrivenDef{20663, -2.f, 2.f, 2.f, 2.f}));
    EXPECT_EQ(shift->driven[1], (DrivenDef{31663, -2.f, -2.f, -2.f, 0.f}));
    EXPECT_EQ(shift->driven[2], (DrivenDef{32663, 0.f, 2.f, 2.f, 2.f}));
    const VisualParamDef* nose = d.find(2);  // Nose_Big_Out, -0.8 … 2.5
    ASSERT_NE(nose, nullptr);
    EXPECT_EQ(nose->driven.at(1), (DrivenDef{30002, -0.8f, 2.5f, 2.5f, 2.5f}));

    // The first skeleton param: Male_Skeleton's 22 bones; mWing1Left has an offset.
    const VisualParamDef* male = d.find("male_skeleton");  // case-insensitive
    ASSERT_NE(male, nullptr);
    EXPECT_EQ(male->id, 32);
    EXPECT_EQ(male->kind, VisualParamKind::Skeleton);
    EXPECT_EQ(male->group, VisualParamGroup::Animatable);
    EXPECT_EQ(male->wearable, "shape");
    EXPECT_EQ(male->label, "Male_Skeleton");  // no label attribute: the name
    ASSERT_EQ(male->bones.size(), 22u);
    EXPECT_EQ(male->bones[0].bone, "mNeck");
    EXPECT_EQ(male->bones[0].scale, (Vec3{0.f, 0.f, 0.2f}));
    EXPECT_FALSE(male->bones[0].has_offset);
    EXPECT_EQ(male->bones[21].bone, "mWing1Left");
    EXPECT_TRUE(male->bones[21].has_offset);
    EXPECT_EQ(male->bones[21].offset, (Vec3{-0.05f, 0.f, 0.f}));

    // A morph with a volume morph, on the head mesh.
    const VisualParamDef* squash = d.find(187);
    ASSERT_NE(squash, nullptr);
    EXPECT_EQ(squash->kind, VisualParamKind::Morph);
    EXPECT_EQ(squash->mesh_type, "headMesh");
    EXPECT_EQ(squash->morph_name, "Squash_Stretch_Head");
    EXPECT_EQ(squash->label, "Squash/Stretch Head");
    EXPECT_EQ(squash->edit_group, "shape_head");
    EXPECT_EQ(squash->min, -0.5f);
    EXPECT_EQ(squash->max, 1.f);
    ASSERT_EQ(squash->volume_morphs.size(), 1u);
    EXPECT_EQ(squash->volume_morphs[0].volume, "HEAD");
    EXPECT_EQ(squash->volume_morphs[0].scale, (Vec3{-0.008f, -0.006f, 0.015f}));
    EXPECT_EQ(squash->volume_morphs[0].position, Vec3{});

    // Shared morphs: Shear_Head is on several meshes.
    int shear = 0;
    for (const VisualParamDef& p : d.params) shear += p.id == 660;
    EXPECT_GE(shear, 2);
    EXPECT_TRUE(d.find(660)->shared || d.params.end() != std::find_if(d.params.begin(), d.params.end(),
                                                                         [](const VisualParamDef& p) {
                                                                             return p.id == 660 && p.shared;
                                                                         }));
    EXPECT_TRUE(d.find(180)->clothing_morph);  // Hair_Volume

    // Defaults: Express_Closed_Mouth's value_default 1; Shirt Shadow Bottom (901) has none and
    // a range 0.02 … 1, so the default clamps to 0.02.
    EXPECT_EQ(d.find(300)->default_weight, 1.f);
    EXPECT_EQ(d.find(901)->kind, VisualParamKind::Alpha);
    EXPECT_EQ(d.find(901)->default_weight, 0.02f);
    EXPECT_EQ(d.find(33)->default_weight, 0.f);  // Height: -2.3 … 2, none given

    // Every driven id names a param; sex attributes parsed.
    int female = 0, male_only = 0;
    for (const VisualParamDef& p : d.params) {
        for (const DrivenDef& dr : p.driven) EXPECT_NE(d.find(dr.id), nullptr) << dr.id;
        female += p.sex == Sex::Female;
        male_only += p.sex == Sex::Male;
    }
    EXPECT_EQ(female, 28);
    EXPECT_EQ(male_only, 23);

    const JointDesc& chest = d.attachment_points.front();
    EXPECT_EQ(chest.attachment_id, 1);
    EXPECT_EQ(chest.name, "Chest");
    EXPECT_EQ(chest.parent, "mChest");
    EXPECT_EQ(d.attachment_points.back().attachment_id, 55);
}

// ---------------------------------------------------------------------------------------------
// Synthetic documents.

constexpr std::string_view kSmall = R"(<?xml version="1.0"?>
<linden_avatar version="2.0" wearable_definition_version="22">
  <skeleton file_name="avatar_skeleton.xml">
    <param id="32" group="1" name="Male_Skeleton" value_min="0" value_max="1">
      <param_skeleton>
        <bone name="mNeck" scale="0 0 .2"/>
        <bone scale="1 1 1"/>
        <bone name="mChest" scale="0 0 0" offset="0 0 0.1"/>
      </param_skeleton>
    </param>
    <attachment_point id="2" group="2" name="Skull" joint="mHead" position="0 0 0.15" rotation="0 0 90"/>
    <mystery/>
  </skeleton>
  <mesh type="headMesh" lod="0" file_name="avatar_head.llm" min_pixel_width="320">
    <param id="187" group="1" name="Squash_Stretch_Head" value_min="-.5" value_max="1" value_default="3" sex="female" clothing_morph="true" shared="1">
      <param_morph>
        <volume_morph name="HEAD" scale="-0.008 -0.006 0.015" pos="0 0 .01"/>
      </param_morph>
    </param>
  </mesh>
  <mesh type="headMesh" lod="1" file_name="avatar_head_1.llm" min_pixel_area="100" reference="avatar_head.llm"/>
  <layer_set body_region="head" width="512" height="512">
    <layer name="head bump">
      <texture local_texture="head_bodypaint"/>
      <param id="700" group="1" name="Lipstick" value_min="0" value_max="1"><param_alpha domain="0.05"/></param>
    </layer>
  </layer_set>
  <global_color name="skin_color">
    <param id="108" name="Rainbow Color" group="0" value_min="0" value_max="1"><param_color><value color="0,0,0,255"/></param_color></param>
  </global_color>
  <driver_parameters>
    <param id="663" group="0" name="Shift_Mouth" value_min="-2" value_max="2">
      <param_driver>
        <driven id="187"/>
        <driven id="32" min1="-2" max1="-2" max2="-2" min2="0"/>
      </param_driver>
    </param>
    <param id="9" name="NoDriver"><param_morph/></param>
  </driver_parameters>
  <morph_masks/>
  <future_element/>
</linden_avatar>
)";

TEST(AvatarDefinition, SmallDocument) {
    const Result<AvatarDefinition> r = parse_avatar_definition(kSmall);
    ASSERT_TRUE(r.ok()) << r.error().describe();
    const AvatarDefinition& d = *r;
    ASSERT_EQ(d.params.size(), 5u);
    EXPECT_EQ(d.params[0].kind, VisualParamKind::Skeleton);
    ASSERT_EQ(d.params[0].bones.size(), 2u);  // the nameless bone is skipped, like the viewer
    EXPECT_TRUE(d.params[0].bones[1].has_offset);
    const VisualParamDef& squash = d.params[1];
    EXPECT_EQ(squash.default_weight, 1.f);  // 3 clamped into [-0.5, 1]
    EXPECT_EQ(squash.sex, Sex::Female);
    EXPECT_TRUE(squash.clothing_morph);
    EXPECT_TRUE(squash.shared);
    EXPECT_EQ(squash.volume_morphs.at(0).position, (Vec3{0.f, 0.f, 0.01f}));
    EXPECT_EQ(d.params[2].kind, VisualParamKind::Alpha);
    EXPECT_EQ(d.params[3].kind, VisualParamKind::Color);
    EXPECT_EQ(d.params[4].driven[0], (DrivenDef{187, -2.f, 2.f, 2.f, 2.f}));
    ASSERT_EQ(d.meshes.size(), 2u);
    EXPECT_EQ(d.meshes[1].min_pixel_area, 100.f);
    EXPECT_EQ(d.meshes[1].reference, "avatar_head.llm");
    ASSERT_EQ(d.attachment_points.size(), 1u);
    EXPECT_EQ(d.attachment_points[0].name, "Skull");
    // Noted, not fatal: the nameless bone, <mystery>, the driver param without <param_driver>,
    // <future_element>.
    ASSERT_EQ(d.ignored.size(), 4u);
    EXPECT_EQ(d.ignored[0].rfind("line 7: <bone> ignored", 0), 0u) << d.ignored[0];
    EXPECT_NE(d.ignored[1].find("<mystery>"), std::string::npos);
    EXPECT_NE(d.ignored[2].find("id=\"9\""), std::string::npos);
    EXPECT_NE(d.ignored[3].find("<future_element>"), std::string::npos);
    EXPECT_EQ(d.find("SHIFT_MOUTH"), &d.params[4]);
    EXPECT_EQ(d.find(12345), nullptr);
}

std::string replace(std::string_view s, std::string_view from, std::string_view to) {
    std::string out(s);
    const std::size_t p = out.find(from);
    EXPECT_NE(p, std::string::npos) << from;
    if (p != std::string::npos) out.replace(p, from.size(), to);
    return out;
}

void expect_error(const std::string& xml, long long line, std::string_view text) {
    const Result<AvatarDefinition> r = parse_avatar_definition(xml);
    ASSERT_FALSE(r.ok()) << "expected: " << text;
    EXPECT_EQ(r.error().line, line) << r.error().message;
    EXPECT_NE(r.error().message.find(text), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().message.rfind("line " + std::to_string(line) + ": ", 0), 0u) << r.error().message;
}

TEST(AvatarDefinition, ErrorsWithLines) {
    expect_error(replace(kSmall, "<param id=\"32\" ", "<param "), 4, "missing attribute id");
    expect_error(replace(kSmall, "value_max=\"1\" value_default=\"3\"", "value_max=\"x\""), 15, "not a number");
    expect_error(replace(kSmall, "value_min=\"-.5\" value_max=\"1\"", "value_min=\"2\" value_max=\"1\""), 15,
                 "value_min 2 > value_max 1");
    expect_error(replace(kSmall, "sex=\"female\"", "sex=\"other\""), 15, "sex=\"other\"");
    expect_error(replace(kSmall, "<driven id=\"187\"/>", "<driven id=\"4242\"/>"), 34, "driven id 4242 names no param");
    expect_error(replace(kSmall, "<driven id=\"187\"/>", "<driven min1=\"0\"/>"), 34, "missing attribute id");
    // A second <driver_parameters> block is checked too (slanim_fuzz_wearable found one whose
    // driven id named no param).
    expect_error(replace(kSmall, "  <morph_masks/>",
                         "  <driver_parameters>\n    <param id=\"664\" name=\"D2\" value_min=\"0\" value_max=\"1\">"
                         "<param_driver><driven id=\"4343\"/></param_driver></param>\n  </driver_parameters>\n"
                         "  <morph_masks/>"),
                 41, "driven id 4343 names no param");
    expect_error(replace(kSmall, "type=\"headMesh\" lod=\"0\"", "type=\"tailMesh\" lod=\"0\""), 14,
                 "unknown mesh type \"tailMesh\"");
    expect_error(replace(kSmall, "lod=\"1\" file_name", "lod=\"5\" file_name"), 21, "lod 5 is out of range");
    expect_error(replace(kSmall, "reference=\"avatar_head.llm\"", "reference=\"nothing.llm\""), 21,
                 "names no earlier <mesh>");
    expect_error(replace(replace(kSmall, "<param_skeleton>", "<param_morph>"), "</param_skeleton>", "</param_morph>"),
                 4, "a morph param cannot be in <skeleton>");
    expect_error(replace(kSmall, "<bone name=\"mNeck\" scale=\"0 0 .2\"/>", "<bone name=\"mNeck\" scale=\"0 0\"/>"),
                 6, "not three numbers");
    expect_error(replace(kSmall, "version=\"2.0\" wearable", "version=\"3.0\" wearable"), 2, "version=\"3.0\"");
    expect_error(replace(kSmall, "<morph_masks/>", "<morph_masks>"), 42, "malformed XML");
    expect_error("<not_lad/>", 1, "expected the root element <linden_avatar>");
    expect_error(replace(kSmall, "id=\"2\" group=\"2\" name=\"Skull\"", "group=\"2\" name=\"Skull\""), 11,
                 "attribute 'id'");
}

}  // namespace
}  // namespace slanim
