#!/usr/bin/env bash
# Builds slanim with warnings as errors and runs the test suite.
# Usage: scripts/test.sh [--sanitize]   (--sanitize: ASan + UBSan build in build-asan/)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build
EXTRA=()
if [ "${1:-}" = "--sanitize" ]; then
  BUILD=build-asan
  EXTRA=(-DSLANIM_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLANIM_BUILD_BENCHMARKS=OFF)
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
cmake -S . -B "$BUILD" -G Ninja -DSLANIM_WARNINGS_AS_ERRORS=ON "${EXTRA[@]}"
cmake --build "$BUILD" --parallel 2
ctest --test-dir "$BUILD" --output-on-failure --parallel 2
