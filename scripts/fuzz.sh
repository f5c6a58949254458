#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs the .anim reader fuzzer, then the BVH reader
# fuzzer, splitting N seconds (default 60) between them (the .anim one gets the odd second).
# Each is seeded from ../shared when present (copied to a temporary folder), the BVH one also
# with its synthetic seeds (slanim_fuzz_bvh -write_seeds).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN="${1:-60}"
BVH_SECONDS=$((SECONDS_TO_RUN / 2))
ANIM_SECONDS=$((SECONDS_TO_RUN - BVH_SECONDS))
if [ "$BVH_SECONDS" -lt 1 ]; then BVH_SECONDS=1; fi
if [ "$ANIM_SECONDS" -lt 1 ]; then ANIM_SECONDS=1; fi
if ! command -v clang++ >/dev/null; then echo "fuzz: clang++ not found, skipped"; exit 0; fi
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSLANIM_BUILD_FUZZERS=ON -DSLANIM_BUILD_TESTS=OFF -DSLANIM_BUILD_BENCHMARKS=OFF \
  -DSLANIM_BUILD_TOOLS=OFF
cmake --build build-fuzz --parallel 2 --target slanim_fuzz_anim slanim_fuzz_bvh
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
mkdir -p "$corpus/anim" "$corpus/bvh" "$corpus/bvh-seeds"

echo "== fuzzing the .anim reader for ${ANIM_SECONDS} s"
if [ -d ../shared/anims ]; then find ../shared/anims -name '*.anim' -exec cp {} "$corpus/anim/" \; ; fi
./build-fuzz/fuzz/slanim_fuzz_anim -max_total_time="$ANIM_SECONDS" -rss_limit_mb=2048 \
  -print_final_stats=1 "$corpus/anim"

echo "== fuzzing the BVH reader for ${BVH_SECONDS} s"
# Several folders hold files of the same name: the copies are named after their path.
if [ -d ../shared/bvh ]; then
  find ../shared/bvh -type f -iname '*.bvh' -print0 |
    while IFS= read -r -d '' f; do
      rel="${f#../shared/bvh/}"
      cp "$f" "$corpus/bvh/${rel//\//_}"
    done
fi
./build-fuzz/fuzz/slanim_fuzz_bvh -write_seeds="$corpus/bvh-seeds"
./build-fuzz/fuzz/slanim_fuzz_bvh -max_total_time="$BVH_SECONDS" -rss_limit_mb=2048 \
  -print_final_stats=1 "$corpus/bvh" "$corpus/bvh-seeds"
