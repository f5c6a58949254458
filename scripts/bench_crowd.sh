#!/usr/bin/env bash
# The crowd benchmarks with the figures docs/runtime-threading.md reports, settled and churn
# crowds (BM_Crowd/.../churn:0 and churn:1): medians of repetitions, ratios within the same run
# (2 threads against 1, slanim against the viewer-style baseline), the load average before and
# after, once per instruction set.
#
#   [ISAS="avx512 avx2 sse2"] scripts/bench_crowd.sh [REPETITIONS [FILTER]]
#
# REPETITIONS defaults to 5, FILTER to every benchmark; builds build/ in Release first. ISAS
# lists the instruction sets to run the kernels on (each run sets SLANIM_ISA, see
# docs/runtime-threading.md "Instruction sets"; "default" runs without the override, the
# CPU's best); by default every one of avx512, avx2, sse2 the CPU has. Writes the raw JSON to
# build/bench_crowd.ISA.json and prints a Markdown section per instruction set, with the command
# that produced it.
set -euo pipefail
cd "$(dirname "$0")/.."
REPS="${1:-5}"
FILTER="${2:-.}"
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || { echo "usage: [ISAS=...] scripts/bench_crowd.sh [REPETITIONS [FILTER]]" >&2; exit 2; }
scripts/configure.sh build >/dev/null
cmake --build build --parallel 2 --target slanim_bench_crowd >/dev/null
if [[ -z "${ISAS:-}" ]]; then  # every instruction set the CPU has (the flags /proc/cpuinfo lists)
  ISAS=""
  grep -qw avx512f /proc/cpuinfo && grep -qw avx512bw /proc/cpuinfo && ISAS+="avx512 "
  grep -qw avx2 /proc/cpuinfo && ISAS+="avx2 "
  ISAS+="sse2"
fi
for isa in $ISAS; do
json="build/bench_crowd.$isa.json"
cmd=(build/benchmarks/slanim_bench_crowd --benchmark_filter="$FILTER" --benchmark_repetitions="$REPS"
     --benchmark_report_aggregates_only=true --benchmark_min_time=0.2 --benchmark_format=json --benchmark_out="$json")
before=$(cut -d' ' -f1-3 /proc/loadavg)
if [[ "$isa" == default ]]; then "${cmd[@]}" >/dev/null; else SLANIM_ISA="$isa" "${cmd[@]}" >/dev/null; fi
after=$(cut -d' ' -f1-3 /proc/loadavg)
echo "### Instruction set: $isa"
echo
echo "    $([[ "$isa" == default ]] || echo "SLANIM_ISA=$isa ")build/benchmarks/slanim_bench_crowd --benchmark_filter='$FILTER' --benchmark_repetitions=$REPS --benchmark_report_aggregates_only=true --benchmark_min_time=0.2"
echo
python3 - "$before" "$after" "$REPS" "$json" <<'PY'
import json, sys
before, after, reps, path = sys.argv[1:5]
data = json.load(open(path))
med = {}
for b in data["benchmarks"]:  # medians, or the single run when REPETITIONS is 1
    if b.get("aggregate_name") == "median" or (reps == "1" and b.get("run_type") == "iteration"):
        med[b["run_name"]] = b
def ms(name):
    b = med.get(name)
    if not b: return None
    t = b["real_time"]; unit = b["time_unit"]
    return t * {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[unit]
print(f"Medians of {reps} repetitions; load average before {before}, after {after}; "
      f"{data['context'].get('num_cpus')} CPUs at {data['context'].get('mhz_per_cpu')} MHz.\n")
print("Time: mean ms of Crowd::timed_step (the span `slanim crowd` times); p50: the median step, "
      "what `slanim crowd` prints. settled: every avatar plays the four motions; churn: one base motion "
      "per avatar and a gesture (emote, hand pose) every 3-5 s.\n")
print("| avatars | skinning | crowd | 1 thread ms/step | 2 threads ms/step | 2 threads p50 / p99 | 2 vs 1 | µs/avatar (1 thread) | KiB/avatar | viewer-style ms/step | viewer / slanim (1 thread) |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
skin_names = {0: "no", 1: "yes, one shape (shared bind poses)", 2: "yes, every avatar its own shape"}
f = lambda v, d=2: "–" if v is None else f"{v:.{d}f}"
for n in (100, 1000, 5000):
    for skin in (0, 1, 2):
        for churn in (0, 1):
            name = lambda t: f"BM_Crowd/avatars:{n}/threads:{t}/skin:{skin}/churn:{churn}/manual_time"
            one, two = ms(name(1)), ms(name(2))
            if one is None and two is None: continue
            kib = med.get(name(1), {}).get("KiB_per_avatar")
            p50 = med.get(name(2), {}).get("p50_ms")
            p99 = med.get(name(2), {}).get("p99_ms")
            viewer = ms(f"BM_CrowdViewer/avatars:{n}/real_time") if skin == 0 and churn == 0 else None
            print(f"| {n} | {skin_names[skin]} | {'churn' if churn else 'settled'} | {f(one)} | {f(two)} | "
                  f"{f(p50)} / {f(p99)} | {f(one / two if one and two else None)}× | "
                  f"{f(one * 1000 / n if one else None, 1)} | {f(kib, 1)} | {f(viewer)} | "
                  f"{f(viewer / one if viewer and one else None, 1)}{'×' if viewer and one else ''} |")
print()
for churn in (0, 1):
    for t, skin in ((1, 0), (2, 0), (1, 1), (2, 1), (1, 2), (2, 2)):
        b = med.get(f"BM_CrowdPhases/avatars:1000/threads:{t}/skin:{skin}/churn:{churn}/real_time")
        if not b: continue
        skip = {"name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions", "repetition_index",
                "threads", "aggregate_name", "aggregate_unit", "iterations", "real_time", "cpu_time", "time_unit", "label"}
        parts = [f"{k} {v:.0f}" for k, v in b.items() if k not in skip and isinstance(v, (int, float))]
        print(f"Per system, 1000 avatars, {'churn' if churn else 'settled'}, {t} thread(s), skinning {skin_names[skin]}, "
              "µs per step summed over threads: " + ", ".join(parts))
for k in ("BM_Blend4x214/slanim_layers", "BM_Blend4x214/slanim_states", "BM_LocalToModel214/slanim"):
    b = med.get(k)
    if b: print(f"{k}: {b['cpu_time']:.0f} {b['time_unit']} (CPU)")
PY
echo
done
