#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs the .anim reader fuzzer for N seconds
# (default 60), seeded from ../shared/anims when present (copied to a temporary folder).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN="${1:-60}"
if ! command -v clang++ >/dev/null; then echo "fuzz: clang++ not found, skipped"; exit 0; fi
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSLANIM_BUILD_FUZZERS=ON -DSLANIM_BUILD_TESTS=OFF -DSLANIM_BUILD_BENCHMARKS=OFF \
  -DSLANIM_BUILD_TOOLS=OFF
cmake --build build-fuzz --parallel 2 --target slanim_fuzz_anim
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
if [ -d ../shared/anims ]; then find ../shared/anims -name '*.anim' -exec cp {} "$corpus/" \; ; fi
./build-fuzz/fuzz/slanim_fuzz_anim -max_total_time="$SECONDS_TO_RUN" -rss_limit_mb=2048 \
  -print_final_stats=1 "$corpus"
