// SPDX-License-Identifier: MIT
// avatar_lad.xml reader (`LLAvatarAppearance::LLAvatarXmlInfo::parseXml*`,
// `LLVisualParamInfo::parseXml`, `LLViewerVisualParamInfo::parseXml`,
// `LLPolyMorphTargetInfo::parseXml`, `LLPolySkeletalDistortionInfo::parseXml`,
// `LLDriverParamInfo::parseXml`; spec §6). See avatar_definition.hpp for what is read.
#include "slanim/appearance/avatar_definition.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/formats/skeleton_xml.hpp"

#include <fmt/format.h>
#include <pugixml.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <utility>


namespace slanim {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

bool parse_float(std::string_view s, float& out) {
    s = trim(s);
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    float v = 0.f;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) return false;
    out = v;
    return true;
}

bool parse_int(std::string_view s, int& out) {
    s = trim(s);
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    int v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return false;
    out = v;
    return true;
}

bool parse_vec3(std::string_view s, Vec3& out) {
    float v[3];
    for (float& x : v) {
        s = trim(s);
        std::size_t e = 0;
        while (e < s.size() && !is_space(s[e])) ++e;
        if (e == 0 || !parse_float(s.substr(0, e), x)) return false;
        s.remove_prefix(e);
    }
    if (!trim(s).empty()) return false;
    out = {v[0], v[1], v[2]};
    return true;
}

/// `LLStringUtil::convertToBOOL`.
bool parse_bool(std::string_view s, bool& out) {
    s = trim(s);
    if (s == "1" || s == "T" || s == "t" || s == "TRUE" || s == "true" || s == "True") {
        out = true;
        return true;
    }
    if (s == "0" || s == "F" || s == "f" || s == "FALSE" || s == "false" || s == "False") {
        out = false;
        return true;
    }
    return false;
}

bool iequal(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

class Reader {
public:
    explicit Reader(std::string_view text) : text_(text) {}

    Result<AvatarDefinition> run();

private:
    std::string_view text_;
    pugi::xml_document doc_;
    AvatarDefinition def_;
    std::optional<Error> err_;

    [[nodiscard]] long long line_at(const pugi::xml_node& n) const {
        const std::ptrdiff_t off = n.offset_debug();
        if (off < 0) return -1;
        const auto end = std::min(static_cast<std::size_t>(off), text_.size());
        return 1 + std::count(text_.begin(), text_.begin() + static_cast<std::ptrdiff_t>(end), '\n');
    }
    static std::string where(const pugi::xml_node& n) {
        std::string w = std::string("<") + n.name();
        if (const auto id = n.attribute("id")) w += fmt::format(" id=\"{}\"", id.value());
        if (const auto name = n.attribute("name")) w += fmt::format(" name=\"{}\"", name.value());
        return w + ">";
    }
    bool fail(const pugi::xml_node& n, const std::string& what) {
        if (!err_) {
            const long long line = line_at(n);
            err_ = Error{fmt::format("line {}: {}: {}", line, where(n), what), -1, line};
        }
        return false;
    }
    void ignore(const pugi::xml_node& n, std::string_view why) {
        def_.ignored.push_back(fmt::format("line {}: {} ignored: {}", line_at(n), where(n), why));
    }

    bool opt_float(const pugi::xml_node& n, const char* attr, float& out) {
        const pugi::xml_attribute a = n.attribute(attr);
        if (a && !parse_float(a.value(), out))
            return fail(n, fmt::format("attribute {}=\"{}\" is not a number", attr, a.value()));
        return true;
    }
    bool opt_int(const pugi::xml_node& n, const char* attr, int& out) {
        const pugi::xml_attribute a = n.attribute(attr);
        if (a && !parse_int(a.value(), out))
            return fail(n, fmt::format("attribute {}=\"{}\" is not an integer", attr, a.value()));
        return true;
    }
    bool req_int(const pugi::xml_node& n, const char* attr, int& out) {
        if (!n.attribute(attr)) return fail(n, fmt::format("missing attribute {}", attr));
        return opt_int(n, attr, out);
    }
    bool opt_vec3(const pugi::xml_node& n, const char* attr, Vec3& out, bool* present = nullptr) {
        const pugi::xml_attribute a = n.attribute(attr);
        if (present) *present = static_cast<bool>(a);
        if (a && !parse_vec3(a.value(), out))
            return fail(n, fmt::format("attribute {}=\"{}\" is not three numbers", attr, a.value()));
        return true;
    }
    bool opt_bool(const pugi::xml_node& n, const char* attr, bool& out) {
        const pugi::xml_attribute a = n.attribute(attr);
        if (a && !parse_bool(a.value(), out))
            return fail(n, fmt::format("attribute {}=\"{}\" is not a boolean", attr, a.value()));
        return true;
    }

    bool common(const pugi::xml_node& n, VisualParamDef& p);
    bool param(const pugi::xml_node& n, VisualParamKind kind, const pugi::xml_node& body);
    bool skeleton(const pugi::xml_node& n);
    bool mesh(const pugi::xml_node& n);
    bool layer_params(const pugi::xml_node& owner);
    bool driver_parameters(const pugi::xml_node& n);
    bool check_driven();
};

// `LLVisualParamInfo::parseXml` + `LLViewerVisualParamInfo::parseXml`.
bool Reader::common(const pugi::xml_node& n, VisualParamDef& p) {
    if (!req_int(n, "id", p.id)) return false;
    int group = 0;
    if (!opt_int(n, "group", group)) return false;
    if (group >= 0 && group <= 3) p.group = static_cast<VisualParamGroup>(group);
    if (!opt_float(n, "value_min", p.min) || !opt_float(n, "value_max", p.max)) return false;
    if (p.min > p.max) return fail(n, fmt::format("value_min {} > value_max {}", p.min, p.max));
    if (!opt_float(n, "value_default", p.default_weight)) return false;
    p.default_weight = std::clamp(p.default_weight, p.min, p.max);
    const std::string_view sex = n.attribute("sex").as_string("both");
    if (sex == "both") p.sex = Sex::Both;
    else if (sex == "male") p.sex = Sex::Male;
    else if (sex == "female") p.sex = Sex::Female;
    else return fail(n, fmt::format("sex=\"{}\" (expected both, male or female)", sex));
    const pugi::xml_attribute name = n.attribute("name");
    if (!name) return fail(n, "missing attribute name");
    p.name = name.value();
    p.label = n.attribute("label").as_string(p.name.c_str());
    p.wearable = n.attribute("wearable").value();
    p.edit_group = n.attribute("edit_group").value();
    return opt_bool(n, "shared", p.shared);
}

bool Reader::param(const pugi::xml_node& n, VisualParamKind kind, const pugi::xml_node& body) {
    VisualParamDef p;
    p.kind = kind;
    if (!common(n, p)) return false;
    switch (kind) {
    case VisualParamKind::Morph:
        p.mesh_type = n.parent().attribute("type").value();
        p.morph_name = p.name;
        if (!opt_bool(n, "clothing_morph", p.clothing_morph)) return false;
        for (const pugi::xml_node c : body.children()) {
            if (c.type() != pugi::node_element) continue;
            if (std::string_view(c.name()) != "volume_morph") {
                ignore(c, "unknown element in <param_morph>");
                continue;
            }
            VolumeMorphDef v;
            if (!c.attribute("name")) {
                ignore(c, "<volume_morph> without a name");
                continue;
            }
            v.volume = c.attribute("name").value();
            if (!opt_vec3(c, "scale", v.scale) || !opt_vec3(c, "pos", v.position)) return false;
            p.volume_morphs.push_back(std::move(v));
        }
        break;
    case VisualParamKind::Skeleton:
        for (const pugi::xml_node c : body.children()) {
            if (c.type() != pugi::node_element) continue;
            if (std::string_view(c.name()) != "bone") {
                ignore(c, "unknown element in <param_skeleton>");
                continue;
            }
            if (!c.attribute("name") || !c.attribute("scale")) {
                ignore(c, "a skeletal distortion <bone> needs name and scale");
                continue;
            }
            BoneDeformDef b;
            b.bone = c.attribute("name").value();
            if (!opt_vec3(c, "scale", b.scale) || !opt_vec3(c, "offset", b.offset, &b.has_offset)) return false;
            p.bones.push_back(std::move(b));
        }
        break;
    case VisualParamKind::Driver:
        if (p.id < 0) return fail(n, "a driver param needs an id >= 0");
        for (const pugi::xml_node c : body.children()) {
            if (c.type() != pugi::node_element) continue;
            if (std::string_view(c.name()) != "driven") {
                ignore(c, "unknown element in <param_driver>");
                continue;
            }
            DrivenDef d;
            d.min1 = p.min;  // LLDriverParamInfo::parseXml defaults
            d.max1 = p.max;
            d.max2 = p.max;
            d.min2 = p.max;
            if (!req_int(c, "id", d.id) || !opt_float(c, "min1", d.min1) || !opt_float(c, "max1", d.max1) ||
                !opt_float(c, "max2", d.max2) || !opt_float(c, "min2", d.min2))
                return false;
            p.driven.push_back(d);
        }
        break;
    case VisualParamKind::Color:
    case VisualParamKind::Alpha:
        break;  // texture-layer data: the weights are all the model keeps
    }
    def_.params.push_back(std::move(p));
    return true;
}

// `parseXmlSkeletonNode`: distortion params (attachment points: parse_attachment_points).
bool Reader::skeleton(const pugi::xml_node& n) {
    def_.skeleton_file = n.attribute("file_name").value();
    for (const pugi::xml_node c : n.children()) {
        if (c.type() != pugi::node_element) continue;
        const std::string_view tag = c.name();
        if (tag == "attachment_point") continue;
        if (tag != "param") {
            ignore(c, "unknown element in <skeleton>");
            continue;
        }
        const pugi::xml_node body = c.child("param_skeleton");
        if (!body)
            return fail(c, c.child("param_morph") ? "a morph param cannot be in <skeleton>"
                                                  : "a <skeleton> param needs <param_skeleton>");
        if (!param(c, VisualParamKind::Skeleton, body)) return false;
    }
    return true;
}

// `parseXmlMeshNodes`.
bool Reader::mesh(const pugi::xml_node& n) {
    MeshDef m;
    const pugi::xml_attribute type = n.attribute("type");
    if (!type) return fail(n, "missing attribute type");
    m.type = type.value();
    const auto* entry = std::find_if(std::begin(kAvatarMeshTypes), std::end(kAvatarMeshTypes),
                                     [&](const AvatarMeshType& t) { return t.type == m.type; });
    if (entry == std::end(kAvatarMeshTypes)) return fail(n, fmt::format("unknown mesh type \"{}\"", m.type));
    if (!req_int(n, "lod", m.lod)) return false;
    if (m.lod < 0 || m.lod >= entry->lods)
        return fail(n, fmt::format("lod {} is out of range for {} (0…{})", m.lod, m.type, entry->lods - 1));
    const pugi::xml_attribute file = n.attribute("file_name");
    if (!file || !*file.value()) return fail(n, "missing attribute file_name");
    m.file_name = file.value();
    m.reference = n.attribute("reference").value();
    if (!m.reference.empty() &&
        std::none_of(def_.meshes.begin(), def_.meshes.end(),
                     [&](const MeshDef& e) { return e.file_name == m.reference; }))
        return fail(n, fmt::format("reference \"{}\" names no earlier <mesh> file", m.reference));
    if (!opt_int(n, "min_pixel_width", m.min_pixel_width)) return false;
    if (n.attribute("min_pixel_area")) {
        if (!opt_float(n, "min_pixel_area", m.min_pixel_area)) return false;
    } else if (n.attribute("min_pixel_width")) {
        const auto w = static_cast<float>(m.min_pixel_width);
        m.min_pixel_area = w * w;
    }
    def_.meshes.push_back(m);
    for (const pugi::xml_node c : n.children()) {
        if (c.type() != pugi::node_element) continue;
        if (std::string_view(c.name()) != "param") {
            ignore(c, "unknown element in <mesh>");
            continue;
        }
        const pugi::xml_node body = c.child("param_morph");
        if (!body)
            return fail(c, c.child("param_skeleton") ? "a skeleton param cannot be in <mesh>"
                                                     : "a <mesh> param needs <param_morph>");
        if (!param(c, VisualParamKind::Morph, body)) return false;
    }
    return true;
}

// The `<param>` children of a `<global_color>` or `<layer>` (`LLTexLayerParamColorInfo`,
// `LLTexLayerParamAlphaInfo`).
bool Reader::layer_params(const pugi::xml_node& owner) {
    for (const pugi::xml_node c : owner.children("param")) {
        if (const pugi::xml_node body = c.child("param_color")) {
            if (!param(c, VisualParamKind::Color, body)) return false;
        } else if (const pugi::xml_node alpha = c.child("param_alpha")) {
            if (!param(c, VisualParamKind::Alpha, alpha)) return false;
        } else {
            ignore(c, fmt::format("a <{}> param needs <param_color> or <param_alpha>", owner.name()));
        }
    }
    return true;
}

// `parseXmlDriverNodes`: a param without `<param_driver>` is skipped.
bool Reader::driver_parameters(const pugi::xml_node& n) {
    for (const pugi::xml_node c : n.children()) {
        if (c.type() != pugi::node_element) continue;
        if (std::string_view(c.name()) != "param") {
            ignore(c, "unknown element in <driver_parameters>");
            continue;
        }
        const pugi::xml_node body = c.child("param_driver");
        if (!body) {
            ignore(c, "a <driver_parameters> param needs <param_driver>");
            continue;
        }
        if (!param(c, VisualParamKind::Driver, body)) return false;
    }
    return true;
}

bool Reader::check_driven() {
    std::set<int> ids;
    for (const VisualParamDef& p : def_.params) ids.insert(p.id);
    // Every <driver_parameters> block (a file may have several; each is read).
    for (const pugi::xml_node block : doc_.document_element().children("driver_parameters"))
        for (const pugi::xml_node param : block.children("param"))
            for (const pugi::xml_node d : param.child("param_driver").children("driven")) {
                int id = 0;
                if (parse_int(d.attribute("id").value(), id) && !ids.count(id))
                    return fail(d, fmt::format("driven id {} names no param", id));
            }
    return true;
}

Result<AvatarDefinition> Reader::run() {
    const pugi::xml_parse_result res =
        doc_.load_buffer(text_.data(), text_.size(), pugi::parse_default, pugi::encoding_utf8);
    if (!res) {
        const auto end = std::min(static_cast<std::size_t>(std::max<std::ptrdiff_t>(res.offset, 0)), text_.size());
        const long long line = 1 + std::count(text_.begin(), text_.begin() + static_cast<std::ptrdiff_t>(end), '\n');
        return Error{fmt::format("line {}: malformed XML: {}", line, res.description()), -1, line};
    }
    const pugi::xml_node root = doc_.document_element();
    if (std::string_view(root.name()) != "linden_avatar") {
        fail(root, "expected the root element <linden_avatar>");
        return *err_;
    }
    const std::string_view version = root.attribute("version").value();
    if (version != "1.0" && version != "2.0") {
        fail(root, fmt::format("version=\"{}\" (expected 1.0 or 2.0)", version));
        return *err_;
    }
    def_.version_major = version[0] - '0';
    def_.version_minor = version[2] - '0';
    if (!opt_int(root, "wearable_definition_version", def_.wearable_definition_version)) return *err_;

    bool have_skeleton = false;
    for (const pugi::xml_node n : root.children()) {
        if (n.type() != pugi::node_element) continue;
        const std::string_view tag = n.name();
        bool ok = true;
        if (tag == "skeleton") {
            if (have_skeleton) {
                ignore(n, "only the first <skeleton> is read");
                continue;
            }
            have_skeleton = true;
            ok = skeleton(n);
        } else if (tag == "mesh") {
            ok = mesh(n);
        } else if (tag == "global_color") {
            ok = layer_params(n);
        } else if (tag == "layer_set") {
            for (const pugi::xml_node layer : n.children("layer"))
                if (ok) ok = layer_params(layer);
        } else if (tag == "driver_parameters") {
            ok = driver_parameters(n);
        } else if (tag != "morph_masks") {
            ignore(n, "unknown element in <linden_avatar>");
        }
        if (!ok) return *err_;
    }
    if (!have_skeleton) {
        fail(root, "missing <skeleton>");
        return *err_;
    }
    if (!check_driven()) return *err_;

    SkeletonDesc points;
    if (const Result<bool> ok = parse_attachment_points(text_, points); !ok) {
        Error e = ok.error();
        if (e.line >= 0) e.message = fmt::format("line {}: {}", e.line, e.message);
        return e;
    }
    def_.attachment_points = std::move(points.attachments);
    return std::move(def_);
}

}  // namespace

const VisualParamDef* AvatarDefinition::find(int id) const {
    for (const VisualParamDef& p : params)
        if (p.id == id) return &p;
    return nullptr;
}

const VisualParamDef* AvatarDefinition::find(std::string_view name) const {
    for (const VisualParamDef& p : params)
        if (iequal(p.name, name)) return &p;
    return nullptr;
}

Result<AvatarDefinition> parse_avatar_definition(std::string_view xml_text) { return Reader(xml_text).run(); }

Result<AvatarDefinition> load_avatar_definition(const std::filesystem::path& character_dir) {
    const std::filesystem::path path = character_dir / "avatar_lad.xml";
    auto bytes = read_file_bytes(path.string());
    if (!bytes) return bytes.error();
    Result<AvatarDefinition> d =
        parse_avatar_definition(std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()));
    if (!d) {
        Error e = d.error();
        e.message = path.string() + ": " + e.message;
        return e;
    }
    return d;
}

const char* visual_param_kind_name(VisualParamKind kind) {
    switch (kind) {
        case VisualParamKind::Morph: return "morph";
        case VisualParamKind::Skeleton: return "skeleton";
        case VisualParamKind::Driver: return "driver";
        case VisualParamKind::Color: return "color";
        case VisualParamKind::Alpha: return "alpha";
    }
    return "?";
}

}  // namespace slanim
