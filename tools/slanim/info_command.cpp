// SPDX-License-Identifier: MIT
// `slanim info`. See info_command.hpp.
#include "info_command.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <ostream>

#include "describe.hpp"
#include "describe_appearance.hpp"
#include "gltf_import.hpp"
#include "loading.hpp"
#include "mesh_export.hpp"

namespace slanim::cli {

CLI::App* add_info_subcommand(CLI::App& app, InfoOptions& o) {
    auto* info = app.add_subcommand("info", "One dense line per file (like animDump)");
    info->add_option("FILE", o.files, "Animation files (.anim); also .glb/.gltf animations, .llm meshes, .dat wearables, avatar_lad.xml")->required();
    info->add_flag("-v,--verbose", o.verbose, "Add a per-joint table (json: all keys)");
    info->add_option("--format", o.format, "text, json or md")->check(CLI::IsMember({"text", "json", "md"}));
    info->add_option("--character", o.character, "Viewer character folder (default: embedded skeleton)");
    return info;
}

namespace {

/// An appearance file (.llm, .dat, avatar_lad.xml): appended to `all` (json) or written.
bool describe_appearance_file(std::ostream& out, std::ostream& err, const std::string& f, const InfoOptions& o,
                              nlohmann::ordered_json& all) {
    if (o.format == "json") {
        auto j = describe_appearance_json(f, o.verbose);
        if (j) all.push_back(std::move(*j));
        else err << "slanim info: " << j.error().describe() << "\n";
        return j.ok();
    }
    auto t = describe_appearance_text(f, o.verbose);
    if (t) out << *t;
    else err << "slanim info: " << t.error().describe() << "\n";
    return t.ok();
}

/// A motion file: appended to `all` (json) or written as text or Markdown.
bool describe_motion_file(std::ostream& out, std::ostream& err, const std::string& f, const InfoOptions& o,
                          const Skeleton& skel, nlohmann::ordered_json& all) {
    auto l = load(f, skel);
    if (!l) {
        err << "slanim info: " << l.error().message << "\n";
        return false;
    }
    if (o.format == "json") {
        all.push_back(info_json(f, l->raw, l->motion, o.verbose));
    } else if (o.format == "md") {
        out << "### " << f << "\n\n" << info_line(f, l->raw, l->motion) << "\n\n";
        if (o.verbose) out << joint_table(l->motion, true) << "\n";
    } else {
        out << info_line(f, l->raw, l->motion) << "\n";
        if (o.verbose) out << joint_table(l->motion, false);
    }
    return true;
}

}  // namespace

int cmd_info(std::ostream& out, std::ostream& err, const InfoOptions& o) {
    auto skel = pick_skeleton(o.character);
    if (!skel) {
        err << "slanim info: " << skel.error().describe() << "\n";
        return 1;
    }
    int status = 0;
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const auto& f : o.files) {
        if (const auto mf = mesh_format_for_path(f); mf && *mf != MeshFormat::Obj) {
            if (o.format != "text") {
                err << "slanim info: " << f << ": glTF files have a text description only (--format text)\n";
                status = 1;
                continue;
            }
            status = info_gltf(out, err, f, **skel) != 0 ? 1 : status;
            continue;
        }
        const bool ok = appearance_file_kind(f) != AppearanceFile::None  // .llm, .dat, avatar_lad.xml
                            ? describe_appearance_file(out, err, f, o, all)
                            : describe_motion_file(out, err, f, o, **skel, all);
        status = ok ? status : 1;
    }
    if (o.format == "json") out << all.dump(2) << "\n";
    return status;
}

}  // namespace slanim::cli
