// SPDX-License-Identifier: MIT
// The viewer's binary avatar mesh format, `.llm` ("Linden Binary Mesh 1.0"), spec §6.5
// (`LLPolyMeshSharedData::loadMesh`).
//
// LlmMesh is the raw model of one file, exactly as stored (little-endian on disk). A base mesh
// (avatar_head.llm, …) carries vertices, skin weights, faces, skin joint names, morph targets
// and the seam-welding remap table; an LOD file (avatar_head_1.llm, …, `reference=` in
// avatar_lad.xml) carries only the header and faces that index its base mesh's vertices.
//
// Frames and units as in the files: SL avatar space (X forward, Y left, Z up), metres; texture
// coordinates in [0,1]; the header rotation in degrees.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slanim/core/math.hpp"
#include "slanim/core/result.hpp"

namespace slanim {

/// Which of the two layouts a file has. avatar_lad.xml says it: a `<mesh>` with a `reference`
/// attribute (lod > 0) is an LOD file.
enum class LlmFileKind : std::uint8_t { Base, Lod };

/// One morph target of a base mesh (`LLPolyMorphData::loadBinary`): sparse per-vertex deltas.
/// All arrays have the same length (the morph's vertex count). Deltas are added scaled by the
/// change of the param weight (spec §6.2).
struct LlmMorph {
    std::string name;                    ///< e.g. "Big_Belly_Torso"; matches a visual param name
    std::vector<std::uint32_t> vertices; ///< base-mesh vertex index of each entry (< num vertices)
    std::vector<Vec3> coords;            ///< position deltas, metres
    std::vector<Vec3> normals;           ///< normal deltas
    std::vector<Vec3> binormals;         ///< binormal deltas (may be degenerate; see §6.2)
    std::vector<Vec2> texcoords;         ///< texture-coordinate deltas

    friend bool operator==(const LlmMorph&, const LlmMorph&) = default;
};

/// One entry of the shared-vertex (seam) remap table (`mSharedVerts`): vertex `source` is a seam
/// duplicate of vertex `target`. The viewer uses it in one place only: when it samples a clothing
/// morph mask for `source` it reads `target`'s texture coordinates
/// (`LLPolyVertexMask::generateMask`). Both indices are < the base mesh's vertex count.
struct LlmRemap {
    std::int32_t source = 0;
    std::int32_t target = 0;
    friend bool operator==(const LlmRemap&, const LlmRemap&) = default;
};

/// The raw model of one `.llm` file.
struct LlmMesh {
    LlmFileKind kind = LlmFileKind::Base;
    bool has_weights = false;
    /// The header's hasDetailTexCoords byte as stored. The viewer reads but never stores it, so
    /// detail texture coordinates are never read (no shipped file sets it).
    bool has_detail_texcoords_flag = false;
    Vec3 position;                 ///< header position (not used for skinning)
    Vec3 rotation_deg;             ///< header rotation angles, degrees
    std::uint8_t rotation_order = 0;  ///< as stored; the viewer ignores it (uses XYZ)
    Vec3 scale{1.f, 1.f, 1.f};

    // Base meshes only (empty for LOD files): one entry per vertex.
    std::vector<Vec3> coords;      ///< bind-pose positions, metres, avatar frame
    std::vector<Vec3> normals;
    std::vector<Vec3> binormals;
    std::vector<Vec2> texcoords;
    /// SL skin weight per vertex when has_weights: integer part = index into the expanded joint
    /// list, fraction = blend toward the next entry (spec §6.6, slanim/core/skinning.hpp).
    std::vector<float> weights;

    /// Triangles, counter-clockwise, as vertex indices (base: into coords; LOD: into the base
    /// mesh's vertices). Stored as S16 in the file; validated non-negative.
    std::vector<std::array<std::uint32_t, 3>> faces;

    // Base meshes only.
    std::vector<std::string> skin_joints;  ///< skin joint names in file order (when has_weights)
    /// Bytes after the NUL of each skin joint name's 64-byte field, trailing zeros removed:
    /// stale buffer contents that the exporter left (the shipped lower_body, skirt and
    /// upper_body files have them, e.g. "mNeck\0Right"). The viewer ignores them; they are kept so
    /// that write_llm reproduces a file byte for byte. Empty, or one entry per skin joint.
    std::vector<std::string> skin_joint_name_tails;
    std::vector<LlmMorph> morphs;          ///< in file order, up to "End Morphs"
    std::vector<LlmRemap> remaps;          ///< optional seam remap table

    /// Bytes after the last section the viewer reads, kept verbatim. Every shipped LOD file has
    /// 70: an empty base-mesh tail (U16 0 skin joints, "End Morphs", S32 0 remaps) that the
    /// viewer never reads. A base file may end with 1–3 bytes too short for a remap count.
    std::vector<std::byte> trailing;

    /// Vertices this mesh addresses: coords.size() for a base mesh, max face index + 1 for an
    /// LOD (the viewer's `mNumVertices` for LODs).
    [[nodiscard]] std::size_t num_vertices() const;
    /// The morph with this name (exact match), or nullptr.
    [[nodiscard]] const LlmMorph* find_morph(std::string_view name) const;

    friend bool operator==(const LlmMesh&, const LlmMesh&) = default;
};

/// Largest morph vertex index the viewer accepts (`LLPolyMorphData::loadBinary`).
inline constexpr std::uint32_t kLlmMaxMorphVertexIndex = 10000;

/// Parses `.llm` bytes of the given kind (`LLPolyMeshSharedData::loadMesh`). Errors carry the
/// byte offset (Error::offset) and what was expected. Rules, as the viewer reads the file:
///  * the first 22 bytes must be "Linden Binary Mesh 1.0" (bytes 22–23 are not checked); the
///    viewer reads 128 bytes for the check but only warns when the file is shorter;
///  * an LOD file has no vertex sections, no skin joints, morphs or remaps: what follows its
///    faces is kept in `trailing`;
///  * "End Morphs" ends the morph list; the remap table after it is optional (absent when fewer
///    than 4 bytes remain; those bytes go to `trailing`), anything after the table is trailing.
/// Where the viewer reads garbage or indexes out of bounds, the file is rejected instead:
///  * a morph vertex index > kLlmMaxMorphVertexIndex: the viewer drops that morph but has
///    consumed only part of its record, so it reads every later morph out of alignment;
///  * a file that ends inside a morph record or before "End Morphs" (the viewer drops the
///    partial morph with a warning and accepts the rest);
///  * negative counts, counts larger than the bytes left, face or morph indices outside the
///    mesh, remap indices outside the mesh, non-finite floats, negative skin weights.
Result<LlmMesh> parse_llm(std::span<const std::byte> data, LlmFileKind kind);
/// Reads and parses a file; errors are prefixed with the path.
Result<LlmMesh> load_llm(const std::filesystem::path& path, LlmFileKind kind);
/// Serializes to the exact on-disk layout (parse_llm(write_llm(m), m.kind) == m for any mesh
/// parse_llm returned; every shipped file comes out byte-identical). Header bytes 22–23 and the
/// padding after morph names are written as zeros; a remap count is always written for a base
/// mesh. Precondition: names fit their 64-byte fields (at most 64 bytes including tails).
std::vector<std::byte> write_llm(const LlmMesh& mesh);

/// Checks an LOD mesh against its base (`reference=` in avatar_lad.xml): every face index must
/// address a base vertex (the viewer only asserts it). Errors name the face.
Result<bool> check_llm_lod(const LlmMesh& lod, const LlmMesh& base);

}  // namespace slanim
