#!/usr/bin/env bash
# The crowd benchmarks with the figures docs/runtime-threading.md reports: medians of
# repetitions, ratios within the same run (2 threads against 1, slanim against the viewer-style
# baseline), the load average before and after.
#
#   scripts/bench_crowd.sh [REPETITIONS]     (default 5; builds build/ in Release first)
#
# Writes the raw JSON to build/bench_crowd.json and prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
REPS="${1:-5}"
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || { echo "usage: scripts/bench_crowd.sh [REPETITIONS]" >&2; exit 2; }
scripts/configure.sh build >/dev/null
cmake --build build --parallel 2 --target slanim_bench_crowd >/dev/null
before=$(cut -d' ' -f1-3 /proc/loadavg)
build/benchmarks/slanim_bench_crowd --benchmark_repetitions="$REPS" --benchmark_report_aggregates_only=true \
  --benchmark_min_time=0.2 --benchmark_format=json --benchmark_out=build/bench_crowd.json >/dev/null
after=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$before" "$after" "$REPS" <<'PY'
import json, sys
before, after, reps = sys.argv[1:4]
data = json.load(open("build/bench_crowd.json"))
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
print("| avatars | skinning | 1 thread ms/step | 2 threads ms/step | 2 vs 1 | µs/avatar (1 thread) | KiB/avatar | viewer-style ms/step | viewer / slanim (1 thread) |")
print("|---|---|---|---|---|---|---|---|---|")
skin_names = {0: "no", 1: "yes, one shape (shared bind poses)", 2: "yes, every avatar its own shape"}
for n in (100, 1000, 5000):
    for skin in (0, 1, 2):
        one = ms(f"BM_Crowd/avatars:{n}/threads:1/skin:{skin}/real_time")
        two = ms(f"BM_Crowd/avatars:{n}/threads:2/skin:{skin}/real_time")
        if one is None and two is None: continue
        kib = med.get(f"BM_Crowd/avatars:{n}/threads:1/skin:{skin}/real_time", {}).get("KiB_per_avatar")
        viewer = ms(f"BM_CrowdViewer/avatars:{n}/real_time") if skin == 0 else None
        f = lambda v, d=2: "–" if v is None else f"{v:.{d}f}"
        print(f"| {n} | {skin_names[skin]} | {f(one)} | {f(two)} | {f(one / two if one and two else None)}× | "
              f"{f(one * 1000 / n if one else None, 1)} | {f(kib, 1)} | {f(viewer)} | "
              f"{f(viewer / one if viewer and one else None, 1)}{'×' if viewer and one else ''} |")
print()
for t, skin in ((1, 0), (2, 0), (1, 1), (2, 1), (1, 2), (2, 2)):
    b = med.get(f"BM_CrowdPhases/avatars:1000/threads:{t}/skin:{skin}/real_time")
    if not b: continue
    skip = {"name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
            "threads", "aggregate_name", "aggregate_unit", "iterations", "real_time", "cpu_time", "time_unit", "label"}
    parts = [f"{k} {v:.0f}" for k, v in b.items() if k not in skip and isinstance(v, (int, float))]
    print(f"Per system, 1000 avatars, {t} thread(s), skinning {skin_names[skin]}, µs per step summed over threads: " + ", ".join(parts))
for k in ("BM_Blend4x214/slanim_layers", "BM_Blend4x214/slanim_states", "BM_LocalToModel214/slanim"):
    b = med.get(k)
    if b: print(f"{k}: {b['cpu_time']:.0f} {b['time_unit']} (CPU)")
PY
