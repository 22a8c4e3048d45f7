#!/usr/bin/env bash
# Verification across real processes on loopback, for 2, 4 and 8 ranks.
set -uo pipefail
tunelock=$1 rank_program=$2 demo=$3
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

run() {  # run N SCENARIO -> sets out and code
  out=$("$tunelock" launch -n "$1" --grace 2 -- "$rank_program" "$2" 2>&1); code=$?
}
count() { grep -c "$1" <<<"$out"; }

for n in 2 4 8; do
  run "$n" agree
  [[ $code == 0 && $(count "agreed, $((n * 10)) then 0 entries compared") == "$n" ]] || fail "agree n=$n: $out"
  run "$n" conflict
  others=$(seq -s, 0 $((n - 1)) | sed 's/^0,1,/0,/; s/^0,1$/0/')
  [[ $code == 0 && $(count ": DIFFER 1 conflict(s)") == "$n" && \
     $(count "host|t.ops.mm|M=1: 'BLOCK_M=128;warps=8;stages=3;pinned' on ranks\\? $others; 'BLOCK_M=64;warps=4;stages=3;pinned' on rank 1$") -ge "$n" ]] \
    || fail "conflict n=$n: $out"
  run "$n" disjoint
  [[ $code == 0 && $(count ": agreed") == "$n" ]] || fail "disjoint n=$n: $out"
  run "$n" strict
  [[ $code == 3 && $(count "raised: autotune choices differ") == "$n" ]] || fail "strict n=$n: $out"
  run "$n" die
  survivors=$((n - 1))
  [[ $code != 0 && $(count "failed after [0-9.]* s: verify: lost rank(s) $((n - 1))") == "$survivors" ]] \
    || fail "die n=$n: $out"
  echo "ok: $n ranks"
done
run 4 subgroups
[[ $(count "group even of 2 agreed") == 2 && $(count "group odd of 2 DIFFER") == 2 ]] || fail "subgroups: $out"

# The demo across 4 ranks: pinned with verification agrees and digests match.
out=$(TUNELOCK_MODE=pinned TUNELOCK_VERIFY=1 "$tunelock" launch -n 4 -- "$demo" 2>&1); code=$?
digests=$(grep -o 'digest [0-9a-f]*' <<<"$out" | sort -u | wc -l)
[[ $code == 0 && $(count "choices agree across ranks") -ge 4 && $digests == 1 ]] || fail "demo pinned: $out"
# Chaos with strict verification: every rank reports the conflict and fails.
out=$(TUNELOCK_MODE=pinned TUNELOCK_CHAOS=1 TUNELOCK_VERIFY=1 TUNELOCK_VERIFY_STRICT=1 "$tunelock" launch -n 4 --grace 5 -- "$demo" 2>&1); code=$?
[[ $code != 0 && $(count "differ across ranks") -ge 4 ]] || fail "demo chaos: $out"
exit $failures
