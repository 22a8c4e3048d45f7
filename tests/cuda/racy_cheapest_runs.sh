#!/usr/bin/env bash
# Pinned means the same bits, on a GPU: a GEMM family whose cheapest
# variant adds with float atomics (racy_cheapest).
#   1. no table, 3 pinned processes: the first call's check names the racy
#      config (its outputs may differ: printed, the evidence);
#   2. record in 3 processes -> merge: the table flags it;
#   3. 4 fresh pinned processes with the table, on recorded shapes and one
#      the record never saw: one output per shape, the atomic config never chosen.
# Exits 77 (skipped) with a message where no GPU is usable.
set -euo pipefail
program=$(realpath "$1") tunelock=$(realpath "$2") probe=$(realpath "$3")
if ! gpus=$("$probe" 2>&1); then echo "skipped: $gpus"; exit 77; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
unset TUNELOCK_MODE TUNELOCK_RECORD TUNELOCK_CHAOS TUNELOCK_TABLE_PATH TUNELOCK_CHOICE_LOG \
  TUNELOCK_VERIFY TUNELOCK_VERIFY_STRICT RANK WORLD_SIZE LOCAL_RANK
recorded=(64 128 256) all=(64 128 192 256)

for p in 1 2 3; do TUNELOCK_MODE=pinned "$program" "${all[@]}" >"untuned.$p" 2>&1; done
grep -q "pinned config ATOMIC=1.* of kernel 'check.gpu.gemm' .*gave different bits" untuned.1 ||
  { cat untuned.1; echo "FAIL: the first pinned call's check did not name the racy config"; exit 1; }
echo "no table, 3 pinned processes (the racy cheapest is kept, and named):"
for m in "${all[@]}"; do
  echo "  shape $m: $(grep -h "^shape $m:" untuned.* | awk '{print $NF}' | sort -u | wc -l) distinct output(s)"
done

TUNELOCK_RECORD=rec/run "$tunelock" launch -n 3 -- "$program" "${recorded[@]}" >record.out 2>&1 ||
  { cat record.out; echo "FAIL: record"; exit 1; }
"$tunelock" merge rec/run.rank*.json -o table.json >/dev/null
arch=$(sed -nE 's/.*"arch": "(sm[0-9]+)".*/\1/p' table.json | head -1)
mkdir tables && mv table.json "tables/$arch.json"
grep -A3 '"nondeterministic"' "tables/$arch.json" | grep -q 'ATOMIC=1' ||
  { cat "tables/$arch.json"; echo "FAIL: merge did not flag the racy config"; exit 1; }

for p in 1 2 3 4; do
  TUNELOCK_MODE=pinned TUNELOCK_TABLE_PATH=tables "$program" "${all[@]}" >"pinned.$p" 2>&1 ||
    { cat "pinned.$p"; echo "FAIL: pinned run"; exit 1; }
done
if grep -q "ATOMIC=1" pinned.*; then echo "FAIL: a pinned run chose the racy config"; exit 1; fi
echo "with the merged table, 4 pinned processes:"
for m in "${all[@]}"; do
  distinct=$(grep -h "^shape $m:" pinned.* | awk '{print $NF}' | sort -u | wc -l)
  echo "  shape $m: $distinct distinct output(s) ($(grep -h "^shape $m:" pinned.1 | cut -d' ' -f3))"
  [[ $distinct == 1 ]] || { echo "FAIL: shape $m differs across pinned processes"; exit 1; }
done
echo "ok: the racy cheapest is named without a table, flagged by record -> merge, and never pinned"
