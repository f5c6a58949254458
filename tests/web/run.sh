#!/usr/bin/env bash
# The browser tests of the page (tests/web/page.test.mjs): Debian's chromium headless with
# software WebGL, driven by playwright-core (pinned in tools/web/package-lock.json).
# Usage: tests/web/run.sh SLANIM_BIN [WEB_DIR]   (WEB_DIR default: build-web/web)
# Exit 77 (skipped, with the reason; 1 with SLANIM_WEB_REQUIRED=1) when chromium, node,
# node_modules, the wasm build or the reference data (../shared) is absent.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SLANIM_BIN="${1:?usage: run.sh SLANIM_BIN [WEB_DIR]}"
WEB_DIR="${2:-${SLANIM_WEB_DIR:-$ROOT/build-web/web}}"
CHROMIUM="${SLANIM_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
# SLANIM_WEB_REQUIRED=1 (.ci/run's web stage): a missing piece fails instead.
skip() {
  if [ -n "${SLANIM_WEB_REQUIRED:-}" ]; then echo "FAILED: $*"; exit 1; fi
  echo "SKIPPED: $*"; exit 77
}
[ -n "$CHROMIUM" ] && [ -x "$CHROMIUM" ] || skip "no chromium (apt-get install chromium; scripts/setup.sh)"
command -v node >/dev/null || skip "no node"
[ -d "$ROOT/tools/web/node_modules/playwright-core" ] && [ -d "$ROOT/tools/web/node_modules/three" ] ||
  skip "tools/web/node_modules missing (npm ci --prefix tools/web; scripts/setup.sh)"
[ -f "$WEB_DIR/slanim.wasm" ] && [ -f "$WEB_DIR/slanim.js" ] ||
  skip "no WebAssembly build in $WEB_DIR (scripts/build-web.sh)"
export SLANIM_SHARED="${SLANIM_SHARED:-$ROOT/../shared}"
[ -f "$SLANIM_SHARED/anims/linden/DANCE1.anim" ] || skip "no reference data in $SLANIM_SHARED (../shared)"
# The page's files and three.js, fresh beside the module (tools/web/NEEDS.md: build-web.sh
# should run assemble.sh as well).
bash "$ROOT/tools/web/assemble.sh" "$WEB_DIR" >/dev/null
OUT="$(mktemp -d "${TMPDIR:-/tmp}/slanim-web.XXXXXX")"
trap 'rm -rf "$OUT"' EXIT
export SLANIM_BIN SLANIM_CHROMIUM="$CHROMIUM" SLANIM_WEB_DIR="$WEB_DIR" SLANIM_WEB_OUT="$OUT"
export SLANIM_NODE_MODULES="$ROOT/tools/web/node_modules"
status=0
node --test --test-reporter=spec "$ROOT/tests/web/page.test.mjs" || status=$?
if [ "$status" -ne 0 ] && [ -n "${SLANIM_WEB_KEEP:-}" ]; then
  mkdir -p "$SLANIM_WEB_KEEP" && cp -r "$OUT"/. "$SLANIM_WEB_KEEP"/
  echo "web tests: scratch files (screenshot page.png) kept in $SLANIM_WEB_KEEP"
fi
exit "$status"
