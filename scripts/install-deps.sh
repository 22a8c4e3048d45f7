#!/usr/bin/env bash
# Installs the Debian 12 packages the build needs, and only those that are
# missing, so a second run is quiet and fast. Used by `make demo` and `make test`.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  libflatbuffers-dev flatbuffers-compiler
  nlohmann-json3-dev libxxhash-dev libcli11-dev
  libspdlog-dev libfmt-dev
  libboost-test-dev libbenchmark-dev
  libucx-dev
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0

echo "installing: ${missing[*]}" >&2
sudo=()
((EUID == 0)) || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
if ! "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
