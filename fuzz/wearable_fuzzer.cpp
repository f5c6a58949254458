// SPDX-License-Identifier: MIT
// libFuzzer target for the `LLWearable version 22` reader and writer, and the avatar_lad.xml
// reader (the first input byte picks the reader: '<' → avatar definition, else wearable).
//
// Properties checked (a violation aborts, which libFuzzer reports as a crash):
//  * no crash, no sanitizer finding, whatever the bytes;
//  * a wearable error names a line that exists (1 … lines + 1) in Error::line and in a
//    message that starts "line N: ", with no byte offset;
//  * a parsed wearable keeps parse_wearable's guarantees: a type 0…16, at most 1000
//    parameters with finite weights, at most 100 textures with indices 0…44 and 36-character
//    UUIDs, name and description without line breaks;
//  * parse_wearable(write_wearable(w)) == w, also with the written text in CRLF, and
//    write_wearable is idempotent;
//  * an avatar definition error has a line ≥ 1 and a message that starts "line N: "; a parsed
//    definition has defaults inside [min, max], driven ids that name params, LOD references
//    that name earlier meshes, attachment points sorted by id.
//
// Run:   slanim_fuzz_wearable -max_total_time=60 NEW_CORPUS_DIR SEED_DIR...
// (scripts/fuzz.sh passes a scratch copy of fuzz/corpus/wearable/, when present, as the first,
// writable folder and copies every ../shared/**/*wearables/*.dat and avatar_lad.xml into a
// separate seed folder after it.) Synthetic seeds (CRLF, blank lines, legacy keywords, a small
// avatar definition):
// `slanim_fuzz_wearable -write_seeds=DIR`.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "fuzz_seeds.hpp"
#include "slanim/appearance/avatar_definition.hpp"
#include "slanim/appearance/wearable.hpp"

namespace {

using namespace slanim;

constexpr const char* kFuzzTarget = "slanim_fuzz_wearable";

bool starts_with_line(const Error& e) {
    const std::string prefix = "line " + std::to_string(e.line) + ": ";
    return e.message.compare(0, prefix.size(), prefix) == 0;
}

std::string to_crlf(const std::string& s) {
    std::string out;
    for (const char c : s) {
        if (c == '\n') out += '\r';
        out += c;
    }
    return out;
}

void check_wearable(std::string_view text) {
    const std::size_t size = text.size();
    const Result<Wearable> r = parse_wearable(text);
    if (!r.ok()) {
        long long lines = 0;
        for (const char c : text) lines += c == '\n';
        if (!text.empty() && text.back() != '\n') ++lines;
        SLANIM_FUZZ_CHECK(r.error().line >= 1 && r.error().line <= lines + 1, size);
        SLANIM_FUZZ_CHECK(r.error().offset == -1 && starts_with_line(r.error()), size);
        return;
    }
    const Wearable& w = r.value();
    SLANIM_FUZZ_CHECK(static_cast<int>(w.type) <= static_cast<int>(WearableType::Universal), size);
    SLANIM_FUZZ_CHECK(w.params.size() <= static_cast<std::size_t>(kWearableMaxParameters), size);
    SLANIM_FUZZ_CHECK(w.textures.size() <= static_cast<std::size_t>(kWearableMaxTextures), size);
    for (const auto& [id, weight] : w.params) SLANIM_FUZZ_CHECK(std::isfinite(weight), size);
    for (const auto& [te, uuid] : w.textures)
        SLANIM_FUZZ_CHECK(te >= 0 && te < kWearableTextureIndices && uuid.size() == 36, size);
    SLANIM_FUZZ_CHECK(w.name.find_first_of("\n") == std::string::npos &&
                          w.description.find_first_of("\n") == std::string::npos,
                      size);
    const std::string written = write_wearable(w);
    const Result<Wearable> again = parse_wearable(written);
    SLANIM_FUZZ_CHECK(again.ok(), size);
    SLANIM_FUZZ_CHECK(again.value() == w, size);
    SLANIM_FUZZ_CHECK(write_wearable(again.value()) == written, size);
    const Result<Wearable> crlf = parse_wearable(to_crlf(written));
    SLANIM_FUZZ_CHECK(crlf.ok() && crlf.value() == w, size);
}

void check_definition(std::string_view text) {
    const std::size_t size = text.size();
    const Result<AvatarDefinition> r = parse_avatar_definition(text);
    if (!r.ok()) {
        SLANIM_FUZZ_CHECK(r.error().line >= 1 && starts_with_line(r.error()), size);
        return;
    }
    const AvatarDefinition& d = r.value();
    std::set<int> ids;
    for (const VisualParamDef& p : d.params) {
        ids.insert(p.id);
        SLANIM_FUZZ_CHECK(p.min <= p.max && p.default_weight >= p.min && p.default_weight <= p.max, size);
    }
    for (const VisualParamDef& p : d.params)
        for (const DrivenDef& dr : p.driven) SLANIM_FUZZ_CHECK(ids.count(dr.id) == 1, size);
    std::set<std::string> files;
    for (const MeshDef& m : d.meshes) {
        SLANIM_FUZZ_CHECK(m.reference.empty() || files.count(m.reference) == 1, size);
        files.insert(m.file_name);
    }
    for (std::size_t i = 1; i < d.attachment_points.size(); ++i)
        SLANIM_FUZZ_CHECK(d.attachment_points[i - 1].attachment_id <= d.attachment_points[i].attachment_id, size);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(bytes), size);
    if (!text.empty() && text.front() == '<') check_definition(text);
    else check_wearable(text);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Seed corpus generator: `slanim_fuzz_wearable -write_seeds=DIR`.

namespace {

constexpr std::string_view kShape =
    "LLWearable version 22\nNew Shape\n\n\tpermissions 0\n\t{\n\t\tbase_mask\t7fffffff\n"
    "\t\towner_mask\t7fffffff\n\t\tgroup_mask\t00000000\n\t\teveryone_mask\t00000000\n"
    "\t\tnext_owner_mask\t00082000\n\t\tcreator_id\t11111111-1111-0000-0000-000100bba000\n"
    "\t\towner_id\t11111111-1111-0000-0000-000100bba000\n"
    "\t\tlast_owner_id\t00000000-0000-0000-0000-000000000000\n"
    "\t\tgroup_id\t00000000-0000-0000-0000-000000000000\n\t}\n\tsale_info\t0\n\t{\n"
    "\t\tsale_type\tnot\n\t\tsale_price\t10\n\t}\ntype 0\nparameters 3\n1 0\n33 -2.3\n36 .5\n"
    "textures 1\n3 6522e74d-1660-4e7f-b601-6f48c1659a77\n";

constexpr std::string_view kLegacy =
    "\n\nLLWearable version 18\r\nOld\r\ndescribed\r\n  permissions 0\r\n{\r\n creator_mask 7fffffff\r\n"
    " group_owned 1\r\n unknown_key 1\r\n}\r\n\r\n sale_info 0\r\n {\r\n sale_type copy\r\n"
    " perm_mask 00002000\r\n sale_price 250\r\n}\r\ntype 13\r\nparameters 1\r\n\r\n"
    "  700   1e-2  junk\r\ntextures 0\r\n";

constexpr std::string_view kDefinition = R"(<?xml version="1.0"?>
<linden_avatar version="2.0" wearable_definition_version="22">
  <skeleton file_name="avatar_skeleton.xml">
    <param id="32" group="1" name="Male_Skeleton" value_min="0" value_max="1">
      <param_skeleton><bone name="mNeck" scale="0 0 .2" offset="0 0 .01"/></param_skeleton>
    </param>
    <attachment_point id="2" group="2" name="Skull" joint="mHead" position="0 0 0.15" rotation="0 0 90"/>
  </skeleton>
  <mesh type="headMesh" lod="0" file_name="avatar_head.llm" min_pixel_width="320">
    <param id="187" group="1" name="Squash_Stretch_Head" value_min="-.5" value_max="1" shared="1">
      <param_morph><volume_morph name="HEAD" scale="-0.008 -0.006 0.015"/></param_morph>
    </param>
  </mesh>
  <mesh type="headMesh" lod="1" file_name="avatar_head_1.llm" min_pixel_width="160" reference="avatar_head.llm"/>
  <layer_set body_region="head"><layer name="l"><param id="700" name="Lipstick"><param_alpha/></param></layer></layer_set>
  <driver_parameters>
    <param id="663" name="Shift_Mouth" value_min="-2" value_max="2">
      <param_driver><driven id="187"/><driven id="32" min1="-2" max1="-2" max2="-2" min2="0"/></param_driver>
    </param>
  </driver_parameters>
</linden_avatar>
)";

std::vector<slanim::fuzz::Seed> seed_bytes() {
    std::vector<slanim::fuzz::Seed> out;
    const auto add = [&](const char* name, std::string_view text) {
        out.emplace_back(name, std::vector<std::uint8_t>(text.begin(), text.end()));
    };
    add("shape.dat", kShape);
    add("shape_crlf.dat", to_crlf(std::string(kShape)));
    add("legacy.dat", kLegacy);
    add("definition.xml", kDefinition);
    return out;
}

}  // namespace

// Runs before libFuzzer parses its flags: handles -write_seeds=DIR and exits.
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    slanim::fuzz::write_seeds_and_exit_if_asked(*argc, *argv, "slanim_fuzz_wearable", seed_bytes);
    return 0;
}
