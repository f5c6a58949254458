// SPDX-License-Identifier: MIT
// `slanim play --mesh-out`: the skinned (morphed + skinned) avatar meshes of chosen frames
// written as Wavefront OBJ or glTF 2.0 (.gltf with an embedded buffer, or .glb), one file per
// frame. Also the reusable array-of-structures snapshot of an Appearance's skinned meshes that
// the renderer draws. See docs/mesh-output.md.
//
// Frames and units: vertex data is in the SL avatar-root frame (X forward, Y left, Z up),
// metres — the frame of `slanim play`'s pose CSV. The glTF files keep that data and put the
// meshes under a root node whose matrix turns it into glTF's Y-up frame (+Z forward).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slanim/core/math.hpp"
#include "slanim/core/result.hpp"

namespace slanim {
class Appearance;  // slanim/runtime/appearance.hpp
}  // namespace slanim

namespace slanim::cli {

/// A mesh file format.
enum class MeshFormat : std::uint8_t {
    Obj,   ///< Wavefront OBJ: v/vn/vt and faces, one group (`g`) per mesh
    Gltf,  ///< glTF 2.0 JSON with the buffer embedded as a base64 data URI
    Glb,   ///< binary glTF 2.0 (one file, the buffer in its BIN chunk)
};

/// "obj", "gltf" or "glb"; nullopt otherwise.
std::optional<MeshFormat> parse_mesh_format(std::string_view name);
/// The format of a path's extension (.obj, .gltf, .glb; case-insensitive), or nullopt.
std::optional<MeshFormat> mesh_format_for_path(std::string_view path);

/// One mesh of a snapshot (array of structures, avatar-root frame).
struct ExportMesh {
    std::string name;                ///< the avatar_lad.xml mesh type, e.g. "headMesh"
    std::vector<Vec3> positions;     ///< metres
    std::vector<Vec3> normals;       ///< unit (a zero normal stays zero)
    std::vector<Vec2> texcoords;     ///< the morphed texture coordinates, OpenGL convention (v up)
    std::span<const std::array<std::uint32_t, 3>> faces;  ///< triangles, into the model's data
};

/// The skinned meshes of one Appearance as AoS arrays, refilled in place each frame.
class SkinnedMeshSnapshot {
public:
    /// Allocates one ExportMesh per skinned mesh of `appearance` (same order as
    /// Appearance::skinned()). The appearance's model must outlive the snapshot (faces point
    /// into it).
    explicit SkinnedMeshSnapshot(const Appearance& appearance);

    /// Copies the appearance's current skinned positions and normals (soa_to_aos) and morphed
    /// texture coordinates. `appearance` must be the one (or built from the same model as the
    /// one) given to the constructor. No allocation.
    void capture(const Appearance& appearance);

    [[nodiscard]] std::span<const ExportMesh> meshes() const { return meshes_; }
    [[nodiscard]] std::size_t num_vertices() const;
    [[nodiscard]] std::size_t num_faces() const;

private:
    std::vector<ExportMesh> meshes_;
};

/// The OBJ text: `comment` lines as `#` comments (line breaks start new comment lines), then per
/// mesh `g NAME`, its `v` / `vn` / `vt` lines (shortest round-trip float text) and its faces as
/// `f a/a/a b/b/b c/c/c` (1-based indices, continuing across meshes).
std::string encode_obj(std::span<const ExportMesh> meshes, std::string_view comment);

/// A glTF 2.0 asset: one buffer; per mesh a node and a mesh with one triangle primitive
/// (POSITION with min/max, NORMAL, TEXCOORD_0 with v flipped to glTF's top-left origin, and
/// uint32 indices); every node a child of one root node "avatar" whose matrix maps the SL frame
/// (X forward, Y left, Z up) to glTF's (+Z forward, +X left, Y up). `format` is Gltf (JSON
/// text, buffer as a data URI) or Glb. `comment` goes to asset.extras.comment.
Result<std::vector<std::uint8_t>> encode_gltf(std::span<const ExportMesh> meshes, MeshFormat format,
                                              std::string_view comment);

/// Encodes `meshes` in `format` and writes the file atomically (write_file_atomic). Errors name
/// the path.
Result<bool> write_mesh_file(const std::string& path, std::span<const ExportMesh> meshes,
                             MeshFormat format, std::string_view comment);

/// Parses `--mesh-frames LIST` for a run of `num_frames` frames (frame f at t = f / fps):
/// comma-separated items, each `all`, a frame `N`, an inclusive range `A-B`, a range with a step
/// `A-B/S`, or a time `Ts` (seconds, e.g. `1.5s`: the frame nearest T). Returns the frames sorted,
/// without repeats. Errors (naming the item): an empty or malformed item, a negative frame, a
/// frame or time past the last frame, a reversed range, a step < 1.
Result<std::vector<long long>> parse_mesh_frames(std::string_view list, long long num_frames, double fps);

/// Checks a `--mesh-out` pattern: `%f` (frame number, zero-padded to 4 digits), `%t` (time in
/// seconds with 3 decimals) and `%%` (a percent sign) are the only escapes; every selected frame
/// must get its own file name (so several frames need %f or %t). Errors say why.
Result<bool> check_mesh_pattern(std::string_view pattern, std::span<const long long> frames, double fps);
/// The file name of frame `frame` (time frame / fps). Precondition: check_mesh_pattern passed.
std::string expand_mesh_pattern(std::string_view pattern, long long frame, double fps);

}  // namespace slanim::cli
