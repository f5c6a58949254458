#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-fuzz/) and runs them.
#
#   scripts/fuzz.sh [N]                        CI's short run: every target in turn for an equal
#                                              share of N seconds (default 270, at least 5 s each)
#   scripts/fuzz.sh --minutes M [TARGET...]    the campaign: each target (default: all) for M
#                                              minutes (default 10), then its new coverage is
#                                              merged into fuzz/corpus/TARGET/ and a table printed
#
# Every run starts from a scratch corpus seeded with the real files of ../shared when present
# (copied, never written back), the committed corpus fuzz/corpus/TARGET/ and the target's own
# synthetic seeds (-write_seeds, see fuzz/fuzz_seeds.hpp). The campaign's merge keeps only inputs
# that add coverage over all of those, and never an input that holds a 64-byte run of a
# ../shared file (third-party data stays out of the project); fuzz/corpus stays under 2.75 MiB
# (256 KiB per target).
# Crashes are written to build-fuzz/artifacts/ and make the script exit 1.
set -euo pipefail
cd "$(dirname "$0")/.."
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
  "relay_bus|relay federation (grid files, bus messages)|"
  "leap|the LEAP reader (framing, the viewer's pumps, joint data)|"
  "gltf|the glTF animation importer|"
)
CORPUS_LIMIT=$((256 * 1024))  # per target; 11 targets: 2.75 MiB in all

usage() { echo "usage: scripts/fuzz.sh [SECONDS] | --minutes M [TARGET...]" >&2; exit 2; }
mode=share
SECONDS_TO_RUN=270
MINUTES=10
selected=()
if [ "${1:-}" = "--minutes" ]; then
  mode=campaign
  [ $# -ge 2 ] || usage
  MINUTES="$2"
  shift 2
  selected=("$@")
  [[ "$MINUTES" =~ ^[0-9]+$ ]] && [ "$MINUTES" -ge 1 ] || usage
elif [ $# -ge 1 ]; then
  [[ "$1" =~ ^[0-9]+$ ]] || usage
  SECONDS_TO_RUN="$1"
fi

runs=()
for f in "${FUZZERS[@]}"; do
  name="${f%%|*}"
  if [ ${#selected[@]} -eq 0 ]; then runs+=("$f"); continue; fi
  for s in "${selected[@]}"; do [ "$s" = "$name" ] && runs+=("$f"); done
done
for s in "${selected[@]}"; do
  found=0
  for f in "${FUZZERS[@]}"; do [ "${f%%|*}" = "$s" ] && found=1; done
  [ $found -eq 1 ] || { echo "fuzz: unknown target '$s'" >&2; usage; }
done

targets=()
for f in "${runs[@]}"; do targets+=("slanim_fuzz_${f%%|*}"); done
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSLANIM_BUILD_FUZZERS=ON -DSLANIM_BUILD_TESTS=OFF -DSLANIM_BUILD_BENCHMARKS=OFF \
  -DSLANIM_BUILD_TOOLS=OFF >/dev/null
cmake --build build-fuzz --parallel 2 --target "${targets[@]}"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p build-fuzz/artifacts

# seed NAME SEEDS: the scratch corpus folders of one target.
seed() {
  local name="$1" seeds="$2"
  mkdir -p "$scratch/$name/work" "$scratch/$name/shared" "$scratch/$name/seeds"
  if [ -n "$seeds" ] && [ -d "../shared/${seeds%% *}" ]; then
    local expr
    read -r -a expr <<<"${seeds#* }"
    # Several folders hold files of the same name: the copies are named after their path.
    find "../shared/${seeds%% *}" -type f \( "${expr[@]}" \) -print0 |
      while IFS= read -r -d '' file; do
        rel="${file#../shared/}"
        cp "$file" "$scratch/$name/shared/${rel//\//_}"
      done
  fi
  "./build-fuzz/fuzz/slanim_fuzz_$name" -write_seeds="$scratch/$name/seeds" >/dev/null
  if [ -d "fuzz/corpus/$name" ]; then cp -r "fuzz/corpus/$name/." "$scratch/$name/work/"; fi
}

if [ "$mode" = share ]; then
  share=$((SECONDS_TO_RUN / ${#runs[@]}))
  if [ "$share" -lt 5 ]; then share=5; fi
  for f in "${runs[@]}"; do
    IFS='|' read -r name what seeds <<<"$f"
    seed "$name" "$seeds"
    echo "== fuzzing $what for ${share} s"
    "./build-fuzz/fuzz/slanim_fuzz_$name" -max_total_time="$share" -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="build-fuzz/artifacts/$name-" \
      "$scratch/$name/work" "$scratch/$name/shared" "$scratch/$name/seeds"
  done
  exit 0
fi

# ---- the campaign -------------------------------------------------------------------------
table=()
failed=0
for f in "${runs[@]}"; do
  IFS='|' read -r name what seeds <<<"$f"
  seed "$name" "$seeds"
  log="build-fuzz/campaign-$name.log"
  before=$(find "build-fuzz/artifacts" -name "$name-*" | wc -l)
  echo "== fuzzing $what for $MINUTES min (log: $log)"
  set +e
  "./build-fuzz/fuzz/slanim_fuzz_$name" -max_total_time=$((MINUTES * 60)) -rss_limit_mb=2048 \
    -timeout=10 -print_final_stats=1 -artifact_prefix="build-fuzz/artifacts/$name-" \
    "$scratch/$name/work" "$scratch/$name/shared" "$scratch/$name/seeds" >"$log" 2>&1
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
  features=$(grep -oE '(DONE|pulse|NEW|REDUCE) +cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 |
             grep -oE 'ft: [0-9]+' | grep -oE '[0-9]+' || true)
  crashes=$(( $(find "build-fuzz/artifacts" -name "$name-*" | wc -l) - before ))
  [ "$crashes" -eq 0 ] || failed=1

  # Merge: inputs that add coverage over the shared files, the seeds and the committed corpus.
  base="$scratch/$name/base"
  mkdir -p "$base" "fuzz/corpus/$name"
  cp -r "$scratch/$name/shared/." "$scratch/$name/seeds/." "fuzz/corpus/$name/." "$base/"
  ls "$base" | sort >"$scratch/$name/base.list"
  "./build-fuzz/fuzz/slanim_fuzz_$name" -merge=1 -rss_limit_mb=2048 -timeout=10 \
    "$base" "$scratch/$name/work" >>"$log" 2>&1 || true
  ls "$base" | sort | comm -13 "$scratch/$name/base.list" - >"$scratch/$name/new.list"
  added=$(python3 scripts/fuzz_corpus_keep.py "$scratch/$name/shared" "fuzz/corpus/$name" \
          "$CORPUS_LIMIT" "$base" <"$scratch/$name/new.list")
  table+=("$name|${execs:-?}|${features:-?}|$added|$crashes")
  echo "   $name: executions ${execs:-?}, features ${features:-?}, new corpus entries $added, crashes $crashes"
done

echo
echo "| target | minutes | executions | coverage (features) | new corpus entries | crashes |"
echo "|---|---|---|---|---|---|"
for row in "${table[@]}"; do
  IFS='|' read -r name execs features added crashes <<<"$row"
  echo "| $name | $MINUTES | $execs | $features | $added | $crashes |"
done
echo "fuzz/corpus: $(du -sb fuzz/corpus | cut -f1) bytes in $(find fuzz/corpus -type f | wc -l) files"
if [ $failed -ne 0 ]; then
  echo "fuzz: crashes found; inputs in build-fuzz/artifacts/ (reproduce: build-fuzz/fuzz/slanim_fuzz_NAME FILE)"
  exit 1
fi
