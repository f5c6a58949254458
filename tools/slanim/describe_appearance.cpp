// SPDX-License-Identifier: MIT
#include "describe_appearance.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "slanim/appearance/avatar_definition.hpp"
#include "slanim/appearance/llm.hpp"
#include "slanim/appearance/wearable.hpp"

namespace slanim::cli {

namespace {

namespace fs = std::filesystem;

struct LoadedMesh {
    LlmMesh mesh;
    std::string layout_source;  // "avatar_lad.xml", "guessed from the name" or "guessed"
};

Result<LoadedMesh> load_mesh(const std::string& path) {
    const fs::path p(path);
    const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    std::error_code ec;
    if (fs::is_regular_file(dir / "avatar_lad.xml", ec)) {
        const Result<AvatarDefinition> def = load_avatar_definition(dir);
        if (def) {
            for (const MeshDef& m : def->meshes) {
                if (m.file_name != p.filename().string()) continue;
                Result<LlmMesh> mesh = load_llm(p, m.reference.empty() ? LlmFileKind::Base : LlmFileKind::Lod);
                if (!mesh) return mesh.error();
                return LoadedMesh{std::move(mesh.value()), "avatar_lad.xml"};
            }
        }
    }
    // No definition: a name ending in "_<digits>" is tried as an LOD first, then as a base
    // mesh; any other name only as a base mesh. The first error is reported.
    const std::string stem = p.stem().string();
    const std::size_t us = stem.rfind('_');
    const bool lod_name = us != std::string::npos && us + 1 < stem.size() &&
                          stem.find_first_not_of("0123456789", us + 1) == std::string::npos;
    Result<LlmMesh> first = load_llm(p, lod_name ? LlmFileKind::Lod : LlmFileKind::Base);
    if (first) return LoadedMesh{std::move(first.value()), "guessed from the name"};
    if (lod_name)
        if (Result<LlmMesh> base = load_llm(p, LlmFileKind::Base))
            return LoadedMesh{std::move(base.value()), "guessed"};
    return first.error();
}

std::size_t morph_entries(const LlmMesh& m) {
    std::size_t n = 0;
    for (const LlmMorph& morph : m.morphs) n += morph.vertices.size();
    return n;
}

std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const std::string& s : v) out += (out.empty() ? "" : " ") + s;
    return out;
}


std::map<std::string, int> count_kinds(const AvatarDefinition& d) {
    std::map<std::string, int> n;
    for (const VisualParamDef& p : d.params) ++n[visual_param_kind_name(p.kind)];
    return n;
}

}  // namespace

AppearanceFile appearance_file_kind(const std::string& path) {
    const fs::path p(path);
    const std::string ext = p.extension().string();
    if (ext == ".llm") return AppearanceFile::Mesh;
    if (ext == ".dat") return AppearanceFile::Wearable;
    if (p.filename() == "avatar_lad.xml") return AppearanceFile::AvatarDefinition;
    return AppearanceFile::None;
}

Result<std::string> describe_appearance_text(const std::string& path, bool verbose) {
    switch (appearance_file_kind(path)) {
    case AppearanceFile::Mesh: {
        Result<LoadedMesh> l = load_mesh(path);
        if (!l) return l.error();
        const LlmMesh& m = l->mesh;
        std::string s;
        if (m.kind == LlmFileKind::Lod) {
            s = fmt::format("{}: LOD mesh ({}) | {} faces addressing {} base vertices | {} trailing bytes\n", path,
                            l->layout_source, m.faces.size(), m.num_vertices(), m.trailing.size());
            return s;
        }
        s = fmt::format("{}: base mesh ({}) | {} vertices, {} faces | {} | {} morphs ({} deltas) | {} remaps | "
                        "pos ({},{},{}) scale ({},{},{})\n",
                        path, l->layout_source, m.coords.size(), m.faces.size(),
                        m.has_weights ? fmt::format("{} skin joints ({})", m.skin_joints.size(), join(m.skin_joints))
                                      : std::string("rigid"),
                        m.morphs.size(), morph_entries(m), m.remaps.size(), m.position.x, m.position.y, m.position.z,
                        m.scale.x, m.scale.y, m.scale.z);
        if (verbose)
            for (const LlmMorph& morph : m.morphs) s += fmt::format("  morph {} ({} vertices)\n", morph.name, morph.vertices.size());
        return s;
    }
    case AppearanceFile::Wearable: {
        Result<Wearable> w = load_wearable(path);
        if (!w) return w.error();
        std::string s = fmt::format(
            "{}: LLWearable v{} {} \"{}\"{} | {} params | {} textures | masks base {:08x} owner {:08x} next {:08x} | "
            "sale {} {}\n",
            path, w->version, wearable_type_name(w->type), w->name,
            w->description.empty() ? "" : fmt::format(" ({})", w->description), w->params.size(), w->textures.size(),
            w->permissions.base_mask, w->permissions.owner_mask, w->permissions.next_owner_mask,
            w->sale_info.sale_type, w->sale_info.sale_price);
        if (verbose) {
            for (const auto& [id, weight] : w->params) s += fmt::format("  param {} {}\n", id, weight);
            for (const auto& [te, uuid] : w->textures) s += fmt::format("  texture {} {}\n", te, uuid);
        }
        return s;
    }
    case AppearanceFile::AvatarDefinition: {
        const fs::path p(path);
        Result<AvatarDefinition> d =
            load_avatar_definition(p.has_parent_path() ? p.parent_path() : fs::path("."));
        if (!d) return d.error();
        const auto kinds = count_kinds(*d);
        const auto k = [&](const char* n) { return kinds.count(n) ? kinds.at(n) : 0; };
        std::string s = fmt::format(
            "{}: avatar definition v{}.{} (wearables v{}) | {} params ({} morph, {} skeleton, {} driver, {} color, "
            "{} alpha) | {} meshes | {} attachment points | {} ignored elements\n",
            path, d->version_major, d->version_minor, d->wearable_definition_version, d->params.size(), k("morph"),
            k("skeleton"), k("driver"), k("color"), k("alpha"), d->meshes.size(), d->attachment_points.size(),
            d->ignored.size());
        if (verbose) {
            for (const MeshDef& m : d->meshes)
                s += fmt::format("  mesh {} lod {} {}{}\n", m.type, m.lod, m.file_name,
                                 m.reference.empty() ? "" : " (LOD of " + m.reference + ")");
            for (const std::string& n : d->ignored) s += "  " + n + "\n";
        }
        return s;
    }
    case AppearanceFile::None: break;
    }
    return Error{path + ": not an appearance file (.llm, .dat or avatar_lad.xml)"};
}

Result<nlohmann::ordered_json> describe_appearance_json(const std::string& path, bool verbose) {
    nlohmann::ordered_json j;
    j["file"] = path;
    switch (appearance_file_kind(path)) {
    case AppearanceFile::Mesh: {
        Result<LoadedMesh> l = load_mesh(path);
        if (!l) return l.error();
        const LlmMesh& m = l->mesh;
        j["type"] = "llm";
        j["layout"] = m.kind == LlmFileKind::Base ? "base" : "lod";
        j["layout_from"] = l->layout_source;
        j["vertices"] = m.num_vertices();
        j["faces"] = m.faces.size();
        j["has_weights"] = m.has_weights;
        j["skin_joints"] = m.skin_joints;
        j["morphs"] = m.morphs.size();
        j["remaps"] = m.remaps.size();
        j["trailing_bytes"] = m.trailing.size();
        if (verbose) {
            nlohmann::ordered_json morphs = nlohmann::ordered_json::array();
            for (const LlmMorph& morph : m.morphs)
                morphs.push_back({{"name", morph.name}, {"vertices", morph.vertices.size()}});
            j["morph_list"] = morphs;
        }
        return j;
    }
    case AppearanceFile::Wearable: {
        Result<Wearable> w = load_wearable(path);
        if (!w) return w.error();
        j["type"] = "wearable";
        j["version"] = w->version;
        j["wearable_type"] = wearable_type_name(w->type);
        j["name"] = w->name;
        j["description"] = w->description;
        j["params"] = w->params.size();
        j["textures"] = w->textures.size();
        if (verbose) {
            nlohmann::ordered_json params = nlohmann::ordered_json::array();
            for (const auto& [id, weight] : w->params) params.push_back({id, weight});
            j["param_list"] = params;
            nlohmann::ordered_json tex = nlohmann::ordered_json::array();
            for (const auto& [te, uuid] : w->textures) tex.push_back({te, uuid});
            j["texture_list"] = tex;
        }
        return j;
    }
    case AppearanceFile::AvatarDefinition: {
        const fs::path p(path);
        Result<AvatarDefinition> d =
            load_avatar_definition(p.has_parent_path() ? p.parent_path() : fs::path("."));
        if (!d) return d.error();
        j["type"] = "avatar_definition";
        j["version"] = fmt::format("{}.{}", d->version_major, d->version_minor);
        j["wearable_definition_version"] = d->wearable_definition_version;
        j["params"] = d->params.size();
        for (const auto& [kind, n] : count_kinds(*d)) j["params_by_kind"][kind] = n;
        j["meshes"] = d->meshes.size();
        j["attachment_points"] = d->attachment_points.size();
        j["ignored"] = d->ignored;
        return j;
    }
    case AppearanceFile::None: break;
    }
    return Error{path + ": not an appearance file (.llm, .dat or avatar_lad.xml)"};
}

}  // namespace slanim::cli
