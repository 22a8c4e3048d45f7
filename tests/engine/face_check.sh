#!/usr/bin/env bash
# The house around the engine: the real tree passes scripts/check_faces.py,
# and a copy with one fault of each kind fails, naming file and line.
set -euo pipefail
checker=$1 project=$2
python3 "$checker" "$project"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/python/include/tunelock" "$scratch/python/tunelock" "$scratch/engine/src/runtime" \
  "$scratch/web/src" "$scratch/cli/src" "$scratch/launcher/src" "$scratch/python/capi"
cp "$project/python/include/tunelock/c_api.h" "$scratch/python/include/tunelock/"
cp "$project"/python/tunelock/*.py "$scratch/python/tunelock/"
touch "$scratch/engine/src/runtime/consensus.hpp"
# Faces: a private engine header, the process runtime in the page, the launcher in the CLI.
printf '#include "runtime/consensus.hpp"\n' >"$scratch/launcher/src/family.cpp"
printf '#include "tunelock/tables/table.hpp"\n#include "tunelock/runtime/runtime.hpp"\n' \
  >"$scratch/web/src/page.cpp"
printf '#include "tunelock/launcher/launcher.hpp"\n' >"$scratch/cli/src/run.cpp"
# Python rooms: an import of a later room, one adapter importing another, a stray module.
printf 'from ._api import installed_policy\n' >>"$scratch/python/tunelock/_hooks.py"
printf 'from tunelock import inductor\n' >>"$scratch/python/tunelock/triton.py"
printf '"""A module in no room."""\n' >"$scratch/python/tunelock/stray.py"
# The C ABI: one argument fewer, a renamed runner field, a function nobody declared.
native="$scratch/python/tunelock/_native.py"
sed -i 's/"tunelock_signature": (\[ctypes.c_char_p, ctypes.c_void_p\]/"tunelock_signature": ([ctypes.c_char_p]/' "$native"
sed -i 's/("use_second_input", RUNNER_STEP_FN)/("second_input", RUNNER_STEP_FN)/' "$native"
sed -i 's/"tunelock_flush": (\[ctypes.c_char_p\], ctypes.c_int)/"tunelock_flush": ([ctypes.c_int], ctypes.c_int)/' "$native"
printf 'lib.tunelock_no_such_function()\n' >>"$scratch/python/tunelock/_offline.py"

status=0
out=$(python3 "$checker" "$scratch" 2>&1) || status=$?
expect() {
  grep -qF -- "$1" <<<"$out" || { echo "FAIL: the check did not say: $1"; echo "$out"; exit 1; }
}
((status == 1)) || { echo "FAIL: a tree with faults exited $status, expected 1"; echo "$out"; exit 1; }
expect "launcher/src/family.cpp:1: the launcher includes the engine's private \"runtime/consensus.hpp\""
expect "web/src/page.cpp:2: the page includes the engine's runtime/ room (tunelock/runtime/runtime.hpp)"
expect "cli/src/run.cpp:1: the cli includes tunelock/launcher/launcher.hpp, which it must not use"
expect "python/tunelock/_hooks.py:"
expect "_hooks (engine texts) imports _api (the user API), a room after its own"
expect "the adapter triton imports the adapter inductor"
expect "python/tunelock/stray.py: not in a room"
expect "tunelock_signature takes 2 argument(s) in c_api.h, 1 here"
expect "tunelock_flush argument 1 is const char* in c_api.h, declared c_int here"
expect "CallRunnerStruct's fields"
expect "calls tunelock_no_such_function, which _SIGNATURES does not declare"
if grep -qF "web/src/page.cpp:1" <<<"$out"; then
  echo "FAIL: the page's public table header was refused"; echo "$out"; exit 1
fi
status=0
python3 "$checker" /nonexistent >/dev/null 2>&1 || status=$?
((status == 2)) || { echo "FAIL: a folder that is no tunelock tree exited $status, expected 2"; exit 1; }
echo "PASS: face check"
