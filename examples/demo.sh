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

# ---- The host trainer on 4 ranks: record -> report -> merge -> pin + verify -> chaos ----
demo="$build/launcher/demo/tunelock-demo"
work="$build/demo-run"
rm -rf "$work" && mkdir -p "$work"
unset TUNELOCK_MODE TUNELOCK_RECORD TUNELOCK_CHAOS TUNELOCK_TABLE_PATH TUNELOCK_CHOICE_LOG TUNELOCK_VERIFY \
  TUNELOCK_VERIFY_STRICT RANK WORLD_SIZE
# One line per rank: its policy, choice digest and output checksum.
summary() { grep -E '(rank [0-9]/|choices:|checksum)' | sed -E 's/^\[rank ([0-9])\] /\1 /' |
  awk '{r=$1; $1=""; line[r]=line[r] $0} END {for (r in line) print "    rank " r ":" line[r]}' | sort |
  sed -E 's/ rank [0-9]\/4,//'; }

echo
echo "== tunelock-demo, record mode on 4 ranks: each rank times every candidate =="
TUNELOCK_RECORD="$work/rec/run" "$tunelock" launch -n 4 -- "$demo" --manifest "$work/candidates.json" | summary
echo "-- tunelock report: where the ranks' timed winners disagreed (clock noise)"
"$tunelock" report "$work"/rec/run.rank*.json | sed 's/^/    /'
echo "-- tunelock merge: one table, a pure function of the record files"
"$tunelock" merge "$work"/rec/run.rank*.json -o "$work/tables/host.json" | sed 's/^/    /'

echo
echo "== pinned on the merged table, verified across the 4 ranks over UCX, twice =="
for run in 1 2; do
  echo "  run $run:"
  TUNELOCK_MODE=pinned TUNELOCK_TABLE_PATH="$work/tables" TUNELOCK_VERIFY=2 \
    TUNELOCK_CHOICE_LOG="$work/logs/pinned$run" "$tunelock" launch -n 4 -- "$demo" | summary
done
echo "-- tunelock verify: the choice logs the pinned run left, checked offline"
"$tunelock" verify "$work"/logs/pinned1.rank*.json | sed 's/^/    /'

echo
echo "== chaos positive control with strict verification: every rank reports the conflict and fails =="
if TUNELOCK_MODE=pinned TUNELOCK_CHAOS=1 TUNELOCK_VERIFY=1 TUNELOCK_VERIFY_STRICT=1 \
   "$tunelock" launch -n 4 --grace 5 -- "$demo" >"$work/chaos.out" 2>&1; then
  echo "    chaos was NOT caught"; exit 1
fi
grep "differ across ranks" "$work/chaos.out" | grep -o '^\[rank [0-9]\]' | sort -u | wc -l |
  sed 's/^/    ranks reporting the conflict: /'
grep -m1 -A1 "differ across ranks" "$work/chaos.out" | sed 's/^/    /'

echo
echo "demo finished: decisions with their reasons, a 4-rank record -> merge -> pinned run"
echo "verified over UCX (equal digests in two runs), and the chaos control caught on"
echo "every rank (its errors above are the expected outcome). Files: $work"
