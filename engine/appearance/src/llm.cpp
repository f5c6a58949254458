// SPDX-License-Identifier: MIT
// `.llm` reader and writer (`LLPolyMeshSharedData::loadMesh`, `LLPolyMorphData::loadBinary`,
// spec §6.5). See llm.hpp for the rules and docs/appearance-formats.md for the layout.
#include "slanim/appearance/llm.hpp"
#include "slanim/formats/io.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <optional>
#include <string_view>
#include <utility>


namespace slanim {

static_assert(std::endian::native == std::endian::little, "the .llm codec assumes a little-endian host");

namespace {

constexpr std::string_view kMagic = "Linden Binary Mesh 1.0";  // HEADER_BINARY
constexpr std::size_t kHeaderSize = 24;                         // the reader seeks here
constexpr std::size_t kNameField = 64;                          // joint and morph names
constexpr std::string_view kEndMorphs = "End Morphs";
constexpr std::size_t kMorphVertexSize = 4 + 12 + 12 + 12 + 8;  // 48 bytes

// Bounds-checked little-endian reader; the first failure is kept with its offset.
class Reader {
public:
    explicit Reader(std::span<const std::byte> b) : b_(b) {}

    [[nodiscard]] std::size_t pos() const { return pos_; }
    [[nodiscard]] std::size_t remaining() const { return b_.size() - pos_; }
    [[nodiscard]] const std::optional<Error>& error() const { return err_; }

    bool fail(std::size_t at, std::string msg) {
        if (!err_) err_ = Error{std::move(msg), static_cast<long long>(at), -1};
        return false;
    }
    /// Fails unless `n` more bytes are there; `what` names the field for the message.
    bool need(std::size_t n, std::string_view what) {
        if (remaining() >= n) return true;
        return fail(pos_, fmt::format("truncated: {} needs {} byte(s), {} left", what, n, remaining()));
    }
    template <class T>
    bool read(T& out, std::string_view what) {
        if (!need(sizeof(T), what)) return false;
        std::memcpy(&out, b_.data() + pos_, sizeof(T));
        pos_ += sizeof(T);
        return true;
    }
    bool read_float(float& out, std::string_view what) {
        const std::size_t at = pos_;
        if (!read(out, what)) return false;
        if (!std::isfinite(out)) return fail(at, fmt::format("{} is not a finite number", what));
        return true;
    }
    bool read_vec3(Vec3& v, std::string_view what) {
        if (!need(12, what)) return false;
        return read_float(v.x, what) && read_float(v.y, what) && read_float(v.z, what);
    }
    bool read_vec2(Vec2& v, std::string_view what) {
        if (!need(8, what)) return false;
        return read_float(v.x, what) && read_float(v.y, what);
    }
    /// A 64-byte name field: the name up to the first NUL (all 64 bytes when there is none) and
    /// the bytes after that NUL with trailing zeros removed.
    bool read_name(std::string& name, std::string* tail, std::string_view what) {
        if (!need(kNameField, what)) return false;
        const char* f = reinterpret_cast<const char*>(b_.data() + pos_);
        const std::size_t len = std::find(f, f + kNameField, '\0') - f;
        name.assign(f, len);
        if (tail) {
            std::size_t end = kNameField;
            while (end > len + 1 && f[end - 1] == '\0') --end;
            if (len + 1 < end) tail->assign(f + len + 1, end - len - 1);
            else tail->clear();
        }
        pos_ += kNameField;
        return true;
    }
    void rest(std::vector<std::byte>& out) {
        out.assign(b_.begin() + static_cast<std::ptrdiff_t>(pos_), b_.end());
        pos_ = b_.size();
    }

private:
    std::span<const std::byte> b_;
    std::size_t pos_ = 0;
    std::optional<Error> err_;
};

bool read_vertices(Reader& r, LlmMesh& m) {
    std::uint16_t n = 0;
    if (!r.read(n, "vertex count")) return false;
    // Every section is checked against the bytes left before anything is allocated.
    const std::size_t per_vertex = 12 + 12 + 12 + 8 + (m.has_weights ? 4 : 0);
    if (!r.need(per_vertex * n, fmt::format("{} vertices ({} bytes each)", n, per_vertex))) return false;
    m.coords.resize(n);
    m.normals.resize(n);
    m.binormals.resize(n);
    m.texcoords.resize(n);
    for (std::size_t i = 0; i < n; ++i)
        if (!r.read_vec3(m.coords[i], fmt::format("position of vertex {}", i))) return false;
    for (std::size_t i = 0; i < n; ++i)
        if (!r.read_vec3(m.normals[i], fmt::format("normal of vertex {}", i))) return false;
    for (std::size_t i = 0; i < n; ++i)
        if (!r.read_vec3(m.binormals[i], fmt::format("binormal of vertex {}", i))) return false;
    for (std::size_t i = 0; i < n; ++i)
        if (!r.read_vec2(m.texcoords[i], fmt::format("texture coordinates of vertex {}", i))) return false;
    // Detail texture coordinates: the viewer never stores hasDetailTexCoords, so never reads them.
    if (m.has_weights) {
        m.weights.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t at = r.pos();
            if (!r.read_float(m.weights[i], fmt::format("skin weight of vertex {}", i))) return false;
            if (m.weights[i] < 0.f)
                return r.fail(at, fmt::format("skin weight of vertex {} is negative ({})", i, m.weights[i]));
        }
    }
    return true;
}

bool read_faces(Reader& r, LlmMesh& m) {
    std::uint16_t n = 0;
    if (!r.read(n, "face count")) return false;
    if (!r.need(std::size_t{6} * n, fmt::format("{} faces (6 bytes each)", n))) return false;
    m.faces.resize(n);
    const bool base = m.kind == LlmFileKind::Base;
    for (std::size_t f = 0; f < n; ++f) {
        for (std::size_t k = 0; k < 3; ++k) {
            const std::size_t at = r.pos();
            std::int16_t v = 0;
            r.read(v, "face index");
            if (v < 0) return r.fail(at, fmt::format("face {} has a negative vertex index ({})", f, v));
            if (base && static_cast<std::size_t>(v) >= m.coords.size())
                return r.fail(at, fmt::format("face {} indexes vertex {}, but the mesh has {} vertices", f,
                                              v, m.coords.size()));
            m.faces[f][k] = static_cast<std::uint32_t>(v);
        }
    }
    return true;
}

bool read_morph(Reader& r, LlmMorph& morph, std::size_t num_vertices) {
    const std::size_t count_at = r.pos();
    std::int32_t n = 0;
    if (!r.read(n, fmt::format("vertex count of morph \"{}\"", morph.name))) return false;
    if (n < 0) return r.fail(count_at, fmt::format("morph \"{}\" has a negative vertex count ({})", morph.name, n));
    const auto count = static_cast<std::size_t>(n);
    if (!r.need(count * kMorphVertexSize,
                fmt::format("{} vertices of morph \"{}\" (48 bytes each)", count, morph.name)))
        return false;
    morph.vertices.resize(count);
    morph.coords.resize(count);
    morph.normals.resize(count);
    morph.binormals.resize(count);
    morph.texcoords.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
        const std::size_t at = r.pos();
        std::uint32_t v = 0;
        r.read(v, "morph vertex index");
        if (v > kLlmMaxMorphVertexIndex)
            return r.fail(at, fmt::format("morph \"{}\" entry {} indexes vertex {} (the viewer rejects "
                                          "indices > {} and then reads the rest of the file out of "
                                          "alignment)",
                                          morph.name, i, v, kLlmMaxMorphVertexIndex));
        if (v >= num_vertices)
            return r.fail(at, fmt::format("morph \"{}\" entry {} indexes vertex {}, but the mesh has {} "
                                          "vertices",
                                          morph.name, i, v, num_vertices));
        morph.vertices[i] = v;
        if (!r.read_vec3(morph.coords[i], "morph position delta") ||
            !r.read_vec3(morph.normals[i], "morph normal delta") ||
            !r.read_vec3(morph.binormals[i], "morph binormal delta") ||
            !r.read_vec2(morph.texcoords[i], "morph texture coordinate delta"))
            return false;
    }
    return true;
}

bool read_base_tail(Reader& r, LlmMesh& m) {
    if (m.has_weights) {
        std::uint16_t n = 0;
        if (!r.read(n, "skin joint count")) return false;
        if (!r.need(kNameField * n, fmt::format("{} skin joint names (64 bytes each)", n))) return false;
        m.skin_joints.resize(n);
        m.skin_joint_name_tails.resize(n);
        bool any_tail = false;
        for (std::size_t i = 0; i < n; ++i) {
            r.read_name(m.skin_joints[i], &m.skin_joint_name_tails[i], "skin joint name");
            any_tail = any_tail || !m.skin_joint_name_tails[i].empty();
        }
        if (!any_tail) m.skin_joint_name_tails.clear();
    }
    for (;;) {
        const std::size_t at = r.pos();
        if (r.remaining() < kNameField)
            return r.fail(at, fmt::format("truncated: expected a morph name or \"End Morphs\" (64 bytes), "
                                          "{} left",
                                          r.remaining()));
        LlmMorph morph;
        r.read_name(morph.name, nullptr, "morph name");
        if (morph.name == kEndMorphs) break;
        if (!read_morph(r, morph, m.coords.size())) return false;
        m.morphs.push_back(std::move(morph));
    }
    if (r.remaining() >= 4) {
        const std::size_t at = r.pos();
        std::int32_t n = 0;
        r.read(n, "remap count");
        if (n < 0) return r.fail(at, fmt::format("negative vertex remap count ({})", n));
        const auto count = static_cast<std::size_t>(n);
        if (!r.need(count * 8, fmt::format("{} vertex remaps (8 bytes each)", count))) return false;
        m.remaps.resize(count);
        for (std::size_t i = 0; i < count; ++i) {
            const std::size_t entry_at = r.pos();
            LlmRemap& e = m.remaps[i];
            r.read(e.source, "remap source");
            r.read(e.target, "remap target");
            const auto in_mesh = [&](std::int32_t v) {
                return v >= 0 && static_cast<std::size_t>(v) < m.coords.size();
            };
            if (!in_mesh(e.source) || !in_mesh(e.target))
                return r.fail(entry_at, fmt::format("vertex remap {} ({} -> {}) is outside the mesh's {} "
                                                    "vertices",
                                                    i, e.source, e.target, m.coords.size()));
        }
    }
    return true;
}

// Little-endian writer.
struct Writer {
    std::vector<std::byte> out;
    template <class T>
    void put(const T& v) {
        const auto* p = reinterpret_cast<const std::byte*>(&v);
        out.insert(out.end(), p, p + sizeof(T));
    }
    void put(Vec3 v) {
        put(v.x);
        put(v.y);
        put(v.z);
    }
    void put(Vec2 v) {
        put(v.x);
        put(v.y);
    }
    void name(std::string_view name, std::string_view tail) {
        const std::size_t start = out.size();
        for (const char c : name.substr(0, kNameField)) out.push_back(static_cast<std::byte>(c));
        if (!tail.empty() && out.size() - start < kNameField) {
            out.push_back(std::byte{0});
            for (const char c : tail.substr(0, kNameField - (out.size() - start)))
                out.push_back(static_cast<std::byte>(c));
        }
        out.resize(start + kNameField, std::byte{0});
    }
};

}  // namespace

std::size_t LlmMesh::num_vertices() const {
    if (kind == LlmFileKind::Base) return coords.size();
    std::size_t n = 0;
    for (const auto& f : faces)
        for (const std::uint32_t v : f) n = std::max<std::size_t>(n, std::size_t{v} + 1);
    return n;
}

const LlmMorph* LlmMesh::find_morph(std::string_view name) const {
    for (const LlmMorph& m : morphs)
        if (m.name == name) return &m;
    return nullptr;
}

Result<LlmMesh> parse_llm(std::span<const std::byte> data, LlmFileKind kind) {
    Reader r(data);
    LlmMesh m;
    m.kind = kind;
    if (data.size() < kMagic.size() ||
        std::memcmp(data.data(), kMagic.data(), kMagic.size()) != 0)
        return Error{fmt::format("not a binary avatar mesh: expected the header \"{}\"", kMagic), 0, -1};
    std::array<std::byte, kHeaderSize> header{};
    if (!r.read(header, "header")) return *r.error();
    std::uint8_t has_weights = 0, has_detail = 0;
    bool ok = r.read(has_weights, "hasWeights flag") && r.read(has_detail, "hasDetailTexCoords flag") &&
              r.read_vec3(m.position, "mesh position") && r.read_vec3(m.rotation_deg, "mesh rotation") &&
              r.read(m.rotation_order, "rotation order") && r.read_vec3(m.scale, "mesh scale");
    // Any non-zero byte is true, as in the viewer. hasWeights is kept for both kinds (an LOD's is
    // ignored by the viewer); hasDetailTexCoords is never used (see the header).
    m.has_weights = has_weights != 0;
    m.has_detail_texcoords_flag = has_detail != 0;
    if (ok && kind == LlmFileKind::Base) ok = read_vertices(r, m);
    if (ok) ok = read_faces(r, m);
    if (ok && kind == LlmFileKind::Base) ok = read_base_tail(r, m);
    if (!ok) return *r.error();
    r.rest(m.trailing);
    return m;
}

Result<LlmMesh> load_llm(const std::filesystem::path& path, LlmFileKind kind) {
    auto bytes = read_file_bytes(path.string());
    if (!bytes) return bytes.error();
    Result<LlmMesh> m = parse_llm(std::as_bytes(std::span(bytes.value())), kind);
    if (!m) {
        Error e = m.error();
        e.message = path.string() + ": " + e.message;
        return e;
    }
    return m;
}

std::vector<std::byte> write_llm(const LlmMesh& m) {
    Writer w;
    w.out.reserve(kHeaderSize + m.coords.size() * 48 + m.faces.size() * 6 + m.trailing.size() + 256);
    for (const char c : kMagic) w.out.push_back(static_cast<std::byte>(c));
    w.out.resize(kHeaderSize, std::byte{0});
    w.put(static_cast<std::uint8_t>(m.has_weights ? 1 : 0));
    w.put(static_cast<std::uint8_t>(m.has_detail_texcoords_flag ? 1 : 0));
    w.put(m.position);
    w.put(m.rotation_deg);
    w.put(m.rotation_order);
    w.put(m.scale);
    const bool base = m.kind == LlmFileKind::Base;
    if (base) {
        w.put(static_cast<std::uint16_t>(m.coords.size()));
        for (const Vec3& v : m.coords) w.put(v);
        for (const Vec3& v : m.normals) w.put(v);
        for (const Vec3& v : m.binormals) w.put(v);
        for (const Vec2& v : m.texcoords) w.put(v);
        if (m.has_weights)
            for (const float x : m.weights) w.put(x);
    }
    w.put(static_cast<std::uint16_t>(m.faces.size()));
    for (const auto& f : m.faces)
        for (const std::uint32_t v : f) w.put(static_cast<std::int16_t>(v));
    if (base) {
        if (m.has_weights) {
            w.put(static_cast<std::uint16_t>(m.skin_joints.size()));
            for (std::size_t i = 0; i < m.skin_joints.size(); ++i)
                w.name(m.skin_joints[i],
                       i < m.skin_joint_name_tails.size() ? std::string_view(m.skin_joint_name_tails[i])
                                                          : std::string_view());
        }
        for (const LlmMorph& morph : m.morphs) {
            w.name(morph.name, {});
            w.put(static_cast<std::int32_t>(morph.vertices.size()));
            for (std::size_t i = 0; i < morph.vertices.size(); ++i) {
                w.put(morph.vertices[i]);
                w.put(morph.coords[i]);
                w.put(morph.normals[i]);
                w.put(morph.binormals[i]);
                w.put(morph.texcoords[i]);
            }
        }
        w.name(kEndMorphs, {});
        w.put(static_cast<std::int32_t>(m.remaps.size()));
        for (const LlmRemap& e : m.remaps) {
            w.put(e.source);
            w.put(e.target);
        }
    }
    w.out.insert(w.out.end(), m.trailing.begin(), m.trailing.end());
    return std::move(w.out);
}

Result<bool> check_llm_lod(const LlmMesh& lod, const LlmMesh& base) {
    if (base.kind != LlmFileKind::Base) return Error{"the reference mesh of an LOD must be a base mesh"};
    const std::size_t n = base.num_vertices();
    for (std::size_t f = 0; f < lod.faces.size(); ++f)
        for (const std::uint32_t v : lod.faces[f])
            if (v >= n)
                return Error{fmt::format("LOD face {} indexes vertex {}, but its base mesh has {} vertices", f,
                                         v, n)};
    return true;
}

}  // namespace slanim
