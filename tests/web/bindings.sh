#!/usr/bin/env bash
# The page's rule bindings (fileKind, manifestKernel, tableKeys) under Node.
# Skips (exit 77) when the wasm build is absent, saying how to make it.
set -euo pipefail
wasm_js=$1 script=$2 source_dir=$3 shared=$4
if [[ ! -f $wasm_js ]]; then
  echo "skipped: $wasm_js is not built (make test builds it; or cmake --preset wasm && cmake --build build/wasm)"
  exit 77
fi
node "$script" "$wasm_js" "$source_dir" "$shared"
