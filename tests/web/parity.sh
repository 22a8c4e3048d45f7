#!/usr/bin/env bash
# Native vs wasm decisions on one generated corpus. Skips (exit 77) when the
# wasm build is absent, saying how to make it.
set -euo pipefail
native=$1 wasm_js=$2 script=$3
if [[ ! -f $wasm_js ]]; then
  echo "skipped: $wasm_js is not built (make test builds it; or cmake --preset wasm && cmake --build build/wasm)"
  exit 77
fi
corpus=$(mktemp)
trap 'rm -f "$corpus"' EXIT
"$native" "$corpus" 1200
node "$script" "$wasm_js" "$corpus"
