#!/usr/bin/env bash
# The browser benchmark (docs/web.md, "Size and speed"), not part of CI: serves the built page
# (scripts/build-web.sh) with `slanim serve`, runs tools/web/bench.html in headless Chromium
# (Debian's chromium, driven by playwright-core pinned in tools/web/bench/package.json) and the
# same work natively, then prints both:
# 1. one avatar's kernels (benchmarks/avatar_kernels.hpp: sampling DANCE1, blending it, the
#    4-layer 214-joint blend, local-to-model), the same loops in slanim-bench.wasm and in
#    build/benchmarks/slanim_bench_sampling (BM_AvatarKernel/*), each timed in batches of many
#    calls (one clock read per batch), median and minimum of the repetitions; native under
#    SLANIM_ISA=sse2 (the code wasm runs: its SSE2 paths on wasm SIMD) and under the best
#    instruction set of the machine;
# 2. the whole step of 100 avatars of DANCE1 made to loop through the C API
#    (BM_CApi_StepLoop_Dance100 of build/benchmarks/slanim_bench_capi), sse2 and best, and the
#    per-system profile of the world (BM_CApi_Phases_Dance100; clock-bound in the browser, see
#    docs/web.md);
# 3. the page itself (index.html) with its crowd button: 100 avatars (and 10, 1) stepped and drawn
#    with software WebGL (SwiftShader, as the browser tests run it): frames per second, the
#    main thread's share (step and draw calls), WebGL draw calls and triangles per frame
#    (tools/web/bench/crowd.mjs);
# and slanim.wasm's size (raw and gzip -9).
# Needs: build-web/web and build-web/web-bench (scripts/build-web.sh), build/tools/slanim,
# build/benchmarks/slanim_bench_capi and slanim_bench_sampling (cmake --build build --target
# slanim slanim_bench_capi slanim_bench_sampling), ../shared/anims/linden/DANCE1.anim, chromium, node.
# Usage: scripts/web-bench.sh [SECONDS]   (wall time of each world and crowd measurement, default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN="${1:-3}"
WEB=build-web/web
ANIM=../shared/anims/linden/DANCE1.anim
for f in "$WEB/slanim.wasm" build-web/web-bench/slanim-bench.wasm build/tools/slanim build/benchmarks/slanim_bench_capi \
         build/benchmarks/slanim_bench_sampling "$ANIM"; do
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
cp build-web/web-bench/slanim-bench.js build-web/web-bench/slanim-bench.wasm "$SITE"/
cp "$ANIM" "$SITE/DANCE1.anim"
[[ -f "$SITE/index.html" ]] || echo '<a href="bench.html">bench</a>' > "$SITE/index.html"  # serve needs one
exec 3< <(build/tools/slanim serve --port 0 --dir "$SITE")
SERVE_PID=$!
read -r URL <&3

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "slanim.wasm: $(stat -c %s "$WEB/slanim.wasm") bytes, gzip -9: $(gzip -9 < "$WEB/slanim.wasm" | wc -c) bytes"
WASM_JSON="$(node tools/web/bench/run.mjs "${URL}bench.html?seconds=${SECONDS_PER_RUN}")"
native_capi() {  # the step (median and minimum of 9 repetitions), then the per-system profile
  local reps=9
  build/benchmarks/slanim_bench_capi --benchmark_filter='BM_CApi_StepLoop_Dance100' --benchmark_repetitions=$reps \
    --benchmark_min_time="$(python3 -c "print(${SECONDS_PER_RUN} / $reps)")" --benchmark_format=json 2>/dev/null
  build/benchmarks/slanim_bench_capi --benchmark_filter='BM_CApi_Phases_Dance100' \
    --benchmark_min_time="${SECONDS_PER_RUN}" --benchmark_format=json 2>/dev/null
}
native_kernels() {
  build/benchmarks/slanim_bench_sampling --benchmark_filter='BM_AvatarKernel/' --benchmark_repetitions=9 \
    --benchmark_min_time=0.025 --benchmark_format=json 2>/dev/null
}
NATIVE_JSON="$(native_capi)"
NATIVE_SSE2_JSON="$(SLANIM_ISA=sse2 native_capi)"
KERNELS_JSON="$(native_kernels)"
KERNELS_SSE2_JSON="$(SLANIM_ISA=sse2 native_kernels)"
CROWD_JSON="$(cd tools/web/bench && node crowd.mjs "$URL" "$SITE/DANCE1.anim" 100 "$SECONDS_PER_RUN" 1280x800,640x400)"
CROWD10_JSON="$(cd tools/web/bench && node crowd.mjs "$URL" "$SITE/DANCE1.anim" 10 "$SECONDS_PER_RUN" 1280x800)"
CROWD1_JSON="$(cd tools/web/bench && node crowd.mjs "$URL" "$SITE/DANCE1.anim" 1 "$SECONDS_PER_RUN" 1280x800)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$WASM_JSON" "$NATIVE_JSON" "$NATIVE_SSE2_JSON" "$KERNELS_JSON" "$KERNELS_SSE2_JSON" \
  "$CROWD1_JSON" "$CROWD10_JSON" "$CROWD_JSON" <<'PY'
import json, statistics, sys
wasm = json.loads(sys.argv[1])
if "error" in wasm:
    sys.exit("web-bench: the page failed: " + wasm["error"])
def by_name(text):  # two JSON documents: the step's repetitions, then the profile run
    docs, out = [], {}
    dec, i = json.JSONDecoder(), 0
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i == len(text):
            break
        d, i = dec.raw_decode(text, i)
        docs.append(d)
    for d in docs:
        for b in d["benchmarks"]:
            if b.get("run_type", "iteration") == "iteration":
                out.setdefault(b["name"], []).append(b)
    step = [b["real_time"] / 1000.0 for b in out["BM_CApi_StepLoop_Dance100"]]  # µs → ms
    return {"step": (statistics.median(step), min(step)), "phases": out["BM_CApi_Phases_Dance100"][0]}
native, native_sse2 = by_name(sys.argv[2]), by_name(sys.argv[3])
def kernels(text):  # name → (median, min, isa label) of the repetitions' real time, ns per call
    runs = {}
    for b in json.loads(text)["benchmarks"]:
        if b.get("run_type") == "iteration":
            runs.setdefault(b["name"].split("/")[1], []).append((b["real_time"], b.get("label", "")))
    return {k: (statistics.median(t for t, _ in v), min(t for t, _ in v), v[0][1]) for k, v in runs.items()}
best_k, sse2_k = kernels(sys.argv[4]), kernels(sys.argv[5])
print(f"browser: {wasm['userAgent']}")
wk = wasm.get("kernels", {})
if "kernels" in wk:
    best_isa = next(iter(best_k.values()))[2].replace("isa ", "")
    print(f"one avatar's kernels, ns per call: median [minimum] of {wk['reps']} batches of {wk['batchMs']} ms;")
    print(f"ratios wasm/native of the medians and of the minima (the minima move less on a shared machine);")
    print(f"wasm runs {wk['isa']} on wasm SIMD; native sse2 is the same code, native {best_isa} the machine's best:")
    print(f"{'kernel':<15}{'wasm':>17}{'native sse2':>17}{'ratio':>11}{'native ' + best_isa:>17}{'ratio':>11}")
    for name, w in wk["kernels"].items():
        s, b = sse2_k.get(name), best_k.get(name)
        if s is None or b is None:
            continue
        cell = lambda med, lo: f"{med:>8.1f} [{lo:>6.1f}]"
        ratio = lambda n: f"{w['medianNs'] / n[0]:>5.2f}/{w['minNs'] / n[1]:<5.2f}"
        print(f"{name:<15}{cell(w['medianNs'], w['minNs'])}{cell(s[0], s[1])} {ratio(s)}{cell(b[0], b[1])} {ratio(b)}")
else:
    print("kernels: " + wk.get("error", "not run"))
print("the world, 100 avatars of DANCE1 (looping), one thread:")
print(f"{'':<26}{'wasm':>17}{'native sse2':>17}{'ratio':>11}{'native best':>17}{'ratio':>11}")
ws = (wasm["stepMs"], wasm["stepMinMs"])
cell = lambda v: f"{v[0]:>8.3f} [{v[1]:>6.3f}]"
ratio = lambda n: f"{ws[0] / n[0]:>5.2f}/{ws[1] / n[1]:<5.2f}"
print(f"{'step, timing off (ms)':<26}{cell(ws)}{cell(native_sse2['step'])} {ratio(native_sse2['step'])}"
      f"{cell(native['step'])} {ratio(native['step'])}")
print(f"  (median [minimum] of {wasm['stepBatches']} batches of 100 ms in the browser, of 9 repetitions natively)")
print(f"100 avatars stepped in the browser: {1000.0 / wasm['stepMs']:.0f} steps/s (drawing not included)")
print("per-system profile (each system of each avatar reads the clock twice: in the browser that is")
print("performance.now(), a call out of wasm, so the short rows are clock-bound there; µs per avatar-step):")
for name in ("keyframe_sampling", "pose_blend", "local_to_model", "motion_control"):
    w = wasm["perAvatarUs"].get(name)
    n = native_sse2["phases"].get(name)
    if w is not None and n is not None:
        print(f"  {name:<22}{w:>8.3f}{n:>8.3f}{w / n:>7.2f}")
prof_sse2_ms = native_sse2["phases"]["real_time"] / 1000.0
print(f"  {'step, timing on (ms)':<22}{wasm['profiledStepMs']:>8.3f}{prof_sse2_ms:>8.3f}{wasm['profiledStepMs'] / prof_sse2_ms:>7.2f}")
print("the page's crowd, stepped and drawn (headless Chromium, SwiftShader WebGL); the main thread's busy ms")
print("a frame from a CPU profile (engine = slanim.wasm + slanim-api.js, page = app/, three.js, other = WebGL")
print("calls and the browser, gc):")
for arg in sys.argv[6:9]:
    crowd = json.loads(arg)
    for r in crowd["runs"]:
        b = r["mainThreadBusyMsPerFrameByPart"]
        parts = " ".join(f"{k} {b.get(k, 0):.1f}" for k in ("engine", "page", "three.js", "other", "gc"))
        print(f"  {r['crowd']:>3} avatars {r['viewport']:>9}: {r['fps']:6.2f} fps ({r['frameIntervalMs']:7.1f} ms a frame), "
              f"main thread busy {r['mainThreadBusyMsPerFrame']:6.1f} ms ({parts}), "
              f"{r['drawCallsPerFrame']} draw calls, {r['trianglesPerFrame']:,} triangles"
              + (f", errors: {r['errors']}" if r["errors"] else ""))
if wasm.get("consoleErrors"):
    print("console errors:", wasm["consoleErrors"])
PY
