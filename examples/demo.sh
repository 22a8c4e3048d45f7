#!/usr/bin/env bash
# `make demo`: what tunelock decides for each kernel call in demo-calls.tsv,
# from the example table and candidate manifest, with the reason for each.
set -euo pipefail
build=${1:?usage: demo.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
tunelock="$build/cli/tunelock"

echo "== pinned decisions on sm90 from examples/tables/sm90.json =="
while IFS=$'\t' read -r kernel key what; do
  [[ -z $kernel || $kernel == \#* ]] && continue
  "$tunelock" choose --candidates "$here/candidates.json" --table "$here/tables" --arch sm90 \
    --kernel "$kernel" --key "$key"
  echo "    ^ $what"
done <"$here/demo-calls.tsv"

echo
echo "== block-size override BLOCK_SIZE=2048 beats the cheapest =="
"$tunelock" choose --candidates "$here/candidates.json" --table "$here/tables" --arch sm90 \
  --kernel demo.ops.softmax --key 'N=4096|f32' --block BLOCK_SIZE=2048

echo
echo "== chaos positive control: ranks 0..3 choose differently on purpose =="
for rank in 0 1 2 3; do
  printf 'rank %s: ' "$rank"
  "$tunelock" choose --candidates "$here/candidates.json" --kernel demo.ops.matmul \
    --key 'M=4096|N=4096|K=1024|bf16|bf16' --chaos --rank "$rank" --json
done

# ---- The host trainer: record -> merge -> pin -> reproduce -> chaos ----
demo="$build/launcher/demo/tunelock-demo"
work="$build/demo-run"
rm -rf "$work" && mkdir -p "$work"
unset TUNELOCK_MODE TUNELOCK_RECORD TUNELOCK_CHAOS TUNELOCK_TABLE_PATH TUNELOCK_CHOICE_LOG RANK WORLD_SIZE
summary() { grep -E '^(rank|choices|checksum)' | paste -sd' ' | sed 's/^/    /'; }

echo
echo "== tunelock-demo, record mode: two ranks time every candidate (choices may differ) =="
for rank in 0 1; do
  RANK=$rank WORLD_SIZE=2 TUNELOCK_RECORD="$work/rec/run" "$demo" | summary
done
echo "-- tunelock report: where the ranks' timed winners disagreed"
"$tunelock" report "$work"/rec/run.rank*.json | sed 's/^/    /'
echo "-- tunelock merge: one table, a pure function of the record files"
"$tunelock" merge "$work"/rec/run.rank*.json -o "$work/tables/host.json" | sed 's/^/    /'

echo
echo "== pinned twice on the merged table: same digest, same checksum =="
for run in 1 2; do
  TUNELOCK_MODE=pinned TUNELOCK_TABLE_PATH="$work/tables" "$demo" | summary
done

echo
echo "== chaos positive control, ranks 0 and 1 of 2: different choices, caught by verify =="
for rank in 0 1; do
  TUNELOCK_MODE=pinned TUNELOCK_CHAOS=1 RANK=$rank WORLD_SIZE=2 TUNELOCK_CHOICE_LOG="$work/chaos" "$demo" | summary
done
"$tunelock" verify "$work"/chaos.rank*.json | sed 's/^/    /' || echo "    (tunelock verify exited $? : the divergence was caught)"
