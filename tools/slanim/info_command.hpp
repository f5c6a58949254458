// SPDX-License-Identifier: MIT
// `slanim info`: one dense line per file (like animDump), or a per-joint table, JSON or
// Markdown; also glTF animations, .llm meshes, .dat wearables and avatar_lad.xml.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace slanim::cli {

struct InfoOptions {
    std::vector<std::string> files;
    bool verbose = false;          ///< add a per-joint table (json: all keys)
    std::string format = "text";   ///< text, json or md
    std::string character;         ///< viewer character folder (default: embedded skeleton)
};

/// Registers the `info` subcommand on `app`, filling `o`.
CLI::App* add_info_subcommand(CLI::App& app, InfoOptions& o);

/// Runs it. Exit status: 0 every file described, 1 some file failed (the others are still
/// described), 2 usage error.
int cmd_info(std::ostream& out, std::ostream& err, const InfoOptions& o);

}  // namespace slanim::cli
