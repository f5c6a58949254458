#!/usr/bin/env bash
# Copies the page (index.html, style.css, slanim-api.js, app/) and three.js from tools/web/node_modules
# (pinned in package-lock.json; `npm ci --prefix tools/web`) into a built folder, beside the
# WebAssembly module that scripts/build-web.sh puts there. No CDN: the folder is self-contained.
# Usage: tools/web/assemble.sh OUT_DIR
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${1:?usage: assemble.sh OUT_DIR}"
THREE="$HERE/node_modules/three"
if [ ! -f "$THREE/build/three.module.js" ]; then
  echo "assemble: three.js missing: run npm ci --prefix tools/web" >&2
  exit 1
fi
mkdir -p "$OUT/app" "$OUT/vendor/addons/controls"
# slanim-api.js too (the build copies it as well): a folder assembled after an edit of it is current.
cp "$HERE/index.html" "$HERE/style.css" "$HERE/slanim-api.js" "$OUT/"
cp "$HERE"/app/*.js "$OUT/app/"
cp "$THREE/build/three.module.js" "$THREE/build/three.core.js" "$OUT/vendor/"
cp "$THREE/examples/jsm/controls/OrbitControls.js" "$OUT/vendor/addons/controls/"
cp "$THREE/LICENSE" "$OUT/vendor/three.LICENSE"
echo "assemble: page in $OUT"
