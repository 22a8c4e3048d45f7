#!/usr/bin/env bash
# The native suites under sanitizers; any report fails the run.
#   asan: every native suite under AddressSanitizer + UndefinedBehaviorSanitizer
#         (preset asan), leaks included;
#   tsan: the engine's and the launcher's suites, where the threads are, under
#         ThreadSanitizer (preset tsan).
# Not run here: the browser page (wasm), the install tests (they build
# tunelock again without sanitizers) and the Python package (the interpreter
# does not load a sanitizer's runtime first).
# Usage: scripts/sanitize.sh [asan|tsan|all] [JOBS]
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-all} jobs=${2:-$(nproc)}

run_asan() {
  echo "== ASan + UBSan: every native suite"
  cmake --preset asan >/dev/null
  nice -n 10 cmake --build build/asan -j "$jobs" >/dev/null
  # docs.* prove the documents, not memory: the commands they run are the CLI's suites here.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp \
    ctest --test-dir build/asan -j "$jobs" --output-on-failure -E '^(web|install|python|docs)\.'
}

run_tsan() {
  echo "== TSan: the engine's and the launcher's suites"
  cmake --preset tsan >/dev/null
  nice -n 10 cmake --build build/tsan -j "$jobs" --target engine_tests launcher_tests >/dev/null
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    ctest --test-dir build/tsan -j "$jobs" --output-on-failure -R '^(engine_tests|launcher_tests)\.'
}

case $which in
  asan) run_asan ;;
  tsan) run_tsan ;;
  all) run_asan && run_tsan ;;
  *) echo "usage: scripts/sanitize.sh [asan|tsan|all] [JOBS]" >&2; exit 2 ;;
esac
