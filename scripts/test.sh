#!/usr/bin/env bash
# Builds slanim with warnings as errors and runs the test suite.
# Usage: scripts/test.sh [--sanitize | --tsan]
#   (none):     build/, configured by scripts/configure.sh as README command 1 configures it, so
#               the objects that command built are reused; every target, every test
#   --sanitize: ASan + UBSan build in build-asan/, every test
#   --tsan:     ThreadSanitizer build in build-tsan/, the threaded code's tests: the runtime suite
#               (the world runs on two threads by default), `slanim crowd` and the C API
#               (worlds on several threads sharing a skeleton)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build
EXTRA=()
TARGETS=()
FILTER=()
if [ "${1:-}" = "--tsan" ]; then
  BUILD=build-tsan
  EXTRA=(-DSLANIM_TSAN=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLANIM_BUILD_BENCHMARKS=OFF)
  TARGETS=(--target slanim_runtime_tests slanim_cli_tests slanim slanim_capi_tests slanim_capi_c_test)
  FILTER=(-R '^(World|Crowd|Lod|Controller|LocalToModel|Appearance|EmoteMotion|HandMotion|PuppetryStream|RealPlay|CrowdCli|CustomMotion|Procedural|CApi|capi)[.]')
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/scripts/tsan.supp"
elif [ "${1:-}" = "--sanitize" ]; then
  BUILD=build-asan
  EXTRA=(-DSLANIM_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLANIM_BUILD_BENCHMARKS=OFF)
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
scripts/configure.sh "$BUILD" "${EXTRA[@]}"
cmake --build "$BUILD" --parallel 2 "${TARGETS[@]}"
ctest --test-dir "$BUILD" --output-on-failure --parallel 2 "${FILTER[@]}"
