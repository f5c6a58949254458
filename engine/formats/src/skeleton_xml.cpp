// SPDX-License-Identifier: MIT
// Readers for avatar_skeleton.xml (`LLAvatarBoneInfo::parseXml`) and the `<attachment_point>`
// elements of avatar_lad.xml (`LLVOAvatarXmlInfo::parseXmlSkeletonNode`), spec §7.1 and §7.2.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include <pugixml.hpp>

#include "slanim/formats/skeleton_xml.hpp"

namespace slanim {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// One parsed document: keeps the source text to turn node offsets into line numbers.
class Doc {
public:
    explicit Doc(std::string_view text) : text_(text) {}

    /// Parses the text; on failure returns the error (with its line).
    std::optional<Error> load() {
        const pugi::xml_parse_result res =
            doc_.load_buffer(text_.data(), text_.size(), pugi::parse_default, pugi::encoding_utf8);
        if (res) return std::nullopt;
        return Error{std::string("malformed XML: ") + res.description(), -1, line_at(res.offset)};
    }

    [[nodiscard]] pugi::xml_node root() const { return doc_.document_element(); }

    [[nodiscard]] long long line_at(std::ptrdiff_t offset) const {
        if (offset < 0) return -1;
        const auto end = std::min(static_cast<std::size_t>(offset), text_.size());
        return 1 + std::count(text_.begin(), text_.begin() + static_cast<std::ptrdiff_t>(end), '\n');
    }

    /// An error about `node`: "<bone name="mFoo">: what", with the element's line.
    [[nodiscard]] Error error(const pugi::xml_node& node, const std::string& what) const {
        std::string where = std::string("<") + node.name();
        if (const auto name = node.attribute("name")) where += std::string(" name=\"") + name.value() + "\"";
        where += ">";
        return Error{where + ": " + what, -1, line_at(node.offset_debug())};
    }

private:
    std::string_view text_;
    pugi::xml_document doc_;
};

/// Strict "x y z": exactly three finite decimal numbers separated by whitespace.
std::optional<std::string> parse_vec3(std::string_view s, Vec3& out) {
    float v[3] = {0.f, 0.f, 0.f};
    const char* p = s.data();
    const char* const end = p + s.size();
    const auto skip = [&] {
        while (p != end && is_space(*p)) ++p;
    };
    for (int i = 0; i < 3; ++i) {
        skip();
        if (p == end) return "expected 3 numbers, found " + std::to_string(i);
        const auto [q, ec] = std::from_chars(p, end, v[i]);
        const char* tok_end = p;
        while (tok_end != end && !is_space(*tok_end)) ++tok_end;
        const std::string tok(p, tok_end);
        if (ec == std::errc::result_out_of_range) return "number '" + tok + "' is out of range";
        if (ec != std::errc{} || q != tok_end) return "'" + tok + "' is not a number";
        if (!std::isfinite(v[i])) return "'" + tok + "' is not a finite number";
        p = q;
    }
    skip();
    if (p != end) return "expected exactly 3 numbers, found more";
    out = Vec3{v[0], v[1], v[2]};
    return std::nullopt;
}

std::optional<std::string> parse_int(std::string_view s, int& out) {
    const auto [q, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec != std::errc{} || q != s.data() + s.size() || s.empty())
        return "'" + std::string(s) + "' is not an integer";
    return std::nullopt;
}

std::string quoted(std::string_view attr) { return "attribute '" + std::string(attr) + "'"; }

/// Reads a required (or, with `required` false, optional) "x y z" attribute into `out`.
std::optional<Error> read_vec3(const Doc& doc, const pugi::xml_node& node, const char* attr,
                               bool required, Vec3& out) {
    const pugi::xml_attribute a = node.attribute(attr);
    if (!a) {
        if (required) return doc.error(node, "missing required " + quoted(attr));
        return std::nullopt;
    }
    if (auto why = parse_vec3(a.value(), out))
        return doc.error(node, quoted(attr) + " = \"" + a.value() + "\": " + *why);
    return std::nullopt;
}

std::optional<Error> read_int(const Doc& doc, const pugi::xml_node& node, const char* attr,
                              bool required, int& out) {
    const pugi::xml_attribute a = node.attribute(attr);
    if (!a) {
        if (required) return doc.error(node, "missing required " + quoted(attr));
        return std::nullopt;
    }
    if (auto why = parse_int(a.value(), out)) return doc.error(node, quoted(attr) + ": " + *why);
    return std::nullopt;
}

std::optional<Error> read_string(const Doc& doc, const pugi::xml_node& node, const char* attr,
                                 std::string& out) {
    const pugi::xml_attribute a = node.attribute(attr);
    if (!a) return doc.error(node, "missing required " + quoted(attr));
    out = a.value();
    if (out.empty()) return doc.error(node, quoted(attr) + " is empty");
    return std::nullopt;
}

std::vector<std::string> split_words(std::string_view s) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && is_space(s[i])) ++i;
        std::size_t j = i;
        while (j < s.size() && !is_space(s[j])) ++j;
        if (j > i) out.emplace_back(s.substr(i, j - i));
        i = j;
    }
    return out;
}

/// One `<bone>` or `<collision_volume>` (attributes only; the walk handles children).
std::optional<Error> read_joint(const Doc& doc, const pugi::xml_node& node, bool bone,
                                std::string parent, JointDesc& j) {
    j.kind = bone ? JointKind::Bone : JointKind::CollisionVolume;
    j.parent = std::move(parent);
    if (auto e = read_string(doc, node, "name", j.name)) return e;
    if (bone) j.aliases = split_words(node.attribute("aliases").value());
    if (auto e = read_vec3(doc, node, "pos", true, j.position)) return e;
    if (auto e = read_vec3(doc, node, "rot", true, j.rotation_deg)) return e;
    if (auto e = read_vec3(doc, node, "scale", true, j.scale)) return e;
    if (auto e = read_vec3(doc, node, "pivot", bone, j.pivot)) return e;
    if (auto e = read_vec3(doc, node, "end", false, j.end)) return e;
    const std::string_view support = node.attribute("support").as_string("base");
    if (support == "extended") {
        j.extended = true;
    } else if (support != "base") {
        return doc.error(node, quoted("support") + " = \"" + std::string(support) +
                                   "\": expected \"base\" or \"extended\"");
    }
    j.group = node.attribute("group").as_string("global");
    return std::nullopt;
}

/// Checks an optional count attribute of <linden_skeleton> against what was read.
std::optional<Error> check_count(const Doc& doc, const pugi::xml_node& root, const char* attr,
                                 std::size_t found) {
    int declared = 0;
    if (!root.attribute(attr)) return std::nullopt;
    if (auto e = read_int(doc, root, attr, true, declared)) return e;
    if (declared < 0 || static_cast<std::size_t>(declared) != found)
        return doc.error(root, quoted(attr) + " = " + std::to_string(declared) + " but the file has " +
                                   std::to_string(found));
    return std::nullopt;
}

}  // namespace

Result<SkeletonDesc> parse_skeleton_xml(std::string_view xml_text) {
    Doc doc(xml_text);
    if (auto e = doc.load()) return *e;
    const pugi::xml_node root = doc.root();
    if (std::string_view(root.name()) != "linden_skeleton")
        return doc.error(root, "expected root element <linden_skeleton>");

    SkeletonDesc desc;
    // Iterative depth-first walk in document order (no recursion: the input may be hostile).
    const auto advance = [&root](pugi::xml_node n) {
        while (n && n != root) {
            if (const pugi::xml_node s = n.next_sibling()) return s;
            n = n.parent();
        }
        return pugi::xml_node();
    };
    for (pugi::xml_node n = root.first_child(); n;) {
        if (n.type() != pugi::node_element) {
            n = advance(n);
            continue;
        }
        const std::string_view tag = n.name();
        const bool bone = tag == "bone";
        if (!bone && tag != "collision_volume")
            return doc.error(n, "unexpected element (expected <bone> or <collision_volume>)");
        const bool top = n.parent() == root;
        if (top && !bone) return doc.error(n, "collision volume outside any <bone>");
        if (top && !desc.bones.empty()) return doc.error(n, "more than one top-level <bone>");

        JointDesc j;
        if (auto e = read_joint(doc, n, bone, top ? std::string() : n.parent().attribute("name").value(), j))
            return *e;
        (bone ? desc.bones : desc.volumes).push_back(std::move(j));

        if (!bone && n.find_child([](const pugi::xml_node& c) { return c.type() == pugi::node_element; }))
            return doc.error(n, "a collision volume cannot contain elements");
        n = bone && n.first_child() ? n.first_child() : advance(n);
    }
    if (desc.bones.empty()) return doc.error(root, "no <bone> elements");
    if (auto e = check_count(doc, root, "num_bones", desc.bones.size())) return *e;
    if (auto e = check_count(doc, root, "num_collision_volumes", desc.volumes.size())) return *e;
    return desc;
}

Result<bool> parse_attachment_points(std::string_view lad_text, SkeletonDesc& desc) {
    Doc doc(lad_text);
    if (auto e = doc.load()) return *e;
    const pugi::xml_node root = doc.root();
    if (std::string_view(root.name()) != "linden_avatar")
        return doc.error(root, "expected root element <linden_avatar>");
    const pugi::xml_node skeleton = root.child("skeleton");
    if (!skeleton) return doc.error(root, "missing <skeleton> element");

    std::vector<JointDesc> points;
    for (const pugi::xml_node n : skeleton.children("attachment_point")) {
        JointDesc j;
        j.kind = JointKind::AttachmentPoint;
        j.group.clear();
        if (auto e = read_string(doc, n, "name", j.name)) return *e;
        if (auto e = read_string(doc, n, "joint", j.parent)) return *e;
        if (auto e = read_int(doc, n, "id", true, j.attachment_id)) return *e;
        if (j.attachment_id < 1) return doc.error(n, quoted("id") + " must be >= 1");
        j.attachment_group = -1;  // the viewer's "none parsed"
        if (auto e = read_int(doc, n, "group", false, j.attachment_group)) return *e;
        if (auto e = read_vec3(doc, n, "position", false, j.position)) return *e;
        if (auto e = read_vec3(doc, n, "rotation", false, j.rotation_deg)) return *e;
        if (const pugi::xml_attribute hud = n.attribute("hud")) {
            const std::string_view v = hud.value();
            if (v == "true" || v == "1") {
                j.hud = true;
            } else if (v != "false" && v != "0") {
                return doc.error(n, quoted("hud") + " = \"" + std::string(v) + "\": expected true or false");
            }
        }
        points.push_back(std::move(j));
    }
    std::stable_sort(points.begin(), points.end(), [](const JointDesc& a, const JointDesc& b) {
        return a.attachment_id < b.attachment_id;
    });
    desc.attachments = std::move(points);
    return true;
}

namespace {

Result<std::string> read_text_file(const std::filesystem::path& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        return Error{path.string() + ": file not found (or not a regular file)"};
    std::ifstream in(path, std::ios::binary);
    if (!in) return Error{path.string() + ": cannot open for reading"};
    std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (in.bad()) return Error{path.string() + ": read error"};
    return text;
}

Error in_file(const std::filesystem::path& path, Error e) {
    e.message = path.string() + ": " + e.message;
    return e;
}

}  // namespace

Result<SkeletonDesc> load_skeleton_desc(const std::filesystem::path& character_dir) {
    const std::filesystem::path skel_path = character_dir / "avatar_skeleton.xml";
    const std::filesystem::path lad_path = character_dir / "avatar_lad.xml";
    Result<std::string> skel_text = read_text_file(skel_path);
    if (!skel_text) return skel_text.error();
    Result<std::string> lad_text = read_text_file(lad_path);
    if (!lad_text) return lad_text.error();

    Result<SkeletonDesc> desc = parse_skeleton_xml(*skel_text);
    if (!desc) return in_file(skel_path, desc.error());
    if (const Result<bool> ok = parse_attachment_points(*lad_text, *desc); !ok)
        return in_file(lad_path, ok.error());
    return desc;
}

Result<std::shared_ptr<const Skeleton>> load_skeleton(const std::filesystem::path& character_dir) {
    Result<SkeletonDesc> desc = load_skeleton_desc(character_dir);
    if (!desc) return desc.error();
    return Skeleton::build(*desc);
}

}  // namespace slanim
