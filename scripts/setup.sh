#!/usr/bin/env bash
# Installs every Debian 12 package slanim needs to build, test and benchmark.
# Usage: scripts/setup.sh   (runs apt-get through sudo when not root)
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  clang libclang-rt-14-dev            # fuzzing (libFuzzer) and sanitizer runtimes
  libglm-dev libpugixml-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcairo2-dev fonts-dejavu-core     # charts (slanim ik --plot)
  libsdl2-dev python3-glad libegl-dev libgl-dev libgl1-mesa-dri libegl-mesa0 libstb-dev  # slanim view/render
  libcpp-httplib-dev                  # slanim relay (HTTP)
  libtinygltf-dev                     # slanim play --mesh-out (glTF)
  libtbb-dev                          # parallel phases of the runtime (oneTBB)
  python3 python3-numpy python3-matplotlib  # fuzz corpus script; the Python module (NumPy) and its plot example
  nats-server libnats-dev             # relay federation over NATS (broker for tests, C client)
  openssl python3-cryptography        # the relay security tests: throwaway CA (grid.sh), NKey/JWT creds
  emscripten                          # the browser page (scripts/build-web.sh, docs/web.md)
  chromium                            # the page's browser tests (tests/web, headless)
  blender                             # Blender tests and the add-on (tests/tools/blender, tools/blender; 3.4.1)
)
# Node.js and npm run the Khronos glTF validator of the glTF tests (tests/tools/gltf): Debian's
# packages only when the machine has no node/npm of its own (a NodeSource node conflicts with
# Debian's npm package).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  PACKAGES+=(nodejs npm)
fi
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi
# The glTF tests validate slanim's glTF output with the Khronos validator (npm gltf-validator,
# pinned in tests/tools/gltf/package-lock.json; node_modules/ is not committed).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if command -v npm >/dev/null 2>&1; then
  echo "setup: npm ci --prefix tests/tools/gltf"
  npm ci --prefix "$ROOT/tests/tools/gltf" --no-audit --no-fund ||
    echo "setup: npm ci failed (no registry?): the glTF validator tests will be skipped"
  # The page's three.js and the browser tests' playwright-core (tools/web/package-lock.json).
  echo "setup: npm ci --prefix tools/web"
  npm ci --prefix "$ROOT/tools/web" --no-audit --no-fund ||
    echo "setup: npm ci failed (no registry?): the page cannot be built, its browser tests will be skipped"
else
  echo "setup: npm not found: the glTF validator tests will be skipped"
fi
