// SPDX-License-Identifier: MIT
#include <iostream>

#include "commands.hpp"

int main(int argc, char** argv) {
    std::ios::sync_with_stdio(false);
    return slanim::cli::run_cli(argc, argv, std::cout, std::cerr);
}
