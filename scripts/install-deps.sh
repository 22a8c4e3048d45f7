#!/usr/bin/env bash
# Installs the Debian 12 packages the build needs, and only those that are
# missing, so a second run is quiet and fast; then the browser test's npm
# package (playwright-core drives Debian's Chromium; it downloads no browser).
# clang and its libFuzzer runtime serve `make fuzz` and CI.
# Used by `make test`; `--demo` installs only what `make demo` builds (the
# CLI and tunelock-demo); `--web` only what `make web` builds and serves
# (the engine in wasm and the page: Emscripten and Python, no browser-test
# packages); `--bench` adds python3-torch, large and needed only by `make
# bench-gloo`.
set -euo pipefail
mode=${1:-}

packages=(
  cmake ninja-build g++ pkg-config
  libflatbuffers-dev flatbuffers-compiler
  nlohmann-json3-dev libxxhash-dev libcli11-dev libsimdjson-dev
  libspdlog-dev libfmt-dev
  libucx-dev
)
if [[ $mode == --web ]]; then
  packages+=(emscripten python3)
elif [[ $mode != --demo ]]; then
  packages+=(
    libboost-test-dev libbenchmark-dev
    python3 python3-pytest python3-venv python3-build
    emscripten chromium
    iproute2 openmpi-bin libopenmpi-dev
    clang libclang-rt-14-dev
  )
fi
[[ $mode == --bench ]] && packages+=(python3-torch)

install_npm_packages() {
  local dir
  dir="$(cd "$(dirname "$0")/.." && pwd)/web/tests"
  [[ -d $dir/node_modules/playwright-core ]] && return 0
  command -v npm >/dev/null || { echo "npm not found: the browser test will be skipped" >&2; return 0; }
  echo "installing playwright-core for the browser test" >&2
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) ||
    echo "npm install failed: the browser test will be skipped" >&2
}

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  [[ $mode == --demo || $mode == --web ]] || install_npm_packages
  exit 0
fi

echo "installing: ${missing[*]}" >&2
sudo=()
((EUID == 0)) || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
if ! "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[[ $mode == --demo || $mode == --web ]] || install_npm_packages
