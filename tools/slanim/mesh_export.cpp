// SPDX-License-Identifier: MIT
#include "mesh_export.hpp"

#include <fmt/format.h>
#include <tiny_gltf.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "slanim/core/skinning.hpp"
#include "slanim/runtime/appearance.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/gltf/accessor.hpp"

namespace slanim::cli {

namespace {

std::string lower(std::string_view s) {
    std::string r(s);
    for (char& ch : r) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return r;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

/// A whole non-negative integer, or nullopt.
std::optional<long long> parse_index(std::string_view s) {
    long long v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || s.front() == '-' || ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
    return v;
}

}  // namespace

std::optional<MeshFormat> parse_mesh_format(std::string_view name) {
    const std::string n = lower(name);
    if (n == "obj") return MeshFormat::Obj;
    if (n == "gltf") return MeshFormat::Gltf;
    if (n == "glb") return MeshFormat::Glb;
    return std::nullopt;
}

std::optional<MeshFormat> mesh_format_for_path(std::string_view path) {
    const auto dot = path.rfind('.');
    const auto slash = path.find_last_of("/\\");
    if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) return std::nullopt;
    return parse_mesh_format(path.substr(dot + 1));
}

// ---------------------------------------------------------------------------------------------
// Snapshot
// ---------------------------------------------------------------------------------------------

SkinnedMeshSnapshot::SkinnedMeshSnapshot(const Appearance& appearance) {
    const AppearanceModel& model = appearance.model();
    for (const SkinnedMesh& sm : appearance.skinned()) {
        const AppearanceMesh& src = model.meshes()[static_cast<std::size_t>(sm.mesh)];
        ExportMesh m;
        m.name = src.type;
        m.positions.resize(src.num_vertices());
        m.normals.resize(src.num_vertices());
        m.texcoords.resize(src.texcoords.size());
        m.faces = src.faces;
        meshes_.push_back(std::move(m));
    }
}

void SkinnedMeshSnapshot::capture(const Appearance& appearance) {
    const auto skinned = appearance.skinned();
    const auto buffers = appearance.state().meshes();
    const std::size_t n = std::min(skinned.size(), meshes_.size());
    for (std::size_t k = 0; k < n; ++k) {
        const SkinnedMesh& sm = skinned[k];
        ExportMesh& m = meshes_[k];
        if (sm.positions.size() >= m.positions.size()) soa_to_aos(sm.positions.in(), m.positions);
        if (sm.normals.size() >= m.normals.size()) soa_to_aos(sm.normals.in(), m.normals);
        const MeshBuffers& b = buffers[static_cast<std::size_t>(sm.mesh)];
        if (b.texcoords.size() == m.texcoords.size())
            std::copy(b.texcoords.begin(), b.texcoords.end(), m.texcoords.begin());
    }
}

std::size_t SkinnedMeshSnapshot::num_vertices() const {
    std::size_t n = 0;
    for (const ExportMesh& m : meshes_) n += m.positions.size();
    return n;
}

std::size_t SkinnedMeshSnapshot::num_faces() const {
    std::size_t n = 0;
    for (const ExportMesh& m : meshes_) n += m.faces.size();
    return n;
}

// ---------------------------------------------------------------------------------------------
// OBJ
// ---------------------------------------------------------------------------------------------

std::string encode_obj(std::span<const ExportMesh> meshes, std::string_view comment) {
    fmt::memory_buffer out;
    auto it = std::back_inserter(out);
    std::size_t line_start = 0;
    while (line_start <= comment.size() && !comment.empty()) {
        const auto nl = comment.find('\n', line_start);
        const std::string_view line =
            comment.substr(line_start, nl == std::string_view::npos ? std::string_view::npos : nl - line_start);
        fmt::format_to(it, "# {}\n", line);
        if (nl == std::string_view::npos) break;
        line_start = nl + 1;
    }
    std::size_t base = 1;  // OBJ indices are 1-based and global
    for (const ExportMesh& m : meshes) {
        fmt::format_to(it, "g {}\n", m.name);
        for (const Vec3& p : m.positions) fmt::format_to(it, "v {} {} {}\n", p.x, p.y, p.z);
        for (const Vec3& n : m.normals) fmt::format_to(it, "vn {} {} {}\n", n.x, n.y, n.z);
        for (const Vec2& t : m.texcoords) fmt::format_to(it, "vt {} {}\n", t.x, t.y);
        const bool uv = m.texcoords.size() == m.positions.size();
        for (const auto& f : m.faces) {
            const std::size_t a = base + f[0], b = base + f[1], c = base + f[2];
            if (uv) fmt::format_to(it, "f {0}/{0}/{0} {1}/{1}/{1} {2}/{2}/{2}\n", a, b, c);
            else fmt::format_to(it, "f {0}//{0} {1}//{1} {2}//{2}\n", a, b, c);
        }
        base += m.positions.size();
    }
    return fmt::to_string(out);
}

// ---------------------------------------------------------------------------------------------
// glTF
// ---------------------------------------------------------------------------------------------

Result<std::vector<std::uint8_t>> encode_gltf(std::span<const ExportMesh> meshes, MeshFormat format,
                                              std::string_view comment) {
    if (format == MeshFormat::Obj) return Error{"encode_gltf: the format must be gltf or glb"};
    tinygltf::Model m;
    m.asset.version = "2.0";
    m.asset.generator = "slanim";
    if (!comment.empty()) {
        tinygltf::Value::Object extras;
        extras["comment"] = tinygltf::Value(std::string(comment));
        m.asset.extras = tinygltf::Value(std::move(extras));
    }
    m.buffers.resize(1);

    tinygltf::Node root;
    root.name = "avatar";
    // Column-major: SL X (forward) → glTF +Z, SL Y (left) → glTF +X, SL Z (up) → glTF +Y.
    root.matrix = {0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1};

    std::vector<float> uv;
    std::vector<std::uint32_t> indices;
    for (const ExportMesh& em : meshes) {
        const std::size_t n = em.positions.size();
        if (n > std::numeric_limits<std::uint32_t>::max())
            return Error{fmt::format("mesh {}: too many vertices for 32-bit indices", em.name)};
        tinygltf::Primitive prim;
        prim.mode = TINYGLTF_MODE_TRIANGLES;
        if (n > 0) {
            Vec3 lo = em.positions[0], hi = em.positions[0];
            for (const Vec3& p : em.positions) {
                lo = {std::min(lo.x, p.x), std::min(lo.y, p.y), std::min(lo.z, p.z)};
                hi = {std::max(hi.x, p.x), std::max(hi.y, p.y), std::max(hi.z, p.z)};
            }
            const int pos = gltf::add_accessor(m, em.positions.data(), n * sizeof(Vec3), n, TINYGLTF_TYPE_VEC3,
                                         TINYGLTF_COMPONENT_TYPE_FLOAT, TINYGLTF_TARGET_ARRAY_BUFFER);
            m.accessors[static_cast<std::size_t>(pos)].minValues = {lo.x, lo.y, lo.z};
            m.accessors[static_cast<std::size_t>(pos)].maxValues = {hi.x, hi.y, hi.z};
            prim.attributes["POSITION"] = pos;
            if (em.normals.size() == n)
                prim.attributes["NORMAL"] =
                    gltf::add_accessor(m, em.normals.data(), n * sizeof(Vec3), n, TINYGLTF_TYPE_VEC3,
                                 TINYGLTF_COMPONENT_TYPE_FLOAT, TINYGLTF_TARGET_ARRAY_BUFFER);
            if (em.texcoords.size() == n) {
                uv.resize(2 * n);
                for (std::size_t i = 0; i < n; ++i) {  // glTF puts the UV origin at the top left
                    uv[2 * i] = em.texcoords[i].x;
                    uv[2 * i + 1] = 1.f - em.texcoords[i].y;
                }
                prim.attributes["TEXCOORD_0"] =
                    gltf::add_accessor(m, uv.data(), uv.size() * sizeof(float), n, TINYGLTF_TYPE_VEC2,
                                 TINYGLTF_COMPONENT_TYPE_FLOAT, TINYGLTF_TARGET_ARRAY_BUFFER);
            }
        }
        if (!em.faces.empty()) {
            indices.clear();
            for (const auto& f : em.faces) {
                for (std::uint32_t v : f) {
                    if (v >= n)
                        return Error{fmt::format("mesh {}: face index {} out of range ({} vertices)", em.name, v, n)};
                    indices.push_back(v);
                }
            }
            prim.indices = gltf::add_accessor(m, indices.data(), indices.size() * sizeof(std::uint32_t), indices.size(),
                                        TINYGLTF_TYPE_SCALAR, TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT,
                                        TINYGLTF_TARGET_ELEMENT_ARRAY_BUFFER);
        }
        tinygltf::Mesh mesh;
        mesh.name = em.name;
        if (!prim.attributes.empty()) mesh.primitives.push_back(std::move(prim));
        if (mesh.primitives.empty()) continue;  // glTF meshes need a primitive: skip empty meshes
        m.meshes.push_back(std::move(mesh));
        tinygltf::Node node;
        node.name = em.name;
        node.mesh = static_cast<int>(m.meshes.size()) - 1;
        m.nodes.push_back(std::move(node));
        root.children.push_back(static_cast<int>(m.nodes.size()) - 1);
    }
    m.nodes.push_back(std::move(root));
    tinygltf::Scene scene;
    scene.name = "slanim";
    scene.nodes = {static_cast<int>(m.nodes.size()) - 1};
    m.scenes.push_back(std::move(scene));
    m.defaultScene = 0;
    if (m.buffers[0].data.empty()) m.buffers.clear();

    std::ostringstream os(std::ios::out | std::ios::binary);
    tinygltf::TinyGLTF gltf;
    if (!gltf.WriteGltfSceneToStream(&m, os, format == MeshFormat::Gltf, format == MeshFormat::Glb))
        return Error{"glTF: cannot serialise the asset"};
    const std::string s = std::move(os).str();
    return std::vector<std::uint8_t>(s.begin(), s.end());
}

Result<bool> write_mesh_file(const std::string& path, std::span<const ExportMesh> meshes, MeshFormat format,
                             std::string_view comment) {
    if (format == MeshFormat::Obj) {
        const std::string text = encode_obj(meshes, comment);
        return write_file_atomic(path, {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
    }
    auto bytes = encode_gltf(meshes, format, comment);
    if (!bytes) {
        Error e = bytes.error();
        e.message = fmt::format("{}: {}", path, e.message);
        return e;
    }
    return write_file_atomic(path, *bytes);
}

// ---------------------------------------------------------------------------------------------
// Frame lists and file name patterns
// ---------------------------------------------------------------------------------------------

Result<std::vector<long long>> parse_mesh_frames(std::string_view list, long long num_frames, double fps) {
    std::set<long long> frames;
    const long long last = num_frames - 1;
    std::size_t start = 0;
    while (true) {
        const auto comma = list.find(',', start);
        const std::string_view raw =
            list.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        const std::string_view item = trim(raw);
        const auto bad = [&](std::string_view why) {
            return Error{fmt::format("--mesh-frames: item \"{}\": {}", item, why)};
        };
        const auto past = [&](long long f) {
            return Error{fmt::format("--mesh-frames: item \"{}\": frame {} is past the last frame {} ({} frames at {} fps)",
                                     item, f, last, num_frames, fps)};
        };
        if (item.empty())
            return Error{"--mesh-frames: empty item (expected all, N, A-B, A-B/S or Ts, separated by commas)"};
        if (lower(item) == "all") {
            for (long long f = 0; f <= last; ++f) frames.insert(f);
        } else if (item.back() == 's' || item.back() == 'S') {
            const std::string num(item.substr(0, item.size() - 1));
            double t = 0.0;
            const auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), t);
            if (num.empty() || ec != std::errc{} || p != num.data() + num.size() || !std::isfinite(t))
                return bad("expected a time in seconds such as 1.5s");
            if (t < 0.0) return bad("negative time");
            const double f = std::floor(t * fps + 0.5);
            if (f > static_cast<double>(last)) return past(static_cast<long long>(std::min(f, 1e15)));
            frames.insert(static_cast<long long>(f));
        } else if (const auto dash = item.find('-'); dash != std::string_view::npos && dash > 0) {
            std::string_view rest = item.substr(dash + 1);
            long long step = 1;
            if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
                const auto s = parse_index(rest.substr(slash + 1));
                if (!s || *s < 1) return bad("the step after / must be a whole number ≥ 1");
                step = *s;
                rest = rest.substr(0, slash);
            }
            const auto a = parse_index(item.substr(0, dash));
            const auto b = parse_index(rest);
            if (!a || !b) return bad("expected a frame range A-B or A-B/S with whole numbers");
            if (*b < *a) return bad("the range ends before it starts");
            if (*b > last) return past(*b);
            for (long long f = *a; f <= *b; f += step) frames.insert(f);
        } else {
            const auto f = parse_index(item);
            if (!f) {
                if (!item.empty() && item.front() == '-') return bad("negative frame");
                return bad("expected all, a frame number N, a range A-B or A-B/S, or a time such as 1.5s");
            }
            if (*f > last) return past(*f);
            frames.insert(*f);
        }
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return std::vector<long long>(frames.begin(), frames.end());
}

Result<bool> check_mesh_pattern(std::string_view pattern, std::span<const long long> frames, double fps) {
    if (pattern.empty()) return Error{"--mesh-out: empty file name pattern"};
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] != '%') continue;
        if (i + 1 >= pattern.size())
            return Error{fmt::format("--mesh-out {}: a lone % at the end (use %f, %t or %%)", pattern)};
        const char c = pattern[i + 1];
        if (c != 'f' && c != 't' && c != '%')
            return Error{fmt::format("--mesh-out {}: unknown escape %{} (use %f frame, %t time, %% percent)", pattern, c)};
        ++i;
    }
    std::map<std::string, long long> names;
    for (long long f : frames) {
        const auto [it, fresh] = names.emplace(expand_mesh_pattern(pattern, f, fps), f);
        if (!fresh)
            return Error{fmt::format(
                "--mesh-out {}: frames {} and {} would both be written to {}; put %f (frame) or %t (time) in "
                "the pattern",
                pattern, it->second, f, it->first)};
    }
    return true;
}

std::string expand_mesh_pattern(std::string_view pattern, long long frame, double fps) {
    std::string out;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] == '%' && i + 1 < pattern.size()) {
            const char c = pattern[++i];
            if (c == 'f') out += fmt::format("{:04}", frame);
            else if (c == 't') out += fmt::format("{:.3f}", static_cast<double>(frame) / fps);
            else out += c;
            continue;
        }
        out += pattern[i];
    }
    return out;
}

}  // namespace slanim::cli
