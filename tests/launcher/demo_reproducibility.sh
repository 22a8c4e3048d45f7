#!/usr/bin/env bash
# Record -> merge -> two pinned runs give the same digest and checksum; the
# chaos control on ranks 0 and 1 gives different choices, which the offline
# verify catches.
set -euo pipefail
demo=$1 tunelock=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
unset TUNELOCK_MODE TUNELOCK_RECORD TUNELOCK_CHAOS TUNELOCK_TABLE_PATH RANK WORLD_SIZE

summary() { grep -E '^(choices|checksum)' ; }

TUNELOCK_RECORD=rec/run "$demo" >/dev/null 2>record.err
RANK=1 WORLD_SIZE=2 TUNELOCK_RECORD=rec/run "$demo" >/dev/null 2>>record.err
"$tunelock" merge rec/run.rank*.json -o tables/host.json >/dev/null
[[ -f rec/run.rank0.timings.json && -f rec/run.rank1.json ]] || { echo "FAIL: record files missing"; exit 1; }

first=$(TUNELOCK_MODE=pinned TUNELOCK_TABLE_PATH=tables "$demo" 2>pinned.err | summary)
# The demo's own kernels declare their outputs: no warning says a bits
# check cannot compare them.
if grep -h "declares no output buffers" record.err pinned.err; then
  echo "FAIL: a demo kernel declares no output buffers"; exit 1
fi
second=$(TUNELOCK_MODE=pinned TUNELOCK_TABLE_PATH=tables "$demo" | summary)
echo "pinned run 1: $first" | tr '\n' ' '; echo
echo "pinned run 2: $second" | tr '\n' ' '; echo
[[ $first == "$second" ]] || { echo "FAIL: pinned runs differ"; exit 1; }

# The pinned runs use the merged table: every choice is a table entry.
pinned_log=$(TUNELOCK_MODE=pinned TUNELOCK_TABLE_PATH=tables TUNELOCK_ON_MISS=error "$demo" | summary)
[[ $pinned_log == "$first" ]] || { echo "FAIL: on_miss=error run differs (a key missed the table)"; exit 1; }

TUNELOCK_MODE=pinned TUNELOCK_CHAOS=1 RANK=0 WORLD_SIZE=2 TUNELOCK_CHOICE_LOG=chaos "$demo" >/dev/null
TUNELOCK_MODE=pinned TUNELOCK_CHAOS=1 RANK=1 WORLD_SIZE=2 TUNELOCK_CHOICE_LOG=chaos "$demo" >/dev/null
if "$tunelock" verify chaos.rank0.json chaos.rank1.json >verify.out; then
  echo "FAIL: chaos ranks agreed"; cat verify.out; exit 1
fi
grep -q "differ across ranks" verify.out || { echo "FAIL: no conflict report"; exit 1; }
echo "ok: pinned runs reproduce; chaos ranks caught"
