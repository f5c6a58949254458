// SPDX-License-Identifier: MIT
// `.llm` reader and writer: every shipped file (kinds from avatar_lad.xml), the counts of spec
// §6.5, byte-identical round trips, and malformed input (truncations, bad header, bad counts
// and indices) giving errors with byte offsets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "slanim/appearance/avatar_definition.hpp"
#include "slanim/appearance/llm.hpp"
#include "slanim/formats/io.hpp"

namespace slanim {
namespace {

const std::filesystem::path kCharacterDir = SLANIM_SHARED_DIR "/sl-character";

bool have_character() {
    std::error_code ec;
    return std::filesystem::is_directory(kCharacterDir, ec);
}

#define SKIP_WITHOUT_CHARACTER()                                                                 \
    if (!have_character())                                                                       \
    GTEST_SKIP() << "the shared reference folder (../shared) is absent: " << kCharacterDir.string() \
                 << " not found"

std::vector<std::byte> file_bytes(const std::filesystem::path& p) {
    auto b = read_file_bytes(p.string());
    EXPECT_TRUE(b.ok()) << b.error().describe();
    if (!b) return {};
    const auto s = std::as_bytes(std::span(b.value()));
    return {s.begin(), s.end()};
}

/// A small base mesh touching every section.
LlmMesh small_base() {
    LlmMesh m;
    m.kind = LlmFileKind::Base;
    m.has_weights = true;
    m.position = {0.f, 9.f, 0.f};
    m.rotation_deg = {1.f, 2.f, 3.f};
    m.rotation_order = 4;
    m.scale = {1.f, 1.f, 1.f};
    m.coords = {{0.f, 0.f, 0.f}, {1.f, 0.f, 0.f}, {0.f, 1.f, 0.f}};
    m.normals = {{0.f, 0.f, 1.f}, {0.f, 0.f, 1.f}, {0.f, 0.f, 1.f}};
    m.binormals = {{1.f, 0.f, 0.f}, {1.f, 0.f, 0.f}, {1.f, 0.f, 0.f}};
    m.texcoords = {{0.f, 0.f}, {1.f, 0.f}, {0.f, 1.f}};
    m.weights = {1.f, 1.5f, 2.f};
    m.faces = {{0, 1, 2}};
    m.skin_joints = {"mPelvis", "mTorso"};
    m.skin_joint_name_tails = {"", "ht"};
    LlmMorph morph;
    morph.name = "Big_Belly_Torso";
    morph.vertices = {2};
    morph.coords = {{0.f, 0.f, 0.05f}};
    morph.normals = {{0.f, 0.f, 0.f}};
    morph.binormals = {{0.f, 0.f, 0.f}};
    morph.texcoords = {{0.f, 0.f}};
    m.morphs = {morph};
    m.remaps = {{2, 1}};
    return m;
}

// Offsets in small_base()'s file.
constexpr std::size_t kVertexCountAt = 63;
constexpr std::size_t kFacesAt = kVertexCountAt + 2 + 3 * 48;  // count; 3 × (44 + 4 weight)
constexpr std::size_t kJointsAt = kFacesAt + 2 + 6;
constexpr std::size_t kMorphAt = kJointsAt + 2 + 2 * 64;
constexpr std::size_t kMorphCountAt = kMorphAt + 64;
constexpr std::size_t kEndMorphsAt = kMorphCountAt + 4 + 48;
constexpr std::size_t kRemapsAt = kEndMorphsAt + 64;
constexpr std::size_t kSmallSize = kRemapsAt + 4 + 8;

template <class T>
void poke(std::vector<std::byte>& b, std::size_t at, T v) {
    std::memcpy(b.data() + at, &v, sizeof v);
}

Error parse_error(const std::vector<std::byte>& b, LlmFileKind kind = LlmFileKind::Base) {
    const Result<LlmMesh> r = parse_llm(b, kind);
    EXPECT_FALSE(r.ok());
    return r.ok() ? Error{} : r.error();
}

TEST(Llm, SmallMeshLayoutAndRoundTrip) {
    const LlmMesh m = small_base();
    const std::vector<std::byte> b = write_llm(m);
    ASSERT_EQ(b.size(), kSmallSize);
    EXPECT_EQ(std::memcmp(b.data(), "Linden Binary Mesh 1.0\0\0", 24), 0);
    EXPECT_EQ(std::memcmp(b.data() + kEndMorphsAt, "End Morphs", 11), 0);
    EXPECT_EQ(std::memcmp(b.data() + kJointsAt + 2 + 64, "mTorso\0ht\0", 10), 0);
    const Result<LlmMesh> back = parse_llm(b, LlmFileKind::Base);
    ASSERT_TRUE(back.ok()) << back.error().describe();
    EXPECT_EQ(*back, m);
    EXPECT_EQ(back->num_vertices(), 3u);
    ASSERT_NE(back->find_morph("Big_Belly_Torso"), nullptr);
    EXPECT_EQ(back->find_morph("big_belly_torso"), nullptr);  // exact match
    EXPECT_EQ(write_llm(*back), b);
}

TEST(Llm, EveryTruncationIsAnErrorWithItsOffset) {
    const std::vector<std::byte> full = write_llm(small_base());
    for (std::size_t cut = 0; cut < full.size(); ++cut) {
        const std::vector<std::byte> b(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(cut));
        const Result<LlmMesh> r = parse_llm(b, LlmFileKind::Base);
        if (cut >= kRemapsAt && cut < kRemapsAt + 4) {
            // The remap table is optional (fewer than 4 bytes: kept as trailing bytes).
            ASSERT_TRUE(r.ok()) << cut << ": " << r.error().describe();
            EXPECT_TRUE(r->remaps.empty());
            EXPECT_EQ(r->trailing.size(), cut - kRemapsAt);
            continue;
        }
        ASSERT_FALSE(r.ok()) << "cut at " << cut;
        EXPECT_GE(r.error().offset, 0) << cut;
        EXPECT_LE(r.error().offset, static_cast<long long>(cut)) << cut << ": " << r.error().message;
        EXPECT_NE(r.error().describe().find("(at byte"), std::string::npos);
    }
}

TEST(Llm, TruncationMessagesNameTheSection) {
    const std::vector<std::byte> full = write_llm(small_base());
    const auto cut = [&](std::size_t n) {
        return parse_error(std::vector<std::byte>(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n)));
    };
    Error e = cut(kVertexCountAt + 2 + 10);
    EXPECT_EQ(e.offset, static_cast<long long>(kVertexCountAt + 2));
    EXPECT_NE(e.message.find("3 vertices"), std::string::npos) << e.message;
    e = cut(kMorphAt + 10);
    EXPECT_EQ(e.offset, static_cast<long long>(kMorphAt));
    EXPECT_NE(e.message.find("End Morphs"), std::string::npos) << e.message;
    e = cut(kEndMorphsAt);  // a clean end after the last morph: the viewer would accept it
    EXPECT_EQ(e.offset, static_cast<long long>(kEndMorphsAt));
    e = cut(kMorphCountAt + 4 + 20);
    EXPECT_EQ(e.offset, static_cast<long long>(kMorphCountAt + 4));
    EXPECT_NE(e.message.find("Big_Belly_Torso"), std::string::npos) << e.message;
    e = cut(kRemapsAt + 4 + 6);
    EXPECT_EQ(e.offset, static_cast<long long>(kRemapsAt + 4));
    EXPECT_NE(e.message.find("1 vertex remaps"), std::string::npos) << e.message;
}

TEST(Llm, BadHeader) {
    std::vector<std::byte> b = write_llm(small_base());
    std::memcpy(b.data(), "Linden Mesh 1.0", 15);  // the ASCII format's header
    Error e = parse_error(b);
    EXPECT_EQ(e.offset, 0);
    EXPECT_NE(e.message.find("Linden Binary Mesh 1.0"), std::string::npos);
    EXPECT_EQ(parse_error({}).offset, 0);
    // Bytes 22-23 are not part of the check (strncmp over strlen(HEADER_BINARY)).
    b = write_llm(small_base());
    b[22] = std::byte{'x'};
    b[23] = std::byte{'y'};
    EXPECT_TRUE(parse_llm(b, LlmFileKind::Base).ok());
    // A header alone is too short for the flags.
    b.resize(24);
    EXPECT_EQ(parse_error(b).offset, 24);
}

TEST(Llm, BadIndicesAndCounts) {
    const std::vector<std::byte> good = write_llm(small_base());
    std::vector<std::byte> b = good;
    poke<std::int16_t>(b, kFacesAt + 2 + 2, 3);  // vertex 3 of 3
    Error e = parse_error(b);
    EXPECT_EQ(e.offset, static_cast<long long>(kFacesAt + 4));
    EXPECT_NE(e.message.find("face 0 indexes vertex 3"), std::string::npos) << e.message;

    b = good;
    poke<std::int16_t>(b, kFacesAt + 2 + 4, -2);
    e = parse_error(b);
    EXPECT_EQ(e.offset, static_cast<long long>(kFacesAt + 6));
    EXPECT_NE(e.message.find("negative"), std::string::npos) << e.message;

    b = good;
    poke<std::uint32_t>(b, kMorphCountAt + 4, 10001);  // the viewer's limit is 10000
    e = parse_error(b);
    EXPECT_EQ(e.offset, static_cast<long long>(kMorphCountAt + 4));
    EXPECT_NE(e.message.find("> 10000"), std::string::npos) << e.message;

    b = good;
    poke<std::uint32_t>(b, kMorphCountAt + 4, 3);  // in the viewer's limit, outside the mesh
    e = parse_error(b);
    EXPECT_NE(e.message.find("indexes vertex 3, but the mesh has 3"), std::string::npos) << e.message;

    b = good;
    poke<std::int32_t>(b, kMorphCountAt, -1);
    e = parse_error(b);
    EXPECT_EQ(e.offset, static_cast<long long>(kMorphCountAt));
    EXPECT_NE(e.message.find("negative vertex count"), std::string::npos) << e.message;

    b = good;
    poke<std::int32_t>(b, kMorphCountAt, std::numeric_limits<std::int32_t>::max());  // no huge allocation
    e = parse_error(b);
    EXPECT_EQ(e.offset, static_cast<long long>(kMorphCountAt + 4));
    EXPECT_NE(e.message.find("truncated"), std::string::npos) << e.message;

    b = good;
    poke<std::uint16_t>(b, kVertexCountAt, 60000);
    e = parse_error(b);
    EXPECT_EQ(e.offset, static_cast<long long>(kVertexCountAt + 2));

    b = good;
    poke<std::int32_t>(b, kRemapsAt + 4 + 4, 7);  // remap target outside the mesh
    e = parse_error(b);
    EXPECT_EQ(e.offset, static_cast<long long>(kRemapsAt + 4));
    EXPECT_NE(e.message.find("remap"), std::string::npos) << e.message;

    b = good;
    poke<std::int32_t>(b, kRemapsAt, -3);
    e = parse_error(b);
    EXPECT_EQ(e.offset, static_cast<long long>(kRemapsAt));

    b = good;
    poke<float>(b, kVertexCountAt + 2 + 4, std::numeric_limits<float>::quiet_NaN());
    e = parse_error(b);
    EXPECT_EQ(e.offset, static_cast<long long>(kVertexCountAt + 2 + 4));
    EXPECT_NE(e.message.find("finite"), std::string::npos) << e.message;

    b = good;
    poke<float>(b, kVertexCountAt + 2 + 3 * 44, -1.f);  // first skin weight
    e = parse_error(b);
    EXPECT_NE(e.message.find("skin weight of vertex 0 is negative"), std::string::npos) << e.message;
}

TEST(Llm, TrailingBytesAndLodLayout) {
    LlmMesh m = small_base();
    std::vector<std::byte> b = write_llm(m);
    b.push_back(std::byte{0x42});
    Result<LlmMesh> r = parse_llm(b, LlmFileKind::Base);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->trailing, std::vector<std::byte>{std::byte{0x42}});
    EXPECT_EQ(write_llm(*r), b);

    // The same bytes read as an LOD: no vertex sections, so the vertex count is read as the
    // face count; whatever follows the faces is trailing.
    LlmMesh lod;
    lod.kind = LlmFileKind::Lod;
    lod.has_weights = true;
    lod.faces = {{0, 1, 2}, {2, 1, 40}};
    const std::vector<std::byte> lb = write_llm(lod);
    EXPECT_EQ(lb.size(), 63u + 2 + 12);
    r = parse_llm(lb, LlmFileKind::Lod);
    ASSERT_TRUE(r.ok()) << r.error().describe();
    EXPECT_EQ(*r, lod);
    EXPECT_EQ(r->num_vertices(), 41u);  // max index + 1
    EXPECT_TRUE(check_llm_lod(lod, small_base()).ok() == false);
    lod.faces.pop_back();
    EXPECT_TRUE(check_llm_lod(lod, small_base()).ok());
    for (std::size_t cut = 0; cut < lb.size(); ++cut)
        EXPECT_FALSE(parse_llm(std::span(lb).first(cut), LlmFileKind::Lod).ok()) << cut;
}

// ---------------------------------------------------------------------------------------------
// The shipped character.

struct ShippedMesh {
    MeshDef def;
    LlmMesh mesh;
};

const std::map<std::string, ShippedMesh>& shipped() {
    static const std::map<std::string, ShippedMesh> meshes = [] {
        std::map<std::string, ShippedMesh> out;
        const Result<AvatarDefinition> def = load_avatar_definition(kCharacterDir);
        EXPECT_TRUE(def.ok()) << def.error().describe();
        if (!def) return out;
        for (const MeshDef& md : def->meshes) {
            if (out.count(md.file_name)) continue;  // the eyes' two entries share files
            const LlmFileKind kind = md.reference.empty() ? LlmFileKind::Base : LlmFileKind::Lod;
            Result<LlmMesh> m = load_llm(kCharacterDir / md.file_name, kind);
            EXPECT_TRUE(m.ok()) << m.error().describe();
            if (m) out.emplace(md.file_name, ShippedMesh{md, std::move(m.value())});
        }
        return out;
    }();
    return meshes;
}

TEST(LlmShipped, EveryFileLoadsWithItsKindAndRoundTripsByteForByte) {
    SKIP_WITHOUT_CHARACTER();
    std::set<std::string> on_disk;
    for (const auto& e : std::filesystem::directory_iterator(kCharacterDir))
        if (e.path().extension() == ".llm") on_disk.insert(e.path().filename().string());
    EXPECT_EQ(on_disk.size(), 29u);
    ASSERT_EQ(shipped().size(), on_disk.size());
    for (const std::string& f : on_disk) {
        SCOPED_TRACE(f);
        ASSERT_TRUE(shipped().count(f));
        const ShippedMesh& s = shipped().at(f);
        // Every `_N` file but avatar_eye_1.llm (a base file with no `reference`) is an LOD.
        const bool lod_name = f.find('_', 7) != std::string::npos && std::isdigit(f[f.size() - 5]);
        EXPECT_EQ(s.mesh.kind == LlmFileKind::Lod, lod_name && f != "avatar_eye_1.llm");
        EXPECT_EQ(write_llm(s.mesh), file_bytes(kCharacterDir / f));
        if (s.mesh.kind == LlmFileKind::Lod) {
            EXPECT_TRUE(s.mesh.coords.empty() && s.mesh.morphs.empty());
            EXPECT_EQ(s.mesh.trailing.size(), 70u);  // an unread empty base tail
            const Result<bool> ok = check_llm_lod(s.mesh, shipped().at(s.def.reference).mesh);
            EXPECT_TRUE(ok.ok()) << ok.error().describe();
            EXPECT_LE(s.mesh.num_vertices(), shipped().at(s.def.reference).mesh.num_vertices());
        } else {
            EXPECT_TRUE(s.mesh.trailing.empty());
            for (const LlmMorph& m : s.mesh.morphs)
                for (const std::uint32_t v : m.vertices) EXPECT_LT(v, s.mesh.coords.size()) << m.name;
        }
    }
}

TEST(LlmShipped, CountsMatchTheSpec) {
    SKIP_WITHOUT_CHARACTER();
    const auto& m = [](const char* f) -> const LlmMesh& { return shipped().at(f).mesh; };
    std::size_t total = 0;
    for (const char* f : {"avatar_head.llm", "avatar_upper_body.llm", "avatar_lower_body.llm", "avatar_hair.llm",
                          "avatar_eyelashes.llm", "avatar_skirt.llm", "avatar_eye.llm"})
        total += m(f).num_vertices();
    EXPECT_EQ(total, 5322u);

    const LlmMesh& upper = m("avatar_upper_body.llm");
    EXPECT_EQ(upper.coords.size(), 2211u);
    EXPECT_EQ(upper.faces.size(), 3688u);
    EXPECT_EQ(upper.morphs.size(), 30u);
    EXPECT_EQ(upper.skin_joints,
              (std::vector<std::string>{"mChest", "mCollarLeft", "mCollarRight", "mElbowLeft", "mElbowRight",
                                        "mNeck", "mPelvis", "mShoulderLeft", "mShoulderRight", "mTorso",
                                        "mWristLeft", "mWristRight"}));
    ASSERT_EQ(upper.skin_joint_name_tails.size(), 12u);
    EXPECT_EQ(upper.skin_joint_name_tails[5], "Right");  // "mNeck\0Right": stale exporter bytes
    EXPECT_EQ(upper.weights.size(), 2211u);
    EXPECT_EQ(*std::max_element(upper.weights.begin(), upper.weights.end()), 14.f);
    EXPECT_EQ(upper.remaps.size(), 342u);

    const LlmMesh& head = m("avatar_head.llm");
    EXPECT_EQ(head.coords.size(), 1132u);
    EXPECT_EQ(head.faces.size(), 1844u);
    EXPECT_EQ(head.morphs.size(), 95u);
    EXPECT_EQ(head.skin_joints, (std::vector<std::string>{"mHead", "mNeck"}));
    EXPECT_NE(head.find_morph("Express_Smile"), nullptr);

    const LlmMesh& lower = m("avatar_lower_body.llm");
    EXPECT_EQ(lower.coords.size(), 977u);
    EXPECT_EQ(lower.faces.size(), 1654u);
    EXPECT_EQ(lower.morphs.size(), 24u);
    EXPECT_EQ(lower.skin_joints.size(), 7u);

    const LlmMesh& eye = m("avatar_eye.llm");
    EXPECT_FALSE(eye.has_weights);  // rigid
    EXPECT_TRUE(eye.weights.empty() && eye.skin_joints.empty());
    EXPECT_EQ(eye.coords.size(), 145u);
    EXPECT_EQ(m("avatar_eye_1.llm").kind, LlmFileKind::Base);
    EXPECT_EQ(upper.position, (Vec3{0.f, 9.f, 0.f}));
    EXPECT_FALSE(upper.has_detail_texcoords_flag);
    EXPECT_EQ(m("avatar_head_1.llm").faces.size(), 1290u);
}

TEST(LlmShipped, DamagedRealFilesGiveOffsets) {
    SKIP_WITHOUT_CHARACTER();
    const std::vector<std::byte> full = file_bytes(kCharacterDir / "avatar_upper_body.llm");
    for (std::size_t cut : {std::size_t{10}, std::size_t{60}, std::size_t{5000}, std::size_t{200000},
                            full.size() / 2, full.size() - 2800, full.size() - 64 * 3}) {
        const Result<LlmMesh> r = parse_llm(std::span(full).first(cut), LlmFileKind::Base);
        ASSERT_FALSE(r.ok()) << cut;
        EXPECT_LE(r.error().offset, static_cast<long long>(cut));
    }
    // The first morph's first vertex index set past the viewer's limit.
    const LlmMesh& upper = shipped().at("avatar_upper_body.llm").mesh;
    std::size_t morph_at = 63 + 2 + upper.coords.size() * 48 + 2 + upper.faces.size() * 6 + 2 +
                           upper.skin_joints.size() * 64;
    std::vector<std::byte> b = full;
    poke<std::uint32_t>(b, morph_at + 64 + 4, 40000);
    const Result<LlmMesh> r = parse_llm(b, LlmFileKind::Base);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().offset, static_cast<long long>(morph_at + 68));
    EXPECT_NE(r.error().message.find(upper.morphs[0].name), std::string::npos);
}

}  // namespace
}  // namespace slanim
