#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs the .anim, BVH, .llm and wearable/avatar_lad
# reader fuzzers, then the LLSD and puppetry block ones, in turn, splitting N seconds (default
# 60) between them (1/4 each, 1/12 for LLSD, puppetry, BVJ and the relay, the .anim one gets the remainder).
# Each is seeded from ../shared when present (copied to a temporary folder), the others also
# with their synthetic seeds (-write_seeds).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN="${1:-60}"
BVH_SECONDS=$((SECONDS_TO_RUN / 4))
LLM_SECONDS=$((SECONDS_TO_RUN / 4))
WEARABLE_SECONDS=$((SECONDS_TO_RUN / 4))
LLSD_SECONDS=$((SECONDS_TO_RUN / 12))
PUPPETRY_SECONDS=$((SECONDS_TO_RUN / 12))
BVJ_SECONDS=$((SECONDS_TO_RUN / 12))
RELAY_SECONDS=$((SECONDS_TO_RUN / 12))
ANIM_SECONDS=$((SECONDS_TO_RUN - BVH_SECONDS - LLM_SECONDS - WEARABLE_SECONDS - LLSD_SECONDS - PUPPETRY_SECONDS - BVJ_SECONDS - RELAY_SECONDS))
if [ "$BVH_SECONDS" -lt 1 ]; then BVH_SECONDS=1; fi
if [ "$ANIM_SECONDS" -lt 1 ]; then ANIM_SECONDS=1; fi
if [ "$LLM_SECONDS" -lt 1 ]; then LLM_SECONDS=1; fi
if [ "$WEARABLE_SECONDS" -lt 1 ]; then WEARABLE_SECONDS=1; fi
if [ "$BVJ_SECONDS" -lt 1 ]; then BVJ_SECONDS=1; fi
if [ "$LLSD_SECONDS" -lt 1 ]; then LLSD_SECONDS=1; fi
if [ "$PUPPETRY_SECONDS" -lt 1 ]; then PUPPETRY_SECONDS=1; fi
if [ "$RELAY_SECONDS" -lt 1 ]; then RELAY_SECONDS=1; fi
if ! command -v clang++ >/dev/null; then echo "fuzz: clang++ not found, skipped"; exit 0; fi
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSLANIM_BUILD_FUZZERS=ON -DSLANIM_BUILD_TESTS=OFF -DSLANIM_BUILD_BENCHMARKS=OFF \
  -DSLANIM_BUILD_TOOLS=OFF
cmake --build build-fuzz --parallel 2 --target slanim_fuzz_anim slanim_fuzz_bvh slanim_fuzz_llm slanim_fuzz_wearable slanim_fuzz_bvj \
  slanim_fuzz_llsd slanim_fuzz_puppetry slanim_fuzz_relay
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
mkdir -p "$corpus/anim" "$corpus/bvh" "$corpus/bvh-seeds" "$corpus/llm" "$corpus/llm-seeds" \
  "$corpus/wearable" "$corpus/wearable-seeds" "$corpus/llsd" "$corpus/llsd-seeds" \
  "$corpus/puppetry" "$corpus/puppetry-seeds"

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

echo "== fuzzing the .llm reader for ${LLM_SECONDS} s"
if [ -d ../shared/sl-character ]; then cp ../shared/sl-character/*.llm "$corpus/llm/"; fi
./build-fuzz/fuzz/slanim_fuzz_llm -write_seeds="$corpus/llm-seeds"
./build-fuzz/fuzz/slanim_fuzz_llm -max_total_time="$LLM_SECONDS" -rss_limit_mb=2048 \
  -print_final_stats=1 "$corpus/llm" "$corpus/llm-seeds"

echo "== fuzzing the wearable and avatar_lad.xml readers for ${WEARABLE_SECONDS} s"
if [ -d ../shared/wearables ]; then cp ../shared/wearables/*.dat "$corpus/wearable/"; fi
if [ -f ../shared/sl-character/avatar_lad.xml ]; then cp ../shared/sl-character/avatar_lad.xml "$corpus/wearable/"; fi
./build-fuzz/fuzz/slanim_fuzz_wearable -write_seeds="$corpus/wearable-seeds"
./build-fuzz/fuzz/slanim_fuzz_wearable -max_total_time="$WEARABLE_SECONDS" -rss_limit_mb=2048 \
  -print_final_stats=1 "$corpus/wearable" "$corpus/wearable-seeds"

echo "== fuzzing the LLSD notation and XML readers for ${LLSD_SECONDS} s"
if [ -d ../shared/poses ]; then cp ../shared/poses/*.xml "$corpus/llsd/"; fi
./build-fuzz/fuzz/slanim_fuzz_llsd -write_seeds="$corpus/llsd-seeds"
./build-fuzz/fuzz/slanim_fuzz_llsd -max_total_time="$LLSD_SECONDS" -rss_limit_mb=2048 \
  -print_final_stats=1 "$corpus/llsd" "$corpus/llsd-seeds"

echo "== fuzzing the puppetry event block codec for ${PUPPETRY_SECONDS} s"
./build-fuzz/fuzz/slanim_fuzz_puppetry -write_seeds="$corpus/puppetry-seeds"
./build-fuzz/fuzz/slanim_fuzz_puppetry -max_total_time="$PUPPETRY_SECONDS" -rss_limit_mb=2048 \
  -print_final_stats=1 "$corpus/puppetry" "$corpus/puppetry-seeds"

echo "== fuzzing the BVJ reader and converters for ${BVJ_SECONDS} s"
mkdir -p "$corpus/bvj" "$corpus/bvj-seeds"
./build-fuzz/fuzz/slanim_fuzz_bvj -write_seeds="$corpus/bvj-seeds"
./build-fuzz/fuzz/slanim_fuzz_bvj -max_total_time="$BVJ_SECONDS" -rss_limit_mb=2048 \
  -print_final_stats=1 "$corpus/bvj" "$corpus/bvj-seeds"

echo "== fuzzing the puppetry relay (datagrams, capability requests, ticks) for ${RELAY_SECONDS} s"
mkdir -p "$corpus/relay" "$corpus/relay-seeds"
./build-fuzz/fuzz/slanim_fuzz_relay -write_seeds="$corpus/relay-seeds"
./build-fuzz/fuzz/slanim_fuzz_relay -max_total_time="$RELAY_SECONDS" -rss_limit_mb=2048 \
  -print_final_stats=1 "$corpus/relay" "$corpus/relay-seeds"
