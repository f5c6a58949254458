// SPDX-License-Identifier: MIT
// The shape every `slanim` subcommand shares: `add_X_subcommand(app, options)` registers it and
// its options (in <command>_command.hpp), `cmd_X(out, err, options)` runs it. run_cli (commands.cpp)
// keeps one Subcommand per command and runs the one the command line selected.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <iosfwd>
#include <memory>

namespace slanim::cli {

/// A registered subcommand and the call that runs it with the options it parsed.
struct Subcommand {
    CLI::App* app = nullptr;
    std::function<int(std::ostream& out, std::ostream& err)> run;
};

/// Registers a subcommand with `add` on options it owns (they outlive the parse) and binds
/// `cmd` to them.
template <class Options>
Subcommand make_subcommand(CLI::App& app, CLI::App* (*add)(CLI::App&, Options&),
                           int (*cmd)(std::ostream&, std::ostream&, const Options&)) {
    auto options = std::make_shared<Options>();
    CLI::App* sub = add(app, *options);
    return {sub, [options, cmd](std::ostream& out, std::ostream& err) { return cmd(out, err, *options); }};
}

}  // namespace slanim::cli
