// SPDX-License-Identifier: MIT
// `slanim validate`. See validate_command.hpp.
#include "validate_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <ostream>

#include "loading.hpp"
#include "slanim/formats/anim.hpp"
#include "slanim/formats/io.hpp"

namespace slanim::cli {

CLI::App* add_validate_subcommand(CLI::App& app, ValidateOptions& o) {
    auto* validate = app.add_subcommand("validate", "Errors and warnings per file; exit 1 if any is invalid");
    validate->add_option("FILE", o.files, "Animation files (.anim)")->required();
    validate->add_flag("--upload", o.upload, "Apply the upload rules (unknown joints are errors)");
    validate->add_flag("-q,--quiet", o.quiet, "Errors only");
    validate->add_option("--character", o.character, "Viewer character folder");
    return validate;
}

int cmd_validate(std::ostream& out, std::ostream& err, const ValidateOptions& o) {
    auto skel = pick_skeleton(o.character);
    if (!skel) {
        err << "slanim validate: " << skel.error().describe() << "\n";
        return 2;
    }
    int invalid = 0;
    for (const auto& f : o.files) {
        auto bytes = read_file_bytes(f);
        if (!bytes) {
            out << f << ": invalid\n  error: [io] " << bytes.error().message << "\n";
            ++invalid;
            continue;
        }
        ParseOptions opt;
        opt.skeleton = skel->get();
        opt.allow_invalid_joints = !o.upload;
        opt.asset_id = std::filesystem::path(f).stem().string();
        if (!is_uuid_string(opt.asset_id)) opt.asset_id.clear();
        const ParseResult pr = parse_anim(*bytes, opt);
        const bool ok = pr.ok();
        invalid += !ok;
        out << fmt::format("{}: {} ({} error(s), {} warning(s))\n", f, ok ? "valid" : "invalid",
                           pr.count(Severity::Error), pr.count(Severity::Warning));
        for (const auto& d : pr.diagnostics) {
            if (o.quiet && d.severity == Severity::Warning) continue;
            out << "  " << d.describe() << "\n";
        }
    }
    return invalid ? 1 : 0;
}

}  // namespace slanim::cli
