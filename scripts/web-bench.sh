#!/usr/bin/env bash
# The browser benchmark (docs/web.md, "Size and speed"), not part of CI: serves the built page
# (scripts/build-web.sh) with `slanim serve`, runs tools/web/bench.html in headless Chromium
# (Debian's chromium, driven by playwright-core pinned in tools/web/bench/package.json) and the
# same C calls natively (build/benchmarks/slanim_bench_capi, BM_CApi_StepLoop_Dance100 and
# BM_CApi_Phases_Dance100: DANCE1 made to loop), then
# prints both: µs per avatar and step of sampling, blend and local-to-model, the whole step of
# 100 avatars, the wasm/native ratios, and slanim.wasm's size (raw and gzip -9).
# Needs: build-web/web (scripts/build-web.sh), build/tools/slanim and
# build/benchmarks/slanim_bench_capi (cmake --build build --target slanim slanim_bench_capi),
# ../shared/anims/linden/DANCE1.anim, chromium, node.
# Usage: scripts/web-bench.sh [SECONDS]   (wall time of each measurement, default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN="${1:-3}"
WEB=build-web/web
ANIM=../shared/anims/linden/DANCE1.anim
for f in "$WEB/slanim.wasm" build/tools/slanim build/benchmarks/slanim_bench_capi "$ANIM"; do
  [[ -e "$f" ]] || { echo "web-bench: $f is missing (see the header of $0)" >&2; exit 1; }
done
(cd tools/web/bench && [[ -d node_modules/playwright-core ]] || npm ci --no-audit --no-fund --silent)

SITE="$(mktemp -d)"
cleanup() {
  [[ -n "${SERVE_PID:-}" ]] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null
  rm -rf "$SITE"
}
trap cleanup EXIT
cp -r "$WEB"/. "$SITE"/
cp "$ANIM" "$SITE/DANCE1.anim"
[[ -f "$SITE/index.html" ]] || echo '<a href="bench.html">bench</a>' > "$SITE/index.html"  # serve needs one
exec 3< <(build/tools/slanim serve --port 0 --dir "$SITE")
SERVE_PID=$!
read -r URL <&3

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "slanim.wasm: $(stat -c %s "$WEB/slanim.wasm") bytes, gzip -9: $(gzip -9 < "$WEB/slanim.wasm" | wc -c) bytes"
WASM_JSON="$(node tools/web/bench/run.mjs "${URL}bench.html?seconds=${SECONDS_PER_RUN}")"
NATIVE_JSON="$(build/benchmarks/slanim_bench_capi --benchmark_filter='BM_CApi_(StepLoop|Phases)_Dance100' \
  --benchmark_min_time="${SECONDS_PER_RUN}" --benchmark_format=json 2>/dev/null)"
python3 - "$WASM_JSON" "$NATIVE_JSON" <<'PY'
import json, sys
wasm = json.loads(sys.argv[1])
benchmarks = {b["name"]: b for b in json.loads(sys.argv[2])["benchmarks"]}
native = benchmarks["BM_CApi_Phases_Dance100"]
native_step = benchmarks["BM_CApi_StepLoop_Dance100"]
if "error" in wasm:
    sys.exit("web-bench: the page failed: " + wasm["error"])
print(f"browser: {wasm['userAgent']}")
print("per-system timing on (each system of each avatar reads the clock twice):")
print(f"{'µs per avatar-step':<22}{'wasm':>10}{'native':>10}{'ratio':>8}")
for name in ("keyframe_sampling", "pose_blend", "local_to_model", "motion_control"):
    w = wasm["perAvatarUs"].get(name)
    n = native.get(name)
    if w is None or n is None:
        continue
    print(f"{name:<22}{w:>10.3f}{n:>10.3f}{w / n:>8.2f}")
profiled_ms = native["real_time"] / 1000.0  # µs per iteration → ms
print(f"{'step (ms)':<22}{wasm['profiledStepMs']:>10.3f}{profiled_ms:>10.3f}{wasm['profiledStepMs'] / profiled_ms:>8.2f}")
print("timing off:")
step_ms = native_step["real_time"] / 1000.0
print(f"{'step, 100 avatars (ms)':<22}{wasm['stepMs']:>10.3f}{step_ms:>10.3f}{wasm['stepMs'] / step_ms:>8.2f}")
print(f"100 avatars stepped in the browser: {1000.0 / wasm['stepMs']:.0f} steps/s (drawing not included)")
if wasm.get("consoleErrors"):
    print("console errors:", wasm["consoleErrors"])
PY
