#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-fuzz/) and runs each in turn for an equal share
# of N seconds (default 270, at least 5 s each). Each starts from a scratch corpus seeded with
# the real files of ../shared when present (copied, never written back) and with its own
# synthetic seeds (-write_seeds, see fuzz/fuzz_seeds.hpp).
# Usage: scripts/fuzz.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN="${1:-270}"
if ! command -v clang++ >/dev/null; then echo "fuzz: clang++ not found, skipped"; exit 0; fi

# name | what | shared files to seed from (find expressions under ../shared)
FUZZERS=(
  "anim|the .anim reader/writer|anims -name *.anim"
  "bvh|the BVH reader/writer|bvh -iname *.bvh"
  "bvj|the BVJ reader and converters|"
  "llm|the .llm mesh reader/writer|sl-character -name *.llm"
  "wearable|the wearable and avatar_lad.xml readers|. -path *wearables/*.dat -o -name avatar_lad.xml"
  "llsd|the LLSD notation and XML readers|poses -name *.xml"
  "puppetry|the puppetry event block codec|"
  "relay|the puppetry relay (datagrams, capability requests, ticks)|"
)
share=$((SECONDS_TO_RUN / ${#FUZZERS[@]}))
if [ "$share" -lt 5 ]; then share=5; fi

targets=()
for f in "${FUZZERS[@]}"; do targets+=("slanim_fuzz_${f%%|*}"); done
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSLANIM_BUILD_FUZZERS=ON -DSLANIM_BUILD_TESTS=OFF -DSLANIM_BUILD_BENCHMARKS=OFF \
  -DSLANIM_BUILD_TOOLS=OFF
cmake --build build-fuzz --parallel 2 --target "${targets[@]}"

corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
for f in "${FUZZERS[@]}"; do
  IFS='|' read -r name what seeds <<<"$f"
  mkdir -p "$corpus/$name" "$corpus/$name-seeds"
  if [ -n "$seeds" ] && [ -d "../shared/${seeds%% *}" ]; then
    read -r -a expr <<<"${seeds#* }"
    # Several folders hold files of the same name: the copies are named after their path.
    find "../shared/${seeds%% *}" -type f \( "${expr[@]}" \) -print0 |
      while IFS= read -r -d '' file; do
        rel="${file#../shared/}"
        cp "$file" "$corpus/$name/${rel//\//_}"
      done
  fi
  echo "== fuzzing $what for ${share} s"
  "./build-fuzz/fuzz/slanim_fuzz_$name" -write_seeds="$corpus/$name-seeds"
  "./build-fuzz/fuzz/slanim_fuzz_$name" -max_total_time="$share" -rss_limit_mb=2048 \
    -print_final_stats=1 "$corpus/$name" "$corpus/$name-seeds"
done
