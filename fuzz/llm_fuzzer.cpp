// SPDX-License-Identifier: MIT
// libFuzzer target for the `.llm` reader and writer: the input is parsed as a base mesh and as
// an LOD mesh, and each successful result goes through write_llm → parse_llm.
//
// Properties checked (a violation aborts, which libFuzzer reports as a crash):
//  * no crash, no sanitizer finding, no huge allocation (counts are checked against the bytes
//    left before anything is allocated), whatever the bytes;
//  * an error carries a byte offset inside the input (0 … size) and no line;
//  * a parsed mesh keeps parse_llm's guarantees: per-vertex arrays of one length, a weight per
//    vertex exactly when has_weights, faces and morph entries indexing the mesh's vertices
//    (morph indices also ≤ 10000), remaps inside the mesh, finite floats, non-negative
//    weights, an LOD with no vertex data, skin joint name tails empty or one per joint;
//  * parse_llm(write_llm(m)) == m and write_llm is idempotent.
//
// Run:   slanim_fuzz_llm -max_total_time=60 NEW_CORPUS_DIR SEED_DIR...
// (scripts/fuzz.sh passes a scratch copy of fuzz/corpus/llm/, when present, as the first,
// writable folder and copies ../shared/sl-character/*.llm into a separate seed folder after
// it.) Synthetic seeds (a small base mesh with every section, an LOD, a file without remap
// table):
// `slanim_fuzz_llm -write_seeds=DIR`.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "fuzz_seeds.hpp"
#include "slanim/appearance/llm.hpp"

namespace {

using namespace slanim;

constexpr const char* kFuzzTarget = "slanim_fuzz_llm";

bool finite(Vec3 v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }
bool finite(Vec2 v) { return std::isfinite(v.x) && std::isfinite(v.y); }

void check_mesh(const LlmMesh& m, std::size_t size) {
    const std::size_t n = m.coords.size();
    SLANIM_FUZZ_CHECK(finite(m.position) && finite(m.rotation_deg) && finite(m.scale), size);
    if (m.kind == LlmFileKind::Lod) {
        SLANIM_FUZZ_CHECK(n == 0 && m.normals.empty() && m.weights.empty() && m.skin_joints.empty() &&
                              m.morphs.empty() && m.remaps.empty(),
                          size);
        return;
    }
    SLANIM_FUZZ_CHECK(m.normals.size() == n && m.binormals.size() == n && m.texcoords.size() == n, size);
    SLANIM_FUZZ_CHECK(m.weights.size() == (m.has_weights ? n : 0), size);
    SLANIM_FUZZ_CHECK(m.num_vertices() == n, size);
    for (std::size_t i = 0; i < n; ++i)
        SLANIM_FUZZ_CHECK(finite(m.coords[i]) && finite(m.normals[i]) && finite(m.binormals[i]) &&
                              finite(m.texcoords[i]),
                          size);
    for (const float w : m.weights) SLANIM_FUZZ_CHECK(std::isfinite(w) && w >= 0.f, size);
    for (const auto& f : m.faces)
        for (const std::uint32_t v : f) SLANIM_FUZZ_CHECK(v < n, size);
    SLANIM_FUZZ_CHECK(m.has_weights || m.skin_joints.empty(), size);
    SLANIM_FUZZ_CHECK(m.skin_joint_name_tails.empty() || m.skin_joint_name_tails.size() == m.skin_joints.size(),
                      size);
    for (const std::string& j : m.skin_joints) SLANIM_FUZZ_CHECK(j.size() <= 64, size);
    for (const LlmMorph& morph : m.morphs) {
        const std::size_t k = morph.vertices.size();
        SLANIM_FUZZ_CHECK(morph.name.size() <= 64 && morph.name != "End Morphs", size);
        SLANIM_FUZZ_CHECK(morph.coords.size() == k && morph.normals.size() == k && morph.binormals.size() == k &&
                              morph.texcoords.size() == k,
                          size);
        for (std::size_t i = 0; i < k; ++i) {
            SLANIM_FUZZ_CHECK(morph.vertices[i] < n && morph.vertices[i] <= kLlmMaxMorphVertexIndex, size);
            SLANIM_FUZZ_CHECK(finite(morph.coords[i]) && finite(morph.normals[i]) && finite(morph.binormals[i]) &&
                                  finite(morph.texcoords[i]),
                              size);
        }
    }
    for (const LlmRemap& r : m.remaps)
        SLANIM_FUZZ_CHECK(r.source >= 0 && r.target >= 0 && static_cast<std::size_t>(r.source) < n &&
                              static_cast<std::size_t>(r.target) < n,
                          size);
}

void run(std::span<const std::byte> data, LlmFileKind kind) {
    const std::size_t size = data.size();
    const Result<LlmMesh> r = parse_llm(data, kind);
    if (!r.ok()) {
        SLANIM_FUZZ_CHECK(r.error().offset >= 0 && r.error().offset <= static_cast<long long>(size), size);
        SLANIM_FUZZ_CHECK(r.error().line == -1 && !r.error().message.empty(), size);
        return;
    }
    SLANIM_FUZZ_CHECK(r->kind == kind, size);
    check_mesh(*r, size);
    const std::vector<std::byte> written = write_llm(*r);
    const Result<LlmMesh> again = parse_llm(written, kind);
    SLANIM_FUZZ_CHECK(again.ok(), size);
    SLANIM_FUZZ_CHECK(again.value() == r.value(), size);
    SLANIM_FUZZ_CHECK(write_llm(again.value()) == written, size);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
    const std::span<const std::byte> data(reinterpret_cast<const std::byte*>(bytes), size);
    run(data, LlmFileKind::Base);
    run(data, LlmFileKind::Lod);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Seed corpus generator: `slanim_fuzz_llm -write_seeds=DIR`.

namespace {

LlmMesh small_base() {
    LlmMesh m;
    m.has_weights = true;
    m.coords = {{0.f, 0.f, 0.f}, {1.f, 0.f, 0.f}, {0.f, 1.f, 0.f}, {0.f, 0.f, 1.f}};
    m.normals = {{0.f, 0.f, 1.f}, {0.f, 0.f, 1.f}, {0.f, 0.f, 1.f}, {1.f, 0.f, 0.f}};
    m.binormals = m.normals;
    m.texcoords = {{0.f, 0.f}, {1.f, 0.f}, {0.f, 1.f}, {1.f, 1.f}};
    m.weights = {1.f, 1.5f, 2.f, 2.25f};
    m.faces = {{0, 1, 2}, {2, 1, 3}};
    m.skin_joints = {"mPelvis", "mTorso", "mChest"};
    m.skin_joint_name_tails = {"", "ht", "Right"};
    LlmMorph a;
    a.name = "Big_Belly_Torso";
    a.vertices = {1, 3};
    a.coords = {{0.f, 0.f, 0.05f}, {0.01f, 0.f, 0.f}};
    a.normals = {{0.f, 0.f, 0.f}, {0.f, 1.f, 0.f}};
    a.binormals = {{0.f, 0.f, 0.f}, {0.f, 0.f, 0.f}};
    a.texcoords = {{0.f, 0.f}, {0.1f, 0.f}};
    LlmMorph empty;
    empty.name = "Empty_Morph";
    m.morphs = {a, empty};
    m.remaps = {{3, 0}, {2, 1}};
    return m;
}

std::vector<std::uint8_t> bytes_of(const std::vector<std::byte>& b) {
    std::vector<std::uint8_t> out(b.size());
    for (std::size_t i = 0; i < b.size(); ++i) out[i] = static_cast<std::uint8_t>(b[i]);
    return out;
}

std::vector<slanim::fuzz::Seed> seed_bytes() {
    std::vector<slanim::fuzz::Seed> out;
    LlmMesh base = small_base();
    out.emplace_back("small_base.llm", bytes_of(write_llm(base)));
    std::vector<std::uint8_t> no_remaps = bytes_of(write_llm(base));
    no_remaps.resize(no_remaps.size() - 4 - 16);  // ends after "End Morphs"
    out.emplace_back("no_remap_table.llm", no_remaps);
    LlmMesh rigid = base;
    rigid.has_weights = false;
    rigid.weights.clear();
    rigid.skin_joints.clear();
    rigid.skin_joint_name_tails.clear();
    rigid.trailing = {std::byte{1}, std::byte{2}};
    out.emplace_back("rigid_trailing.llm", bytes_of(write_llm(rigid)));
    LlmMesh lod;
    lod.kind = LlmFileKind::Lod;
    lod.has_weights = true;
    lod.faces = {{0, 1, 2}, {3, 2, 1}};
    LlmMesh tail;  // the empty base tail the shipped LOD files carry
    tail.kind = LlmFileKind::Base;
    tail.has_weights = false;
    const std::vector<std::byte> t = write_llm(tail);
    lod.trailing.assign(t.begin() + 63 + 2, t.end());
    out.emplace_back("lod.llm", bytes_of(write_llm(lod)));
    return out;
}

}  // namespace

// Runs before libFuzzer parses its flags: handles -write_seeds=DIR and exits.
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    slanim::fuzz::write_seeds_and_exit_if_asked(*argc, *argv, "slanim_fuzz_llm", seed_bytes);
    return 0;
}
