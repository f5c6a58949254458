// SPDX-License-Identifier: MIT
// glTF 2.0 animation import (slanim/gltf/import.hpp; docs/creator-formats.md, "glTF 2.0 import").
#include "slanim/gltf/import.hpp"
#include "slanim/gltf/slerp_keys.hpp"

#include <fmt/format.h>
#include <tiny_gltf.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "import_steps.hpp"
#include "slanim/formats/anim.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/gltf/axes.hpp"

namespace slanim::gltf {

namespace {

using tinygltf::Value;

/// Images are not needed for an animation: they are neither decoded nor checked.
bool skip_image(tinygltf::Image*, const int, std::string*, std::string*, int, int, const unsigned char*, int, void*) {
    return true;
}

std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    return s;
}

Result<tinygltf::Model> load_model(const std::string& path) {
    std::string ext = std::filesystem::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    if (ext != ".glb" && ext != ".gltf") return Error{fmt::format("{}: not a .glb or .gltf file", path)};
    if (!std::filesystem::exists(path)) return Error{fmt::format("{}: no such file", path)};
    tinygltf::TinyGLTF loader;
    loader.SetImageLoader(&skip_image, nullptr);
    tinygltf::Model m;
    std::string e, w;
    const bool ok = ext == ".glb" ? loader.LoadBinaryFromFile(&m, &e, &w, path) : loader.LoadASCIIFromFile(&m, &e, &w, path);
    if (!ok) return Error{fmt::format("{}: not a readable glTF 2.0 file: {}", path, trimmed(e.empty() ? w : e))};
    return m;
}

// In-memory loading never touches the file system.
bool no_file_exists(const std::string&, void*) { return false; }
std::string same_path(const std::string& p, void*) { return p; }
bool no_file_read(std::vector<unsigned char>*, std::string* err, const std::string& p, void*) {
    if (err) *err += "external file \"" + p + "\" not read (only data URIs and the GLB buffer are)\n";
    return false;
}
bool no_file_write(std::string* err, const std::string&, const std::vector<unsigned char>&, void*) {
    if (err) *err += "no file is written\n";
    return false;
}

Result<tinygltf::Model> load_model(std::span<const std::uint8_t> bytes, const std::string& name) {
    if (bytes.size() > std::numeric_limits<unsigned int>::max())
        return Error{fmt::format("{}: {} bytes is too large for a glTF file", name, bytes.size())};
    tinygltf::TinyGLTF loader;
    loader.SetImageLoader(&skip_image, nullptr);
    loader.SetFsCallbacks({&no_file_exists, &same_path, &no_file_read, &no_file_write, nullptr});
    tinygltf::Model m;
    std::string e, w;
    const auto size = static_cast<unsigned int>(bytes.size());
    const bool glb = bytes.size() >= 4 && std::memcmp(bytes.data(), "glTF", 4) == 0;
    const bool ok = glb ? loader.LoadBinaryFromMemory(&m, &e, &w, bytes.data(), size, "")
                        : loader.LoadASCIIFromString(&m, &e, &w, reinterpret_cast<const char*>(bytes.data()), size, "");
    if (!ok) return Error{fmt::format("{}: not a readable glTF 2.0 file: {}", name, trimmed(e.empty() ? w : e))};
    return m;
}

double normalized_component(const unsigned char* p, int component) {
    switch (component) {
        case TINYGLTF_COMPONENT_TYPE_FLOAT: {
            float f;
            std::memcpy(&f, p, 4);
            return f;
        }
        case TINYGLTF_COMPONENT_TYPE_BYTE: {
            std::int8_t c;
            std::memcpy(&c, p, 1);
            return std::max(c / 127.0, -1.0);
        }
        case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: return *p / 255.0;
        case TINYGLTF_COMPONENT_TYPE_SHORT: {
            std::int16_t c;
            std::memcpy(&c, p, 2);
            return std::max(c / 32767.0, -1.0);
        }
        case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: {
            std::uint16_t c;
            std::memcpy(&c, p, 2);
            return c / 65535.0;
        }
        default: return std::nan("");
    }
}

/// The `count × n` values of accessors[index] (FLOAT; normalized integers when allow_normalized),
/// every byte checked to lie in its buffer view and buffer. `where` names the referring JSON path.
Result<std::vector<float>> read_accessor(const tinygltf::Model& m, int index, int type, bool allow_normalized,
                                         const std::string& where) {
    if (index < 0 || static_cast<std::size_t>(index) >= m.accessors.size())
        return Error{fmt::format("{}: accessors[{}] does not exist ({} accessors)", where, index, m.accessors.size())};
    const tinygltf::Accessor& a = m.accessors[static_cast<std::size_t>(index)];
    const std::string an = fmt::format("{}: accessors[{}]", where, index);
    if (a.sparse.isSparse) return Error{fmt::format("{}: sparse accessors are not supported", an)};
    if (a.type != type)
        return Error{fmt::format("{}: type {} where {} was expected", an, a.type,
                                 type == TINYGLTF_TYPE_SCALAR ? "SCALAR" : type == TINYGLTF_TYPE_VEC3 ? "VEC3" : "VEC4")};
    int csize = 0;
    if (a.componentType == TINYGLTF_COMPONENT_TYPE_FLOAT) csize = 4;
    else if (allow_normalized && a.normalized &&
             (a.componentType == TINYGLTF_COMPONENT_TYPE_BYTE || a.componentType == TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE))
        csize = 1;
    else if (allow_normalized && a.normalized &&
             (a.componentType == TINYGLTF_COMPONENT_TYPE_SHORT || a.componentType == TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT))
        csize = 2;
    if (csize == 0)
        return Error{fmt::format("{}: component type {} where FLOAT{} was expected", an, a.componentType,
                                 allow_normalized ? " or a normalized integer" : "")};
    if (a.count == 0) return Error{fmt::format("{}: count is 0", an)};
    const std::size_t n = type == TINYGLTF_TYPE_SCALAR ? 1 : type == TINYGLTF_TYPE_VEC3 ? 3 : 4;
    if (a.bufferView < 0 || static_cast<std::size_t>(a.bufferView) >= m.bufferViews.size())
        return Error{fmt::format("{}: bufferView {} does not exist ({} buffer views)", an, a.bufferView,
                                 m.bufferViews.size())};
    const tinygltf::BufferView& v = m.bufferViews[static_cast<std::size_t>(a.bufferView)];
    if (v.buffer < 0 || static_cast<std::size_t>(v.buffer) >= m.buffers.size())
        return Error{fmt::format("{}: bufferViews[{}].buffer {} does not exist", an, a.bufferView, v.buffer)};
    const auto& buf = m.buffers[static_cast<std::size_t>(v.buffer)].data;
    const std::size_t elem = n * static_cast<std::size_t>(csize);
    const std::size_t stride = v.byteStride != 0 ? v.byteStride : elem;
    if (stride < elem) return Error{fmt::format("{}: byteStride {} is below the element size {}", an, stride, elem)};
    if (v.byteOffset > buf.size() || v.byteLength > buf.size() - v.byteOffset)
        return Error{fmt::format("{}: bufferViews[{}] (offset {}, length {}) is out of range of its buffer ({} bytes)",
                                 an, a.bufferView, v.byteOffset, v.byteLength, buf.size())};
    // At most 2^40 bytes of elements (and, where size_t has 32 bits, what cannot wrap `needed`).
    constexpr std::uint64_t kMaxBytes =
        std::min<std::uint64_t>(std::uint64_t{1} << 40, std::numeric_limits<std::size_t>::max() / 4);
    const bool too_many = a.count > kMaxBytes / stride || a.byteOffset > kMaxBytes;
    const std::size_t needed = a.byteOffset + (a.count - 1) * stride + elem;  // wraps only when too_many
    if (too_many || needed > v.byteLength)
        return Error{fmt::format("{}: {} elements from byte {} need {} bytes; bufferViews[{}] has {}", an, a.count,
                                 a.byteOffset, needed, a.bufferView, v.byteLength)};
    std::vector<float> out(a.count * n);
    const unsigned char* base = buf.data() + v.byteOffset + a.byteOffset;
    for (std::size_t i = 0; i < a.count; ++i)
        for (std::size_t k = 0; k < n; ++k)
            out[i * n + k] = static_cast<float>(
                normalized_component(base + i * stride + k * static_cast<std::size_t>(csize), a.componentType));
    for (std::size_t i = 0; i < out.size(); ++i)
        if (!std::isfinite(out[i]))
            return Error{fmt::format("{}: element {} is not finite ({})", an, i / n, out[i])};
    return out;
}

/// Keys of one channel: times and `n` values each, after sampling STEP / CUBICSPLINE.
struct Track {
    std::vector<float> times;
    std::vector<float> values;
};

Result<Track> read_track(const tinygltf::Model& m, const tinygltf::AnimationSampler& s, std::size_t n,
                         const std::string& where) {
    auto in_times = read_accessor(m, s.input, TINYGLTF_TYPE_SCALAR, false, where + ".input");
    if (!in_times) return in_times.error();
    const std::vector<float>& times = *in_times;
    for (std::size_t i = 0; i < times.size(); ++i) {
        if (times[i] < 0.f)
            return Error{fmt::format("{}.input: accessors[{}]: key {} time {} is negative", where, s.input, i, times[i])};
        if (times[i] > kMaxDuration)
            return Error{fmt::format("{}.input: accessors[{}]: key {} time {} s is past {} s, the longest .anim "
                                     "(MAX_ANIM_DURATION)", where, s.input, i, times[i], kMaxDuration)};
        if (i > 0 && !(times[i] > times[i - 1]))
            return Error{fmt::format("{}.input: accessors[{}]: key times must increase (key {}: {} after {})", where,
                                     s.input, i, times[i], times[i - 1])};
    }
    auto v = read_accessor(m, s.output, n == 4 ? TINYGLTF_TYPE_VEC4 : TINYGLTF_TYPE_VEC3, n == 4, where + ".output");
    if (!v) return v.error();
    const std::string interp = s.interpolation.empty() ? "LINEAR" : s.interpolation;
    const std::size_t per_key = interp == "CUBICSPLINE" ? 3 : 1;
    if (interp != "LINEAR" && interp != "STEP" && interp != "CUBICSPLINE")
        return Error{fmt::format("{}.interpolation: \"{}\" is not LINEAR, STEP or CUBICSPLINE", where, interp)};
    if (v->size() != times.size() * n * per_key)
        return Error{fmt::format("{}: accessors[{}] has {} elements where {} were expected ({} keys, {})", where,
                                 s.output, v->size() / n, times.size() * per_key, times.size(), interp)};
    Track tr;
    if (interp == "LINEAR") {
        tr.times = times;
        tr.values = std::move(*v);
        return tr;
    }
    // STEP, CUBICSPLINE: sampled at kSampleFps from the first key to the last.
    const double t0 = times.front(), t1 = times.back();
    std::vector<double> grid;
    for (long k = 0;; ++k) {
        const double t = t0 + static_cast<double>(k) / kSampleFps;
        if (t >= t1 - 0.5 / kSampleFps) break;  // the last key ends the track
        grid.push_back(t);
    }
    grid.push_back(t1);
    const std::vector<float>& val = *v;
    std::size_t seg = 0;
    for (const double t : grid) {
        while (seg + 1 < times.size() && times[seg + 1] <= t) ++seg;
        tr.times.push_back(static_cast<float>(t));
        if (interp == "STEP" || seg + 1 >= times.size()) {
            const std::size_t base = (seg * per_key + (per_key == 3 ? 1 : 0)) * n;
            tr.values.insert(tr.values.end(), val.begin() + static_cast<long>(base), val.begin() + static_cast<long>(base + n));
            continue;
        }
        const double dt = double{times[seg + 1]} - times[seg];
        const double u = (t - times[seg]) / dt, u2 = u * u, u3 = u2 * u;
        const double h00 = 2 * u3 - 3 * u2 + 1, h10 = u3 - 2 * u2 + u, h01 = -2 * u3 + 3 * u2, h11 = u3 - u2;
        for (std::size_t k = 0; k < n; ++k) {
            const double p0 = val[(seg * 3 + 1) * n + k], b0 = val[(seg * 3 + 2) * n + k];
            const double p1 = val[((seg + 1) * 3 + 1) * n + k], a1 = val[((seg + 1) * 3) * n + k];
            tr.values.push_back(static_cast<float>(h00 * p0 + h10 * dt * b0 + h01 * p1 + h11 * dt * a1));
        }
    }
    return tr;
}

std::optional<Quat> unit(double x, double y, double z, double w) {
    const double len = std::sqrt(x * x + y * y + z * z + w * w);
    if (!std::isfinite(len) || len < 1e-12) return std::nullopt;
    return Quat{static_cast<float>(x / len), static_cast<float>(y / len), static_cast<float>(z / len),
                static_cast<float>(w / len)};
}

/// The rotation of a column-major 4×4 matrix (columns normalised, no shear assumed).
Quat matrix_rotation(const std::vector<double>& mm) {
    double r[3][3];
    for (int c = 0; c < 3; ++c) {
        double len = 0;
        for (int i = 0; i < 3; ++i) len += mm[static_cast<std::size_t>(c * 4 + i)] * mm[static_cast<std::size_t>(c * 4 + i)];
        len = std::sqrt(len);
        for (int i = 0; i < 3; ++i) r[i][c] = len > 0 ? mm[static_cast<std::size_t>(c * 4 + i)] / len : 0.0;
    }
    const double tr = r[0][0] + r[1][1] + r[2][2];
    double x, y, z, w;
    if (tr > 0) {
        const double s = std::sqrt(tr + 1.0) * 2;
        w = 0.25 * s, x = (r[2][1] - r[1][2]) / s, y = (r[0][2] - r[2][0]) / s, z = (r[1][0] - r[0][1]) / s;
    } else if (r[0][0] > r[1][1] && r[0][0] > r[2][2]) {
        const double s = std::sqrt(1.0 + r[0][0] - r[1][1] - r[2][2]) * 2;
        w = (r[2][1] - r[1][2]) / s, x = 0.25 * s, y = (r[0][1] + r[1][0]) / s, z = (r[0][2] + r[2][0]) / s;
    } else if (r[1][1] > r[2][2]) {
        const double s = std::sqrt(1.0 + r[1][1] - r[0][0] - r[2][2]) * 2;
        w = (r[0][2] - r[2][0]) / s, x = (r[0][1] + r[1][0]) / s, y = 0.25 * s, z = (r[1][2] + r[2][1]) / s;
    } else {
        const double s = std::sqrt(1.0 + r[2][2] - r[0][0] - r[1][1]) * 2;
        w = (r[1][0] - r[0][1]) / s, x = (r[0][2] + r[2][0]) / s, y = (r[1][2] + r[2][1]) / s, z = 0.25 * s;
    }
    return unit(x, y, z, w).value_or(Quat::identity());
}

/// Per node: its parent node (−1 at a scene root), its rest rotation, local and world, and its
/// rest translation (local, × the import scale), in SL axes.
struct NodeRest {
    std::vector<int> parent;
    std::vector<Quat> local, world;
    std::vector<Vec3> translation;
};

/// A node's rest translation in glTF axes: `translation`, or the matrix's last column.
Result<Vec3> node_translation(const tinygltf::Node& n, std::size_t i, const std::string& path) {
    Vec3 t;
    if (n.translation.size() == 3) t = {static_cast<float>(n.translation[0]), static_cast<float>(n.translation[1]),
                                        static_cast<float>(n.translation[2])};
    else if (n.matrix.size() == 16) t = {static_cast<float>(n.matrix[12]), static_cast<float>(n.matrix[13]),
                                         static_cast<float>(n.matrix[14])};
    if (!is_finite(t)) return Error{fmt::format("{}: nodes[{}] \"{}\": the rest translation is not finite", path, i, n.name)};
    return t;
}

Result<NodeRest> node_rest(const tinygltf::Model& m, const std::string& path, float scale) {
    const std::size_t nn = m.nodes.size();
    NodeRest r;
    r.parent.assign(nn, -1);
    r.local.assign(nn, Quat::identity());
    r.world.assign(nn, Quat::identity());
    r.translation.assign(nn, Vec3{});
    for (std::size_t i = 0; i < nn; ++i) {
        const tinygltf::Node& n = m.nodes[i];
        for (int c : n.children) {
            if (c < 0 || static_cast<std::size_t>(c) >= nn)
                return Error{fmt::format("{}: nodes[{}].children: node {} does not exist", path, i, c)};
            if (r.parent[static_cast<std::size_t>(c)] >= 0)
                return Error{fmt::format("{}: nodes[{}] has two parents", path, c)};
            r.parent[static_cast<std::size_t>(c)] = static_cast<int>(i);
        }
        Quat q = Quat::identity();
        if (n.rotation.size() == 4) {
            auto u = unit(n.rotation[0], n.rotation[1], n.rotation[2], n.rotation[3]);
            if (!u) return Error{fmt::format("{}: nodes[{}].rotation is not a finite non-zero quaternion", path, i)};
            q = *u;
        } else if (n.matrix.size() == 16) {
            q = matrix_rotation(n.matrix);
        }
        r.local[i] = gltf_to_sl(q);
        auto t = node_translation(n, i, path);
        if (!t) return t.error();
        r.translation[i] = gltf_to_sl(*t) * scale;
    }
    std::vector<int> state(nn, 0);  // 0 not done, 1 in progress, 2 done
    for (std::size_t i = 0; i < nn; ++i) {
        std::vector<std::size_t> chain;
        std::size_t j = i;
        while (state[j] == 0) {
            state[j] = 1;
            chain.push_back(j);
            if (r.parent[j] < 0) break;
            j = static_cast<std::size_t>(r.parent[j]);
        }
        if (state[j] == 1 && r.parent[j] >= 0 && state[static_cast<std::size_t>(r.parent[j])] == 1)
            return Error{fmt::format("{}: the node hierarchy has a cycle through nodes[{}]", path, j)};
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
            const int p = r.parent[*it];
            r.world[*it] = p < 0 ? r.local[*it] : hamilton(r.world[static_cast<std::size_t>(p)], r.local[*it]);
            state[*it] = 2;
        }
    }
    return r;
}

bool same_rotation(Quat a, Quat b) { return std::abs(dot(a, b)) > 1.f - 1e-6f; }

/// Reads the numbers of the exporter's extras: absent or not a number → nullopt; a number outside
/// [lo, hi] (or not finite) → nullopt, and the first such one is kept in `bad` with its JSON path.
struct ExtrasReader {
    std::string where;  ///< "animations[a].extras"
    std::string bad;

    std::optional<double> num(const Value& o, const std::string& at, const char* key, double lo, double hi) {
        if (!o.IsObject() || !o.Has(key) || !o.Get(key).IsNumber()) return std::nullopt;
        return check(o.Get(key), at + "." + key, lo, hi);
    }
    std::optional<double> check(const Value& v, const std::string& at, double lo, double hi) {
        const double d = v.GetNumberAsDouble();
        if (std::isfinite(d) && d >= lo && d <= hi) return d;
        if (bad.empty()) bad = fmt::format("{}{}: {} is outside [{}, {}]", where, at, d, lo, hi);
        return std::nullopt;
    }
    /// A 3-number array (missing or malformed: zero), each within ±1e6.
    Vec3 vec(const Value& o, const std::string& at, const char* key) {
        if (!o.Has(key)) return {};
        const Value& v = o.Get(key);
        if (!v.IsArray() || v.ArrayLen() != 3) return {};
        float c[3] = {0.f, 0.f, 0.f};
        for (int i = 0; i < 3; ++i)
            if (v.Get(i).IsNumber())
                c[i] = static_cast<float>(check(v.Get(i), fmt::format("{}.{}[{}]", at, key, i), -1e6, 1e6).value_or(0.0));
        return {c[0], c[1], c[2]};
    }
};

Result<int> pick_animation(const tinygltf::Model& m, const std::string& sel, const std::string& path) {
    if (m.animations.empty()) return Error{fmt::format("{}: the file has no animation (\"animations\" is empty)", path)};
    if (sel.empty()) return 0;
    for (std::size_t i = 0; i < m.animations.size(); ++i)
        if (m.animations[i].name == sel) return static_cast<int>(i);
    if (std::all_of(sel.begin(), sel.end(), [](unsigned char c) { return std::isdigit(c); }) && sel.size() < 9) {
        const int i = std::stoi(sel);
        if (static_cast<std::size_t>(i) < m.animations.size()) return i;
    }
    std::string names;
    for (std::size_t i = 0; i < m.animations.size(); ++i)
        names += fmt::format("{}{} \"{}\"", i ? ", " : "", i, m.animations[i].name);
    return Error{fmt::format("{}: --animation {}: no animation has that name or index (animations: {})", path, sel, names)};
}

/// The SL joint of a node name: the skeleton's names and aliases, then the rig name table.
int resolve_joint(const Skeleton& sk, std::string_view name) {
    const int j = sk.find(name);
    return j >= 0 ? j : rig_name_joint(sk, name);
}

bool is_sl_ancestor(const Skeleton& sk, int ancestor, int j) {
    for (int p = sk.parent(j); p >= 0; p = sk.parent(p))
        if (p == ancestor) return true;
    return false;
}

/// An animated node must sit in the file's hierarchy where its SL joint sits in SL's: its nearest
/// ancestor node that maps to an SL joint maps to an SL ancestor of it (joints the armature lacks
/// may be skipped), and a joint with an SL parent has such an ancestor (a flat armature, or a
/// bone parented to the wrong limb, would be retargeted against the wrong parent).
Result<bool> check_hierarchy(const tinygltf::Model& m, const std::vector<int>& parent, std::size_t node, int j,
                       const Skeleton& sk, const std::string& where) {
    int a = parent[node];
    while (a >= 0 && resolve_joint(sk, m.nodes[static_cast<std::size_t>(a)].name) < 0)
        a = parent[static_cast<std::size_t>(a)];
    const std::string& name = m.nodes[node].name;
    const int sl_parent = sk.parent(j);
    const std::string expected =
        sl_parent < 0 ? std::string("no SL joint above it (it hangs from the avatar root)")
                      : fmt::format("{} or another SL ancestor of {} above it", sk.name(sl_parent), sk.name(j));
    if (a < 0) {
        if (sl_parent < 0) return true;
        return Error{fmt::format("{}.target.node: nodes[{}] \"{}\" has no SL joint among its ancestor nodes, where "
                                 "the SL skeleton has {} (the armature's hierarchy does not match SL's)",
                                 where, node, name, expected)};
    }
    const int ja = resolve_joint(sk, m.nodes[static_cast<std::size_t>(a)].name);
    if (is_sl_ancestor(sk, ja, j)) return true;
    return Error{fmt::format("{}.target.node: nodes[{}] \"{}\" hangs under nodes[{}] \"{}\" (SL {}), where the SL "
                             "skeleton has {} (the armature's hierarchy does not match SL's)",
                             where, node, name, a, m.nodes[static_cast<std::size_t>(a)].name, sk.name(ja), expected)};
}

/// The deepest bone below each joint, in bones (mChildTreeMaxDepth over the SL skeleton's bones).
std::vector<int> bone_tree_depths(const Skeleton& sk) {
    std::vector<int> depth(static_cast<std::size_t>(sk.num_joints()), 0);
    for (int j = 0; j < sk.num_joints(); ++j) {
        if (sk.kind(j) != JointKind::Bone) continue;
        int d = 1;
        for (int p = sk.parent(j); p >= 0; p = sk.parent(p), ++d)
            depth[static_cast<std::size_t>(p)] = std::max(depth[static_cast<std::size_t>(p)], d);
    }
    return depth;
}

/// The BVH importer's keyframe reduction (reduce_keys, LLBVHLoader::optimize) on every joint's
/// rotation and position keys, at their own times, with today's rules and no reference frame;
/// positions in metres are compared in BVH inches. Then every dropped key is checked against
/// what playback interpolates from the kept ones, within half the thresholds (verify_fraction).
/// Joints are never dropped (an .anim joint held still still overrides lower priorities).
void reduce_motion_keys(Motion& motion, const Skeleton& sk) {
    const std::vector<int> depth = bone_tree_depths(sk);
    for (MotionJoint& mj : motion.joints) {
        KeyReductionInput in;
        in.child_tree_max_depth = depth[static_cast<std::size_t>(mj.joint)];
        in.position_scale = 1.f / 0.02540005f;  // INCHES_TO_METERS
        in.reference_frame = false;
        in.current_rules = true;
        in.verify_fraction = 0.5f;  // every dropped key replayed within half the threshold
        std::vector<Quat> rot;
        std::vector<Vec3> pos;
        std::vector<float> times;
        if (mj.rot_keys.size() > 2) {
            for (const RotKey& k : mj.rot_keys) rot.push_back(k.value), times.push_back(k.time);
            pos.assign(rot.size(), Vec3{});
            in.rotations = rot, in.positions = pos, in.times = times;
            const KeyReduction r = reduce_keys(in);
            std::vector<RotKey> kept;
            for (std::size_t i = 0; i < mj.rot_keys.size(); ++i)
                if (r.keep_rot[i]) kept.push_back(mj.rot_keys[i]);
            mj.rot_keys = std::move(kept);
        }
        if (mj.pos_keys.size() > 2) {
            pos.clear(), times.clear();
            for (const PosKey& k : mj.pos_keys) pos.push_back(k.value), times.push_back(k.time);
            rot.assign(pos.size(), Quat::identity());
            in.rotations = rot, in.positions = pos, in.times = times;
            const KeyReduction r = reduce_keys(in);
            std::vector<PosKey> kept;
            for (std::size_t i = 0; i < mj.pos_keys.size(); ++i)
                if (r.keep_pos[i]) kept.push_back(mj.pos_keys[i]);
            mj.pos_keys = std::move(kept);
        }
    }
}

/// SL rest world rotations per joint.
std::vector<Quat> sl_rest_world(const Skeleton& sk) {
    const auto nj = static_cast<std::size_t>(sk.num_joints());
    std::vector<Quat> sl_world(nj);
    for (std::size_t j = 0; j < nj; ++j) {
        const int p = sk.parent(static_cast<int>(j));
        sl_world[j] = p < 0 ? sk.rest_rotations()[j] : hamilton(sl_world[static_cast<std::size_t>(p)], sk.rest_rotations()[j]);
    }
    return sl_world;
}

/// "a, b, c".
std::string comma_list(const std::vector<std::string>& items) {
    std::string list;
    for (const auto& i : items) list += (list.empty() ? "" : ", ") + i;
    return list;
}

/// One animation of a parsed model into a Motion on an SL skeleton: its channels (mapped to
/// joints, retargeted, as keys), then its header (defaults, the exporter's extras, the options).
class AnimationImporter {
public:
    AnimationImporter(const tinygltf::Model& m, const std::string& path, const Skeleton& sk, const ImportOptions& o,
                      int animation, NodeRest rest)
        : m_(m), path_(path), sk_(sk), o_(o), ai_(animation), anim_(m.animations[static_cast<std::size_t>(animation)]),
          rest_(std::move(rest)), sl_world_(sl_rest_world(sk)) {}

    Result<ImportResult> run() {
        if (auto s = check_size(); !s) return s.error();
        find_named_directly();
        for (std::size_t c = 0; c < anim_.channels.size(); ++c)
            if (auto r = import_channel(c); !r) return r.error();
        if (!unknown_.empty() && !o_.import.skip_unknown_joints)
            return Error{fmt::format("{}: animations[{}] animates nodes that are not SL joints: {} (name them like the SL "
                                     "skeleton or an alias, or pass --skip-unknown)", path_, ai_, comma_list(unknown_))};
        for (const auto& u : unknown_) res_.warnings.push_back(fmt::format("node {} is not an SL joint: skipped", u));
        if (!retargeted_.empty())
            res_.warnings.push_back(fmt::format("the armature's rest rotation differs from SL's: retargeted {}",
                                                comma_list(retargeted_)));
        Motion& motion = res_.motion;
        if (motion.joints.empty())
            return Error{fmt::format("{}: animations[{}] \"{}\" animates no SL joint", path_, ai_, anim_.name)};
        const bool ours = written_by_slanim();
        if (ours) {  // the header first: an unchanged file imports to its source .anim
            // The keys the export added inside the viewer's slerp intervals (slerp_keys.hpp).
            for (MotionJoint& mj : motion.joints) drop_viewer_slerp_keys(mj.rot_keys);
            if (auto h = read_header(); !h) return h.error();
            if (original_anim()) return std::move(res_);
        }
        adjust_keys(ours);
        if (!o_.import.keep_all_frames) reduce_motion_keys(motion, sk_);
        if (!ours)
            if (auto h = read_header(); !h) return h.error();
        if (auto c = clamp_keys_to_duration(); !c) return c.error();
        if (auto e = check_encodable(motion); !e)
            return Error{fmt::format("{}: animations[{}]: {}{}", path_, ai_, e.error().message, range_hint(e.error().message))};
        return std::move(res_);
    }

private:
    bool written_by_slanim() const {
        const Value& ex = anim_.extras;
        return ex.IsObject() && ex.Has("format") && ex.Get("format").IsString() &&
               ex.Get("format").Get<std::string>() == "slanim-anim";
    }

    /// The fix to name when a key is out of the .anim's range.
    std::string range_hint(const std::string& message) const {
        if (message.find("position key") == std::string::npos) return "";
        return o_.pelvis_origin == PelvisOrigin::Rest
                   ? " (fix: --scale F for an armature in other units, or --pelvis-origin first-frame when the rest hip "
                     "is not where the motion stands)"
                   : " (fix: --scale F for an armature in other units)";
    }

    /// The steps after reading the channels (docs/creator-formats.md): translation channels at
    /// their node's rest dropped (except mPelvis's; not in a file slanim wrote, generator
    /// "slanim", whose channels are an .anim's keys), mPelvis relative to its origin, times
    /// rebased unless keep_times or the exporter's extras (whose times the header refers to).
    void adjust_keys(bool ours) {
        Motion& motion = res_.motion;
        const int pelvis = sk_.pelvis();
        if (!ours || m_.asset.generator != "slanim") {
            const auto dropped = detail::drop_rest_translations(motion, rest_pos_, pelvis);
            if (!dropped.empty())
                res_.warnings.push_back(fmt::format("translation channels at their bone's rest (within {} m) dropped: {} "
                                                    "(an .anim position key would force the rig's proportions)",
                                                    kRestTolerance, comma_list(dropped)));
        }
        const auto pr = rest_pos_.find(pelvis);
        const float mean = detail::make_pelvis_relative(motion, pelvis, pr == rest_pos_.end() ? Vec3{} : pr->second,
                                                        o_.pelvis_origin);
        if (mean > 0.5f && o_.pelvis_origin == PelvisOrigin::Rest)
            res_.warnings.push_back(fmt::format("mPelvis's position keys lie {:.2f} m from its rest on average: the "
                                                "avatar will float or sink (the armature's rest hip is not where the "
                                                "motion stands, as after Blender's BVH import); --pelvis-origin "
                                                "first-frame makes them relative to the first frame, as the uploader does",
                                                mean));
        if (!ours && !o_.keep_times) {
            const float shift = detail::rebase_times(motion);
            if (shift > 0.f) {
                last_time_ = std::max(last_time_ - shift, 0.f);
                res_.warnings.push_back(fmt::format("the first key was at {} s: every key time moved {} s earlier "
                                                    "(--keep-times keeps them)", shift, shift));
            }
        }
    }

    /// A file slanim wrote from an .anim, with that file in its extras and its keys, header and
    /// options unchanged: the result is the source .anim, bytes and all.
    bool original_anim() {
        const Value& ex = anim_.extras;
        if (o_.pelvis_origin != PelvisOrigin::Rest || o_.scale != 1.f || !ex.Has(kSourceAnimKey) ||
            !ex.Get(kSourceAnimKey).IsString())
            return false;
        auto bytes = base64_decode(ex.Get(kSourceAnimKey).Get<std::string>());
        if (!bytes) return false;
        ParseOptions po;
        po.skeleton = &sk_;
        const ParseResult pr = parse_anim(*bytes, po);
        if (!pr.ok() || !pr.has_motion) return false;
        const Motion decoded = decode_motion(pr.motion, sk_);
        std::vector<std::string> skipped;
        if (ex.Has("skipped_joints") && ex.Get("skipped_joints").IsArray())
            for (std::size_t i = 0; i < ex.Get("skipped_joints").ArrayLen(); ++i)
                if (const Value& v = ex.Get("skipped_joints").Get(static_cast<int>(i)); v.IsString())
                    skipped.push_back(v.Get<std::string>());
        if (!detail::same_keys(res_.motion, decoded, skipped) || !detail::same_header(res_.motion, decoded)) return false;
        res_.motion = decoded;
        res_.original_anim = std::move(*bytes);
        return true;
    }

    /// Bone lengths against SL's (kSizeWarnRatio, kSizeErrorRatio).
    Result<bool> check_size() {
        const std::size_t nn = m_.nodes.size();
        std::vector<Vec3> wpos(nn);
        std::vector<char> done(nn, 0);
        const std::function<Vec3(std::size_t)> world = [&](std::size_t i) -> Vec3 {
            if (done[i]) return wpos[i];
            const int p = rest_.parent[i];
            wpos[i] = p < 0 ? rest_.translation[i]
                            : world(static_cast<std::size_t>(p)) +
                                  rotate(rest_.translation[i], rest_.world[static_cast<std::size_t>(p)]);
            done[i] = 1;
            return wpos[i];
        };
        const std::vector<Vec3> sl = detail::sl_rest_world_positions(sk_);
        std::vector<detail::BoneLength> bones;
        for (std::size_t i = 0; i < nn; ++i) {
            const int j = resolve_joint(sk_, m_.nodes[i].name);
            if (j < 0 || sk_.kind(j) != JointKind::Bone) continue;
            int a = rest_.parent[i];
            int ja = -1;
            for (; a >= 0; a = rest_.parent[static_cast<std::size_t>(a)])
                if ((ja = resolve_joint(sk_, m_.nodes[static_cast<std::size_t>(a)].name)) >= 0) break;
            if (a < 0 || !is_sl_ancestor(sk_, ja, j)) continue;
            bones.push_back({static_cast<int>(i), m_.nodes[i].name, j, ja,
                             length(world(i) - world(static_cast<std::size_t>(a))),
                             length(sl[static_cast<std::size_t>(j)] - sl[static_cast<std::size_t>(ja)])});
        }
        const auto r = detail::size_ratio(bones);
        if (!r || (r->ratio <= kSizeWarnRatio && r->ratio >= 1.f / kSizeWarnRatio)) return true;
        const detail::BoneLength& b = r->example;
        const std::string what = fmt::format(
            "the armature's bones are {:.3g}× SL's (the median of {} bones; nodes[{}] \"{}\" is {:.4g} m from {} where "
            "SL's {} is {:.4g} m)", r->ratio, r->bones, b.node, b.node_name, b.length, sk_.name(b.ancestor),
            sk_.name(b.joint), b.sl_length);
        if (r->ratio > kSizeErrorRatio || r->ratio < 1.f / kSizeErrorRatio)
            return Error{fmt::format("{}: {}: an armature in other units (inches or centimetres read as metres?); "
                                     "fix: --scale {:.4g} (it multiplies every translation), or export it in metres",
                                     path_, what, o_.scale / r->ratio)};
        res_.warnings.push_back(what + ": its proportions differ from SL's (position keys carry them)");
        return true;
    }

    /// The exporter's extras may give a duration up to 1e-4 s below the last key (its times are
    /// the .anim's U16 times decoded to F32): such keys are moved onto the duration, as the .anim
    /// encoder would quantize them. Two keys of a track that would then share a time are an error.
    Result<bool> clamp_keys_to_duration() {
        const float d = res_.motion.duration;
        const auto clamp_track = [&](auto& keys, const MotionJoint& mj, const char* kind) -> Result<bool> {
            for (std::size_t k = 0; k < keys.size(); ++k) {
                if (keys[k].time <= d) continue;
                if (k > 0 && keys[k - 1].time >= d)
                    return Error{fmt::format("{}: animations[{}]: {} keys of {} at {} s and {} s both fall at the "
                                             "extras' duration {} s (the duration must reach the last key)",
                                             path_, ai_, kind, mj.name, keys[k - 1].time, keys[k].time, d)};
                keys[k].time = d;
            }
            return true;
        };
        for (MotionJoint& mj : res_.motion.joints) {
            if (auto r = clamp_track(mj.rot_keys, mj, "rotation"); !r) return r;
            if (auto r = clamp_track(mj.pos_keys, mj, "position"); !r) return r;
        }
        return true;
    }

    /// The motion's entry of SL joint j, added on first use. (A reference: valid until the next call.)
    MotionJoint& joint_entry(int j) {
        Motion& motion = res_.motion;
        auto [it, added] = motion_joint_of_.try_emplace(j, motion.joints.size());
        if (added) {
            MotionJoint mj;
            mj.name = sk_.name(j);
            mj.joint = j;
            motion.joints.push_back(std::move(mj));
        }
        return motion.joints[it->second];
    }

    /// SL joints animated under their own name or an alias: a rig name of the same joint yields.
    void find_named_directly() {
        for (const tinygltf::AnimationChannel& ch : anim_.channels)
            if (ch.target_node >= 0 && static_cast<std::size_t>(ch.target_node) < m_.nodes.size())
                if (const int j = sk_.find(m_.nodes[static_cast<std::size_t>(ch.target_node)].name); j >= 0)
                    named_directly_.insert(j);
    }

    /// The SL joint channel `c` animates, or −1 when it is ignored (with a warning) or unknown
    /// (listed); an error for a channel glTF or the mapping forbids.
    Result<int> channel_joint(std::size_t c, const std::string& where) {
        const tinygltf::AnimationChannel& ch = anim_.channels[c];
        if (ch.target_node < 0 || static_cast<std::size_t>(ch.target_node) >= m_.nodes.size())
            return Error{fmt::format("{}.target.node: node {} does not exist ({} nodes)", where, ch.target_node, m_.nodes.size())};
        const auto node = static_cast<std::size_t>(ch.target_node);
        const std::string& name = m_.nodes[node].name;
        if (ch.target_path != "rotation" && ch.target_path != "translation") {
            res_.warnings.push_back(fmt::format("animations[{}].channels[{}]: the {} channel of node \"{}\" is ignored "
                                                "(.anim keys are rotations and positions)", ai_, c, ch.target_path, name));
            return -1;
        }
        // glTF 2.0 §5.4 (animation.channel.target): one channel per node and path per animation.
        if (auto [it, added] = channel_of_target_.try_emplace({ch.target_node, ch.target_path}, c); !added)
            return Error{fmt::format("{}.target: the {} of nodes[{}] \"{}\" is already animated by channels[{}] (a "
                                     "node and path may be the target of one channel per animation)",
                                     where, ch.target_path, node, name, it->second)};
        int j = sk_.find(name);
        if (j < 0 && (j = rig_name_joint(sk_, name)) >= 0 && named_directly_.contains(j)) {
            res_.warnings.push_back(fmt::format("animations[{}].channels[{}]: node \"{}\" (the rig name of {}) is "
                                                "ignored: the file animates {} itself", ai_, c, name, sk_.name(j),
                                                sk_.name(j)));
            return -1;
        }
        if (j < 0) {
            if (name == "mRoot") {
                res_.warnings.push_back(fmt::format("animations[{}].channels[{}]: the avatar root mRoot cannot be "
                                                    "animated in an .anim; its channel is ignored", ai_, c));
                return -1;
            }
            const std::string label = name.empty() ? fmt::format("nodes[{}] (no name)", node) : "\"" + name + "\"";
            if (std::find(unknown_.begin(), unknown_.end(), label) == unknown_.end()) unknown_.push_back(label);
            return -1;
        }
        if (auto it = node_of_joint_.find(j); it != node_of_joint_.end() && it->second != ch.target_node)
            return Error{fmt::format("{}: nodes[{}] \"{}\" and nodes[{}] \"{}\" both map to the SL joint {}", where,
                                     it->second, m_.nodes[static_cast<std::size_t>(it->second)].name, node, name, sk_.name(j))};
        node_of_joint_[j] = ch.target_node;
        if (auto h = check_hierarchy(m_, rest_.parent, node, j, sk_, where); !h) return h.error();
        return j;
    }

    Result<bool> import_channel(std::size_t c) {
        const tinygltf::AnimationChannel& ch = anim_.channels[c];
        const std::string where = fmt::format("{}: animations[{}].channels[{}]", path_, ai_, c);
        auto j = channel_joint(c, where);
        if (!j) return j.error();
        if (*j < 0) return false;
        if (ch.sampler < 0 || static_cast<std::size_t>(ch.sampler) >= anim_.samplers.size())
            return Error{fmt::format("{}.sampler: sampler {} does not exist ({} samplers)", where, ch.sampler, anim_.samplers.size())};
        const bool rot = ch.target_path == "rotation";
        auto tr = read_track(m_, anim_.samplers[static_cast<std::size_t>(ch.sampler)], rot ? 4 : 3,
                             fmt::format("{}: animations[{}].samplers[{}]", path_, ai_, ch.sampler));
        if (!tr) return tr.error();
        return add_keys(*tr, static_cast<std::size_t>(ch.target_node), *j, rot, ch.sampler);
    }

    /// The track's keys on joint j. Retargeting (docs/creator-formats.md):
    /// key' = S_p⁻¹ ⊗ A_p ⊗ L ⊗ A_j⁻¹ ⊗ S_j (Hamilton), A the armature's rest world rotations,
    /// S SL's; identity when the rests agree.
    Result<bool> add_keys(const Track& tr, std::size_t node, int j, bool rot, int sampler) {
        const int pn = rest_.parent[node];
        const Quat a_p = pn < 0 ? Quat::identity() : rest_.world[static_cast<std::size_t>(pn)];
        const Quat a_j = rest_.world[node];
        const int sp = sk_.parent(j);
        const Quat s_p = sp < 0 ? Quat::identity() : sl_world_[static_cast<std::size_t>(sp)];
        const Quat s_j = sl_world_[static_cast<std::size_t>(j)];
        const bool parent_same = same_rotation(a_p, s_p), joint_same = same_rotation(a_j, s_j);
        const Quat pre = hamilton(conjugate(s_p), a_p), post = hamilton(conjugate(a_j), s_j);
        MotionJoint& mj = joint_entry(j);
        if (rot && (!parent_same || !joint_same)) retargeted_.push_back(mj.name);
        // A translation (SL axes, scaled) as a position key: turned into SL's parent frame,
        // over the SL parent's rest scale.
        const auto to_key = [&](Vec3 p) {
            if (!parent_same) p = rotate(p, pre);
            const Vec3 ps = sp < 0 ? Vec3{1.f, 1.f, 1.f} : sk_.rest_scales()[static_cast<std::size_t>(sp)];
            if (ps.x != 0.f) p.x /= ps.x;
            if (ps.y != 0.f) p.y /= ps.y;
            if (ps.z != 0.f) p.z /= ps.z;
            return p;
        };
        if (!rot) rest_pos_[j] = to_key(rest_.translation[node]);
        const std::size_t n = rot ? 4 : 3;
        for (std::size_t k = 0; k < tr.times.size(); ++k) {
            const float* v = &tr.values[k * n];
            const float t = tr.times[k];
            last_time_ = std::max(last_time_, t);
            if (rot) {
                auto q = unit(v[0], v[1], v[2], v[3]);
                if (!q)
                    return Error{fmt::format("{}: animations[{}].samplers[{}]: rotation key {} is a zero quaternion",
                                             path_, ai_, sampler, k)};
                Quat l = gltf_to_sl(*q);
                if (!parent_same || !joint_same) {
                    const Quat r = hamilton(hamilton(pre, l), post);
                    l = unit(r.x, r.y, r.z, r.w).value_or(Quat::identity());
                }
                if (l.w < 0.f) l = {-l.x, -l.y, -l.z, -l.w};
                mj.rot_keys.push_back({t, l});
            } else {
                mj.pos_keys.push_back({t, to_key(gltf_to_sl(Vec3{v[0], v[1], v[2]}) * o_.scale)});
            }
        }
        return true;
    }

    /// The header: defaults like the BVH importer, then the exporter's extras, then the options.
    Result<bool> read_header() {
        Motion& motion = res_.motion;
        motion.base_priority = 2;
        motion.ease_in = motion.ease_out = 0.3f;
        motion.hand_pose = 1;
        motion.duration = last_time_;
        const Value& ex = anim_.extras;
        std::optional<double> loop_out;
        if (written_by_slanim())
            if (auto r = read_extras(ex, loop_out); !r) return r;
        const BvhImportOptions& im = o_.import;
        if (im.priority) motion.base_priority = *im.priority;
        if (im.loop) motion.loop = *im.loop;
        if (im.loop_in) motion.loop_in = *im.loop_in;
        if (im.loop_out) loop_out = *im.loop_out;
        if (im.ease_in) motion.ease_in = *im.ease_in;
        if (im.ease_out) motion.ease_out = *im.ease_out;
        if (im.hand_pose) motion.hand_pose = *im.hand_pose;
        if (im.emote) motion.emote_name = *im.emote;
        motion.loop_out = loop_out ? static_cast<float>(*loop_out) : motion.duration;
        motion.max_priority = motion.base_priority;
        for (const MotionJoint& mj : motion.joints) motion.max_priority = std::max(motion.max_priority, mj.priority);
        return true;
    }

    /// The exporter's extras (slanim-anim). Ranges: the duration within MAX_ANIM_DURATION (and at
    /// least the last key), priorities as the .anim allows them (−1 = the base priority for a
    /// joint), hand poses 0..13, other numbers (loop points, eases, constraint fields: any finite
    /// value in an .anim) within ±10⁶.
    Result<bool> read_extras(const Value& ex, std::optional<double>& loop_out) {
        Motion& motion = res_.motion;
        ExtrasReader rd{fmt::format("{}: animations[{}].extras", path_, ai_), {}};
        const auto as_float = [](std::optional<double> v) { return static_cast<float>(*v); };
        if (auto d = rd.num(ex, "", "duration", 0, kMaxDuration); d && *d >= last_time_ - 1e-4) motion.duration = as_float(d);
        if (auto v = rd.num(ex, "", "priority", 0, 6)) motion.base_priority = static_cast<int>(*v);
        if (ex.Has("loop") && ex.Get("loop").IsBool()) motion.loop = ex.Get("loop").Get<bool>();
        if (auto v = rd.num(ex, "", "loop_in", -1e6, 1e6)) motion.loop_in = as_float(v);
        loop_out = rd.num(ex, "", "loop_out", -1e6, 1e6);
        if (auto v = rd.num(ex, "", "ease_in", -1e6, 1e6)) motion.ease_in = as_float(v);
        if (auto v = rd.num(ex, "", "ease_out", -1e6, 1e6)) motion.ease_out = as_float(v);
        if (auto v = rd.num(ex, "", "hand_pose", 0, kNumHandPoses - 1)) motion.hand_pose = static_cast<std::uint32_t>(*v);
        if (ex.Has("emote") && ex.Get("emote").IsString()) motion.emote_name = ex.Get("emote").Get<std::string>();
        if (ex.Has("joint_priorities") && ex.Get("joint_priorities").IsObject()) {
            const Value& jp = ex.Get("joint_priorities");
            for (const std::string& key : jp.Keys()) {
                if (!jp.Get(key).IsNumber()) continue;
                const int j = sk_.find(key);
                if (j < 0) continue;
                if (auto v = rd.check(jp.Get(key), ".joint_priorities." + key, -1, 6))
                    joint_entry(j).priority = static_cast<int>(*v);
            }
        }
        if (ex.Has("constraints") && ex.Get("constraints").IsArray()) {
            const Value& cs = ex.Get("constraints");
            for (std::size_t i = 0; i < cs.ArrayLen(); ++i) {
                const Value& c = cs.Get(static_cast<int>(i));
                if (c.IsObject()) motion.constraints.push_back(read_constraint(rd, c, fmt::format(".constraints[{}]", i)));
            }
        }
        if (!rd.bad.empty()) return Error{rd.bad};
        return true;
    }

    static MotionConstraint read_constraint(ExtrasReader& rd, const Value& c, const std::string& at) {
        MotionConstraint mc;
        mc.chain_length = static_cast<int>(rd.num(c, at, "chain_length", 0, 255).value_or(0));
        mc.type = c.Has("type") && c.Get("type").IsString() && c.Get("type").Get<std::string>() == "plane"
                      ? ConstraintType::Plane
                      : ConstraintType::Point;
        if (c.Has("source_volume") && c.Get("source_volume").IsString())
            mc.source_volume = c.Get("source_volume").Get<std::string>();
        mc.source_offset = rd.vec(c, at, "source_offset");
        if (c.Has("target_volume") && c.Get("target_volume").IsString()) {
            mc.target_volume = c.Get("target_volume").Get<std::string>();
            if (mc.target_volume == "GROUND") mc.target_ground = true, mc.target_volume.clear();
        }
        mc.target_offset = rd.vec(c, at, "target_offset");
        mc.target_dir = rd.vec(c, at, "target_dir");
        mc.ease_in_start = static_cast<float>(rd.num(c, at, "ease_in_start", -1e6, 1e6).value_or(0));
        mc.ease_in_stop = static_cast<float>(rd.num(c, at, "ease_in_stop", -1e6, 1e6).value_or(0));
        mc.ease_out_start = static_cast<float>(rd.num(c, at, "ease_out_start", -1e6, 1e6).value_or(0));
        mc.ease_out_stop = static_cast<float>(rd.num(c, at, "ease_out_stop", -1e6, 1e6).value_or(0));
        return mc;
    }

    const tinygltf::Model& m_;
    const std::string& path_;
    const Skeleton& sk_;
    const ImportOptions& o_;
    const int ai_;
    const tinygltf::Animation& anim_;
    const NodeRest rest_;
    const std::vector<Quat> sl_world_;
    ImportResult res_;
    float last_time_ = 0.f;
    std::map<int, std::size_t> motion_joint_of_;  // SL joint → index in motion.joints
    std::map<int, int> node_of_joint_;            // SL joint → the glTF node animating it
    std::map<std::pair<int, std::string>, std::size_t> channel_of_target_;  // (node, path) → channel
    std::set<int> named_directly_;
    std::map<int, Vec3> rest_pos_;  // SL joint → its node's rest translation as a position key
    std::vector<std::string> unknown_, retargeted_;
};

}  // namespace

Result<ImportResult> import_model(const tinygltf::Model& m, const std::string& path, const Skeleton& sk,
                                  const ImportOptions& o) {
    if (m.skins.empty()) return Error{fmt::format("{}: the file has no skin (\"skins\" is empty): not a skinned armature", path)};
    auto ai = pick_animation(m, o.animation, path);
    if (!ai) return ai.error();
    if (!std::isfinite(o.scale) || o.scale <= 0.f)
        return Error{fmt::format("{}: --scale {} must be a finite number > 0", path, o.scale)};
    auto rest = node_rest(m, path, o.scale);
    if (!rest) return rest.error();
    return AnimationImporter(m, path, sk, o, *ai, std::move(*rest)).run();
}

int rig_name_joint(const Skeleton& sk, std::string_view name) {
    if (name.empty() || name.size() > 64 || !std::isupper(static_cast<unsigned char>(name.front()))) return -1;
    if (sk.find(name) >= 0) return -1;  // the skeleton's own name: Chest, Neck, Skull... are attachment points
    std::string sl_name(1, 'm');
    sl_name.append(name);
    const int j = sk.find(sl_name);
    if (j < 0 || sk.kind(j) != JointKind::Bone || j == sk.pelvis() || sk.name(j) != sl_name) return -1;
    return j;
}

Result<ImportResult> import_file(const std::string& path, const Skeleton& sk, const ImportOptions& o) {
    auto model = load_model(path);
    if (!model) return model.error();
    return import_model(*model, path, sk, o);
}

Result<ImportResult> import_bytes(std::span<const std::uint8_t> bytes, const std::string& name, const Skeleton& sk,
                                  const ImportOptions& o) {
    auto model = load_model(bytes, name);
    if (!model) return model.error();
    return import_model(*model, name, sk, o);
}

Result<std::string> describe_file(const std::string& path, const Skeleton& sk) {
    auto model = load_model(path);
    if (!model) return model.error();
    const tinygltf::Model& m = *model;
    std::string text;
    auto out = std::back_inserter(text);
    fmt::format_to(out, "{}: glTF 2.0, {} nodes, {} skin(s), {} animation(s)\n", path, m.nodes.size(), m.skins.size(),
                       m.animations.size());
    std::vector<std::string> mapped, unmapped;
    std::vector<bool> is_joint(m.nodes.size(), false);
    for (const auto& s : m.skins)
        for (int j : s.joints)
            if (j >= 0 && static_cast<std::size_t>(j) < m.nodes.size()) is_joint[static_cast<std::size_t>(j)] = true;
    for (std::size_t i = 0; i < m.nodes.size(); ++i) {
        if (!is_joint[i]) continue;
        const std::string& n = m.nodes[i].name;
        const int j = resolve_joint(sk, n);
        if (j >= 0) mapped.push_back(n == sk.name(j) ? n : n + " → " + sk.name(j));
        else if (n != "mRoot") unmapped.push_back(n.empty() ? fmt::format("nodes[{}]", i) : n);
    }
    for (std::size_t a = 0; a < m.animations.size(); ++a) {
        const auto& an = m.animations[a];
        float dur = 0.f;
        std::map<std::string, int> interps;
        std::vector<std::string> unmapped_targets;
        for (const auto& ch : an.channels) {
            if (ch.sampler >= 0 && static_cast<std::size_t>(ch.sampler) < an.samplers.size()) {
                const auto& s = an.samplers[static_cast<std::size_t>(ch.sampler)];
                ++interps[s.interpolation.empty() ? "LINEAR" : s.interpolation];
                if (s.input >= 0 && static_cast<std::size_t>(s.input) < m.accessors.size()) {
                    const auto& acc = m.accessors[static_cast<std::size_t>(s.input)];
                    if (!acc.maxValues.empty()) dur = std::max(dur, static_cast<float>(acc.maxValues[0]));
                }
            }
            if (ch.target_node >= 0 && static_cast<std::size_t>(ch.target_node) < m.nodes.size()) {
                const std::string& n = m.nodes[static_cast<std::size_t>(ch.target_node)].name;
                if (resolve_joint(sk, n) < 0 && std::find(unmapped_targets.begin(), unmapped_targets.end(), n) == unmapped_targets.end())
                    unmapped_targets.push_back(n);
            }
        }
        std::string ip;
        for (const auto& [k, v] : interps) ip += fmt::format("{}{} {}", ip.empty() ? "" : ", ", v, k);
        fmt::format_to(out, "  animation {} \"{}\": {:.3f} s, {} channels, {} samplers ({})\n", a, an.name, dur,
                           an.channels.size(), an.samplers.size(), ip.empty() ? "none" : ip);
        if (!unmapped_targets.empty()) {
            std::string l;
            for (const auto& n : unmapped_targets) l += (l.empty() ? "" : ", ") + n;
            fmt::format_to(out, "    animated nodes that are not SL joints: {}\n", l);
        }
    }
    std::string ml, ul;
    for (const auto& n : mapped)
        if (n.find(" → ") != std::string::npos) ml += (ml.empty() ? "" : ", ") + n;
    for (const auto& n : unmapped) ul += (ul.empty() ? "" : ", ") + n;
    fmt::format_to(out, "  joints mapped to SL: {}{}\n", mapped.size(), ml.empty() ? "" : " (through aliases or rig names: " + ml + ")");
    fmt::format_to(out, "  joints not mapped ({}): {}\n", unmapped.size(), ul.empty() ? "none" : ul);
    return text;
}

}  // namespace slanim::gltf
