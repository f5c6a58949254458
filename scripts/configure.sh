#!/usr/bin/env bash
# Configures a build folder the one way every script and the README use: Ninja, warnings as
# errors, plus the given CMake options. Configuring build/ again with the same options changes
# nothing, so README command 1 (which builds only `slanim`), scripts/test.sh and
# scripts/bench_crowd.sh share its objects. The compiler runs through ccache when it is
# installed (top-level CMakeLists.txt; -DSLANIM_CCACHE=OFF turns that off).
# Usage: scripts/configure.sh [BUILD_DIR [CMAKE_OPTION...]]   (default build/)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
shift $(( $# > 0 ? 1 : 0 ))
cmake -S . -B "$BUILD" -G Ninja -DSLANIM_WARNINGS_AS_ERRORS=ON "$@"
