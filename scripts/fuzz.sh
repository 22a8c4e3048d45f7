#!/usr/bin/env bash
# Builds the libFuzzer targets (preset `fuzz`, clang with ASan and UBSan),
# seeds their corpora from the project's fixtures and runs each for
# SECONDS (default 60), JOBS targets at a time. Fails on any crash, leak,
# sanitizer report or timeout; prints executions per target. Exits 77
# (skipped) where clang or its libFuzzer runtime is missing. Usage: scripts/fuzz.sh [SECONDS] [JOBS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60} jobs=${2:-$(nproc)}
build=build/fuzz

if ! command -v clang++ >/dev/null ||
   ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
     clang++ -x c++ -fsanitize=fuzzer - -o /tmp/tunelock-fuzz-probe.$$ 2>/dev/null; then
  echo "clang++ with libFuzzer not found (Debian: clang libclang-rt-14-dev): fuzzing skipped"
  exit 77
fi
rm -f /tmp/tunelock-fuzz-probe.$$

cmake --preset fuzz >/dev/null
nice -n 10 cmake --build "$build" -j "$jobs" >/dev/null

# Seeds: the JSON fixtures as they are, the binary forms written by the
# engine from them, and what the engine itself sends and writes (a
# consensus round's payloads, an equivalents cache, torch.compile's tables,
# choice logs and sidecars); targets that read several files take them as
# parts of one input (fuzz/split_input.hpp).
seeds=$build/seeds
rm -rf "$seeds"
mkdir -p "$seeds"/{table_json,record,candidates,file_kind,moe_configs}
"$build/fuzz/make_seeds" examples "$seeds"
cp examples/tables/*.json "$seeds/table_json/"
cp examples/tables/*.json "$seeds/record/"
cp examples/candidates.json tests/web/fixtures/*candidates*.json "$seeds/candidates/"
cp examples/moe-configs/*.json "$seeds/moe_configs/"
# Every kind, each form: what the other targets are seeded with.
for dir in "$seeds"/*/; do
  [[ $dir == */file_kind/ ]] || cp "$dir"* "$seeds/file_kind/" 2>/dev/null || true
done
# Inputs that once failed, kept so that a regression fails at once.
for dir in fuzz/regressions/*/; do
  mkdir -p "$seeds/$(basename "$dir")" && cp "$dir"* "$seeds/$(basename "$dir")/"
done

targets=(table_json table_binary record timings choice_log verify_batch verify_tree candidates
  policy_environment bootstrap_hello file_kind audit launches consensus equivalent_cache
  kernel_identities table_coverage inductor_choice moe_configs)

# One target: SECONDS of libFuzzer on one core, its verdict in $build/$target.verdict.
fuzz_one() {
  local target=$1 corpus=$build/corpus/$1 log=$build/$1.log runs
  mkdir -p "$corpus" "$build/crashes/$target"
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: a blow-up.
  if "$build/fuzz/fuzz_$target" "$corpus" "$seeds/$target" -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/crashes/$target/" >"$log" 2>&1; then
    runs=$(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    echo "ok: fuzz_$target: $runs executions in ${seconds} s, no crash, leak or timeout"
  else
    echo "FAIL: fuzz_$target (log: $log; inputs in $build/crashes/$target/)"
    grep -m5 -E 'ERROR|SUMMARY|terminate|what\(\)' "$log" || tail -20 "$log"
  fi >"$build/$target.verdict"
}

# JOBS targets at a time, each on its own core: the same seconds per target
# in a fraction of the wall time.
rm -f "$build"/*.verdict
running=0
for target in "${targets[@]}"; do
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$target" &
  running=$((running + 1))
done
wait

failed=0
for target in "${targets[@]}"; do
  verdict=$(cat "$build/$target.verdict" 2>/dev/null || echo "FAIL: fuzz_$target gave no verdict")
  echo "$verdict"
  [[ $verdict == ok:* ]] || failed=$((failed + 1))
done
exit $failed
