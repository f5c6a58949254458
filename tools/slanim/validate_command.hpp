// SPDX-License-Identifier: MIT
// `slanim validate`: the viewer's load rules (or, with --upload, the upload rules) on each file;
// one `FILE: valid|invalid (E error(s), W warning(s))` line each, then its diagnostics.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace slanim::cli {

struct ValidateOptions {
    std::vector<std::string> files;
    bool upload = false;    ///< the upload rules: unknown joints are errors
    bool quiet = false;     ///< errors only
    std::string character;  ///< viewer character folder (default: embedded skeleton)
};

/// Registers the `validate` subcommand on `app`, filling `o`.
CLI::App* add_validate_subcommand(CLI::App& app, ValidateOptions& o);

/// Runs it. Exit status: 0 every file valid, 1 some file invalid or unreadable, 2 usage error
/// (including a character folder that does not load).
int cmd_validate(std::ostream& out, std::ostream& err, const ValidateOptions& o);

}  // namespace slanim::cli
