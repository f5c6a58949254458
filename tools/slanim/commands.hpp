// SPDX-License-Identifier: MIT
#pragma once

#include <iosfwd>

namespace slanim::cli {

/// Runs the `slanim` command line. Exit status: 0 success, 1 failure (bad file, invalid
/// motion), 2 usage error. Output goes to `out`, diagnostics to `err`.
int run_cli(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace slanim::cli
