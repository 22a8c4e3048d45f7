#!/usr/bin/env bash
# The host demo declares batch dims (matmul: M, sgd_update: N). Recorded
# under TUNELOCK_BATCH_INVARIANT=1 and merged, its table passes `tunelock
# table invariance` (exit 0, every batch-like kernel proven); a plain
# record's table fails it (exit 1, naming the split-K matmul unproven);
# pinned on the invariant table gives one checksum in fresh processes and
# from its binary form, and its strict row check passes;
# binary and JSON tables give one verdict; a table whose entry leaves its
# class is refused by name.
set -euo pipefail
demo=$(realpath "$1") tunelock=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
unset TUNELOCK_MODE TUNELOCK_RECORD TUNELOCK_CHAOS TUNELOCK_TABLE_PATH TUNELOCK_CHOICE_LOG RANK WORLD_SIZE
fail() { echo "FAIL: $*"; exit 1; }

TUNELOCK_BATCH_INVARIANT=1 TUNELOCK_RECORD=inv/run "$demo" >/dev/null 2>&1
"$tunelock" merge inv/run.rank0.json -o inv-tables/host.json >/dev/null
gate=$("$tunelock" table invariance inv-tables/host.json) || fail "invariant table failed the gate: $gate"
echo "$gate"
grep -q '^demo.ops.matmul_splitk: proven over M in {1, 2, 4' <<<"$gate" || fail "matmul not proven"
grep -q '^demo.ops.sgd_update: proven over N' <<<"$gate" || fail "sgd_update not proven"
grep -q '^demo.ops.reduce_sum: no batch dim' <<<"$gate" || fail "reduce_sum not named as having no batch dim"

"$tunelock" table convert inv-tables/host.json inv.tlb
[[ $("$tunelock" table invariance inv.tlb) == "$gate" ]] || fail "the binary table gives another verdict"

TUNELOCK_RECORD=plain/run "$demo" >/dev/null 2>&1
"$tunelock" merge plain/run.rank0.json -o plain-tables/host.json >/dev/null
set +e
plain=$("$tunelock" table invariance plain-tables/host.json)
status=$?
set -e
echo "$plain"
[[ $status == 1 ]] || fail "a plain record's table passed the gate (exit $status)"
grep -q '^demo.ops.matmul_splitk: unproven' <<<"$plain" || fail "the split-K matmul is not named"

# Pinned on the invariant table: the same bits in two fresh processes and
# from the binary table, and the first call's row check (row 0 alone
# against row 0 inside the call, strict) passes for every kernel. A record
# run is not compared: it launches its own fastest config, which may sit in
# another of the kernel's invariance groups.
summary() { grep -E '^checksum'; }
pinned() {
  TUNELOCK_BATCH_INVARIANT=1 TUNELOCK_MODE=pinned TUNELOCK_ON_MISS=error TUNELOCK_TABLE_PATH=$1 \
    TUNELOCK_CHECK_BITS=1 TUNELOCK_VERIFY_STRICT=1 "$demo" 2>&1
}
first=$(pinned inv-tables) || fail "pinned on the invariant table failed: $first"
second=$(pinned inv-tables | summary)
mkdir -p binary-tables && cp inv.tlb binary-tables/host.tlb
binary=$(pinned binary-tables | summary)
[[ -n $second && $(summary <<<"$first") == "$second" ]] ||
  fail "two pinned processes differ: $(summary <<<"$first") / $second"
[[ $binary == "$second" ]] || fail "the binary table gives other bits: $binary / $second"
! grep -q "not batch-invariant" <<<"$first" || fail "the row check failed: $first"

# An entry outside its class: refused by name, not used.
python3 - <<'PY'
import json
table = json.load(open("inv-tables/host.json"))
entries = table["kernels"]["demo.ops.matmul_splitk"]
key = next(iter(entries))
entries[key]["kwargs"]["SPLIT_K"] = 8
entries[key]["kwargs"]["BLOCK_N"] = 64
json.dump(table, open("bad.json", "w"))
PY
set +e
bad=$("$tunelock" table invariance bad.json 2>&1)
status=$?
set -e
[[ $status != 0 ]] || fail "a table whose entry leaves its class was read"
grep -q "invariance of demo.ops.matmul_splitk \[.*\]: the entry pins .*, outside its invariance class" <<<"$bad" ||
  fail "no clear message: $bad"
echo "ok: batch-invariant demo table proven; plain table fails the gate; bad class refused"
