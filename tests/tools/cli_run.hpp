// SPDX-License-Identifier: MIT
// Runs the slanim command line in-process for the CLI tests.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"

namespace slanim::test {

struct CliRun {
    int code = 0;
    std::string out, err;
};

/// `slanim ARGS...`: exit status, standard output and standard error.
inline CliRun run_slanim(std::vector<std::string> args) {
    args.insert(args.begin(), "slanim");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    std::ostringstream out, err;
    CliRun r;
    r.code = cli::run_cli(static_cast<int>(argv.size()), argv.data(), out, err);
    r.out = out.str();
    r.err = err.str();
    return r;
}

}  // namespace slanim::test
