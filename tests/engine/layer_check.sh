#!/usr/bin/env bash
# The engine's rooms: the real tree passes scripts/check_layers.py, and a
# crafted tree with each kind of wrong include fails, naming file and line.
set -euo pipefail
checker=$1 engine=$2
python3 "$checker" "$engine"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/include/tunelock/base" "$scratch/include/tunelock/tables" "$scratch/src/io" "$scratch/src/flat"
printf '#include "tunelock/tables/table.hpp"\n' >"$scratch/include/tunelock/base/error.hpp"
printf '#include "io/sealed_file.hpp"\n' >"$scratch/include/tunelock/tables/table.hpp"
printf '#include "sealed_file.hpp"\n#include "tunelock/launcher/backend.hpp"\n' >"$scratch/src/io/files.cpp"
printf '\n' >"$scratch/src/flat/orphan.cpp"
printf '\n' >"$scratch/src/loose.cpp"
status=0
out=$(python3 "$checker" "$scratch" 2>&1) || status=$?
expect() {
  grep -qF -- "$1" <<<"$out" || { echo "FAIL: the check did not say: $1"; echo "$out"; exit 1; }
}
((status == 1)) || { echo "FAIL: a tree with wrong includes exited $status, expected 1"; echo "$out"; exit 1; }
expect "base/error.hpp:1: base/ includes tables/ (tunelock/tables/table.hpp), a room above it"
expect "tables/table.hpp:1: a public header includes the private \"io/sealed_file.hpp\""
expect "io/files.cpp:1: \"sealed_file.hpp\" names no room"
expect "io/files.cpp:2: the engine includes a face or a device library (tunelock/launcher/backend.hpp)"
expect "flat/orphan.cpp: not in a room"
expect "src/loose.cpp: not in a room"
status=0
python3 "$checker" /nonexistent >/dev/null 2>&1 || status=$?
((status == 2)) || { echo "FAIL: a missing engine folder exited $status, expected 2"; exit 1; }
echo "PASS: layer check"
