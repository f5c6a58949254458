// SPDX-License-Identifier: MIT
// The `slanim` command line: registers every subcommand (one file each, <command>_command.hpp) and runs
// the one selected.
#include "commands.hpp"

#include <CLI/CLI.hpp>

#include <exception>
#include <ostream>
#include <sstream>
#include <vector>

#include "command.hpp"
#include "convert_command.hpp"
#include "crowd_command.hpp"
#include "edit_command.hpp"
#include "render_command.hpp"
#include "ik_command.hpp"
#include "info_command.hpp"
#include "play_command.hpp"
#include "relay_command.hpp"
#include "relay_load_command.hpp"
#include "serve_command.hpp"
#include "view_command.hpp"
#include "validate_command.hpp"

namespace slanim::cli {

int run_cli(int argc, char** argv, std::ostream& out, std::ostream& err) {
    CLI::App app{"slanim: play, inspect, validate, convert Second Life animations (.anim) and solve their constraints"};
    app.set_version_flag("--version", "slanim 0.1.0");
    app.require_subcommand(1);
    // In the order `slanim --help` lists them.
    const std::vector<Subcommand> commands = {
        make_subcommand(app, add_info_subcommand, cmd_info),
        make_subcommand(app, add_validate_subcommand, cmd_validate),
        make_subcommand(app, add_convert_subcommand, cmd_convert),
        make_subcommand(app, add_play_subcommand, cmd_play),
        make_subcommand(app, add_ik_subcommand, cmd_ik),
        make_subcommand(app, add_edit_subcommand, cmd_edit),
        make_subcommand(app, add_view_subcommand, cmd_view),
        make_subcommand(app, add_render_subcommand, cmd_render),
        make_subcommand(app, add_relay_subcommand, cmd_relay),
        make_subcommand(app, add_relay_load_subcommand, cmd_relay_load),
        make_subcommand(app, add_crowd_subcommand, cmd_crowd),
        make_subcommand(app, add_serve_subcommand, cmd_serve),
    };
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        std::ostringstream o, er;
        const int code = app.exit(e, o, er);
        out << o.str();
        err << er.str();
        return code == 0 ? 0 : 2;
    }
    try {
        for (const Subcommand& c : commands)
            if (*c.app) return c.run(out, err);
    } catch (const std::exception& e) {
        err << "slanim: " << e.what() << "\n";
        return 1;
    }
    return 2;
}

}  // namespace slanim::cli
