#!/usr/bin/env bash
# Consensus mode on 4 ranks of the demo whose clocks favour different matmul
# configs: identical bits on every rank at every step (before the first
# check too), the switch to one winner after it, the table merge would
# write, and a pinned run with that table repeating the post-switch bits.
set -euo pipefail
demo=$1 tunelock=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
unset TUNELOCK_MODE TUNELOCK_RECORD TUNELOCK_CHAOS TUNELOCK_TABLE_PATH TUNELOCK_CHOICE_LOG RANK WORLD_SIZE
fail() { echo "FAIL: $*"; exit 1; }

TUNELOCK_MODE=consensus TUNELOCK_RECORD=rec/run TUNELOCK_VERIFY=1 TUNELOCK_CHOICE_LOG=logs/c \
  "$tunelock" launch -n 4 -- "$demo" --skew-timings --hold-weights --steps 3 >run.out 2>&1 ||
  fail "consensus run: $(cat run.out)"

# Every step's lines (loss, weights checksum) are the same on the 4 ranks.
for step in 1 2 3; do
  for what in loss weights; do
    distinct=$(grep "step $step: $what" run.out | sed 's/^\[rank [0-9]\] //' | sort -u | wc -l)
    ranks=$(grep -c "step $step: $what" run.out)
    [[ $ranks == 4 && $distinct == 1 ]] || fail "step $step $what differs across ranks: $(grep "step $step: $what" run.out)"
  done
done
[[ $(grep -c "choices agree across ranks" run.out) == 12 ]] || fail "a check disagreed: $(cat run.out)"
step_line() { grep -m1 "step $1: weights" run.out | sed 's/^\[rank [0-9]\] //; s/^step [0-9]*: //'; }
# The first check switched the matmuls: step 1 ran the deterministic
# choice, steps 2 and 3 the winner.
[[ $(step_line 1) != "$(step_line 2)" ]] || fail "step 2 launched what step 1 did: no switch"
[[ $(step_line 2) == "$(step_line 3)" ]] || fail "steps 2 and 3 differ"

# The ranks' own clocks disagreed (rank 0 favours another config), and every
# rank's log names the same switch.
"$tunelock" report rec/run.rank*.json >report.out
grep -q "key(s) where ranks chose differently" report.out || fail "the skew made no disagreement: $(cat report.out)"
for r in 0 1 2 3; do
  [[ $(grep -c '"consensus|demo.ops.matmul_splitk|host|.* at check 0": "BLOCK_M=64,BLOCK_N=64,SPLIT_K=4;warps=8;stages=3;consensus"' logs/c.rank$r.json) == 2 ]] ||
    fail "rank $r logged no switch to the majority's config: $(cat logs/c.rank$r.json)"
done
[[ $(grep -c "consensus: wrote rec/run.tables/host.json" run.out) == 1 ]] || fail "the table was not written once: $(cat run.out)"

# The table is what tunelock merge writes from the ranks' record files.
"$tunelock" merge rec/run.rank*.json -o merged/host.json >/dev/null
cmp rec/run.tables/host.json merged/host.json || fail "the consensus table differs from merge's"

# A pinned run with it launches the winners from its first step: the bits
# of the consensus run's steps after the switch.
TUNELOCK_MODE=pinned TUNELOCK_TABLE_PATH=rec/run.tables TUNELOCK_ON_MISS=error \
  "$demo" --hold-weights --steps 1 >pinned.out 2>&1 || fail "pinned run: $(cat pinned.out)"
[[ "$(grep 'step 1: weights' pinned.out | sed 's/^step 1: //')" == "$(step_line 2)" ]] ||
  fail "the pinned run's bits differ from the consensus run's after the switch"
[[ "$(grep 'step 1: loss' pinned.out | sed 's/^step 1: //')" == \
   "$(grep -m1 'step 2: loss' run.out | sed 's/^\[rank [0-9]\] step 2: //')" ]] || fail "the pinned run's loss differs"
echo "ok: consensus run identical on 4 ranks at every step, switched after check 0, table = merge's, pinned repeats it"
