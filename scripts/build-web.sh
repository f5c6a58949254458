#!/usr/bin/env bash
# Builds the browser page (docs/web.md): slanim.wasm + slanim.js (the C API compiled by Debian's
# emscripten) and the page's static files, in build-web/web/. Then `slanim serve --dir
# build-web/web` (or any static host) serves it.
#
# Needs: emscripten (apt-get install emscripten; scripts/setup.sh), the Debian headers the host
# build uses (libfmt-dev, nlohmann-json3-dev, libpugixml-dev, libtinygltf-dev, libstb-dev), and
# once, pugixml's source (Debian ships the library compiled, not its source),
# fetched with `apt-get source` into build-web/deps/ through a private source list.
# Only the page's targets are built, and the browser benchmark's kernel module
# (build-web/web-bench/slanim-bench.wasm, read by scripts/web-bench.sh; not part of the page);
# the compiler runs through ccache when installed. Last,
# tools/web/assemble.sh copies the page and three.js (npm ci --prefix tools/web, once) beside them.
# Usage: scripts/build-web.sh [BUILD_DIR]   (default build-web/)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build-web}"
DEPS="$BUILD/deps"
mkdir -p "$DEPS/include"
# Emscripten's optimizer loads Debian's node-acorn and friends.
export NODE_PATH="${NODE_PATH:+$NODE_PATH:}/usr/share/nodejs"

# Headers, staged so that no other /usr/include header reaches em++.
for h in fmt nlohmann pugixml.hpp pugiconfig.hpp tiny_gltf.h stb_image.h stb_image_write.h; do
  src="/usr/include/$h"
  [[ -e "$src" ]] || src="/usr/include/stb/$h"
  [[ -e "$src" ]] || { echo "build-web: $h not found (scripts/setup.sh installs it)" >&2; exit 1; }
  ln -sfn "$src" "$DEPS/include/$h"
done

# pugixml.cpp, the version of Debian's libpugixml-dev headers.
PUGI="$DEPS/pugixml/pugixml.cpp"
if [[ ! -f "$PUGI" ]]; then
  APT="$(realpath "$DEPS")/apt"
  mkdir -p "$APT/lists/partial" "$DEPS/pugixml"
  . /etc/os-release
  echo "deb-src http://deb.debian.org/debian ${VERSION_CODENAME:-bookworm} main" > "$APT/sources.list"
  aptopts=(-o "Dir::Etc::sourcelist=$APT/sources.list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$APT/lists")
  apt-get "${aptopts[@]}" update -qq
  version="$(dpkg-query -W -f '${source:Version}' libpugixml-dev)"
  (cd "$APT" && apt-get "${aptopts[@]}" source --download-only -qq "pugixml=$version")
  tar -xzf "$APT"/pugixml_*.orig.tar.gz -C "$DEPS/pugixml" --strip-components=2 --wildcards '*/src/pugixml.cpp'
fi

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
if [[ ! -f "$BUILD/build.ninja" ]]; then
  emcmake cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSLANIM_WARNINGS_AS_ERRORS=ON \
    "${launcher[@]}" -DSLANIM_WASM_DEPS_INCLUDE="$(realpath "$DEPS/include")" \
    -DSLANIM_WASM_PUGIXML_SOURCE="$(realpath "$PUGI")"
fi
cmake --build "$BUILD" --parallel "${SLANIM_JOBS:-2}" --target slanim_web slanim_web_files slanim_bench_web
# The page's index.html, style.css, app/ and three.js (tools/web/node_modules, pinned).
if [[ ! -f tools/web/node_modules/three/build/three.module.js ]]; then
  npm ci --prefix tools/web --ignore-scripts --no-audit --no-fund
fi
bash tools/web/assemble.sh "$BUILD/web"
ls -l "$BUILD/web"
echo "build-web: the page is in $BUILD/web (slanim serve --dir $BUILD/web)"
