#!/usr/bin/env bash
# A user's configure: `cmake -S . -B build -DCMAKE_BUILD_TYPE=Release`
# without presets. Warnings must not be errors there (GCC 12 warns
# -Wrestrict falsely at -O3), and the targets a user builds must exist. As
# a subproject, tests and benchmarks are off.
#
# The build itself is python.pip_install's: setup.py configures the same
# way (no preset, Release, warnings not errors), builds the engine, the C
# ABI and the CLI at -O3, and runs that CLI; the launcher's own sources
# compile in every preset. Building them all again here took 4 to 5 minutes
# of CI for no other finding.
set -euo pipefail
source=$1 generator=${2:-Ninja}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

fail() { echo "FAIL: $*"; exit 1; }
quiet() { local log; log=$("$@" 2>&1) || { echo "$log" | tail -40; fail "$*"; }; }
quiet cmake -S "$source" -B "$scratch/build" -G "$generator" -DCMAKE_BUILD_TYPE=Release
grep -q '^TUNELOCK_WARNINGS_AS_ERRORS:BOOL=OFF$' "$scratch/build/CMakeCache.txt" \
  || fail "warnings are errors by default"
if grep -q -- '-Werror' "$scratch/build/compile_commands.json"; then
  fail "-Werror in a plain build's compile commands"
fi
grep -q -- '-O3' "$scratch/build/compile_commands.json" || fail "a plain Release build is not optimised (-O3)"
targets=$(cmake --build "$scratch/build" --target help)
for target in tunelock tunelock_launcher tunelock_engine; do
  grep -q "^$target:" <<<"$targets" || fail "a plain Release build has no target $target"
done

# Pulled into a trainer's build with add_subdirectory, tests and benchmarks stay off.
mkdir -p "$scratch/trainer"
printf 'cmake_minimum_required(VERSION 3.25)\nproject(trainer LANGUAGES CXX)\nadd_subdirectory(%s tunelock)\n' \
  "$source" >"$scratch/trainer/CMakeLists.txt"
quiet cmake -S "$scratch/trainer" -B "$scratch/trainer-build" -G "$generator"
for option in TUNELOCK_BUILD_TESTS TUNELOCK_BUILD_BENCHMARKS; do
  grep -q "^$option:BOOL=OFF\$" "$scratch/trainer-build/CMakeCache.txt" \
    || fail "$option is on in a trainer's build"
done
echo "ok: a plain Release configure has no -Werror and builds tunelock and tunelock_launcher; as a subproject, no tests or benchmarks"
