// SPDX-License-Identifier: MIT
// `slanim ik`: plays motions with their constraints solved by one or all solvers and reports,
// per frame and constraint, the target distance before and after solving, iterations and solve
// time; or solves a synthetic chain (`--chain N --target x,y,z`).
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace slanim::cli {

struct IkOptions {
    std::vector<std::string> files;
    std::string character;
    std::string solver = "ccd";  ///< ccd, fabrik, viewer or all
    double fps = 30.0;
    std::optional<double> duration;
    std::string format = "text";  ///< text, json or csv
    std::string output;           ///< empty: standard output
    std::string plot;             ///< PNG chart of the residual per solver
    // Synthetic mode.
    int chain = 0;                ///< > 0: solve a straight synthetic chain of this length
    std::string target;           ///< "x,y,z" metres (synthetic mode)
    std::string plane;            ///< "nx,ny,nz": the target is the plane through `target`
    double bone_length = 0.2;     ///< metres per synthetic bone
    int max_iterations = 128;
    double tolerance_mm = 0.5;
};

/// Registers the `ik` subcommand on `app`, filling `o`.
CLI::App* add_ik_subcommand(CLI::App& app, IkOptions& o);

/// Runs it. Exit status: 0 success, 1 failure (bad file, unwritable output), 2 usage error.
int cmd_ik(std::ostream& out, std::ostream& err, const IkOptions& o);

}  // namespace slanim::cli
