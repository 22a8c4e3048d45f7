#!/usr/bin/env bash
# A user's build: `cmake -S . -B build -DCMAKE_BUILD_TYPE=Release` without
# presets, then a build of what they link and run. Warnings must not be
# errors there (GCC 12 warns -Wrestrict falsely at -O3), and the CLI built
# that way must run. Also: as a subproject, tests and benchmarks are off.
set -euo pipefail
source=$1 generator=${2:-Ninja} jobs=${3:-2}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

quiet() { local log; log=$("$@" 2>&1) || { echo "$log" | tail -40; echo "FAIL: $*"; exit 1; }; }
quiet cmake -S "$source" -B "$scratch/build" -G "$generator" -DCMAKE_BUILD_TYPE=Release
grep -q '^TUNELOCK_WARNINGS_AS_ERRORS:BOOL=OFF$' "$scratch/build/CMakeCache.txt" \
  || { echo "FAIL: warnings are errors by default"; exit 1; }
if grep -q -- '-Werror' "$scratch/build/compile_commands.json"; then
  echo "FAIL: -Werror in a plain build's compile commands"; exit 1
fi
# Pulled into a trainer's build with add_subdirectory, tests and benchmarks stay off.
mkdir -p "$scratch/trainer"
printf 'cmake_minimum_required(VERSION 3.25)\nproject(trainer LANGUAGES CXX)\nadd_subdirectory(%s tunelock)\n' \
  "$source" >"$scratch/trainer/CMakeLists.txt"
quiet cmake -S "$scratch/trainer" -B "$scratch/trainer-build" -G "$generator"
for option in TUNELOCK_BUILD_TESTS TUNELOCK_BUILD_BENCHMARKS; do
  grep -q "^$option:BOOL=OFF\$" "$scratch/trainer-build/CMakeCache.txt" \
    || { echo "FAIL: $option is on in a trainer's build"; exit 1; }
done

quiet cmake --build "$scratch/build" -j "$jobs" --target tunelock tunelock_launcher
"$scratch/build/cli/tunelock" policy --json >/dev/null || { echo "FAIL: the Release CLI does not run"; exit 1; }
echo "ok: a plain Release build configures without -Werror, builds and runs"
