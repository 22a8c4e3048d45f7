#!/usr/bin/env bash
# The must-hit gate on the demo: a table recorded for one shape covers a
# pinned run of that shape (exit 0) and names the keys of another shape the
# run had to fall back on (exit 1, per kernel, text and JSON); a choice log
# that is not one is refused (exit 2).
set -euo pipefail
tunelock=$1 demo=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
unset TUNELOCK_MODE TUNELOCK_RECORD TUNELOCK_TABLE_PATH TUNELOCK_CHOICE_LOG RANK WORLD_SIZE
fail() { echo "FAIL: $*"; exit 1; }

TUNELOCK_MODE=record TUNELOCK_RECORD=rec/run "$demo" --steps 1 >/dev/null 2>&1 || fail "record run"
"$tunelock" merge rec/run.rank0.json -o tables/host.json >/dev/null
# The table knows the matmul's code, and says so.
"$tunelock" table show tables/host.json | grep -q '^identity: demo.ops.matmul_splitk version:demo-matmul-1' ||
  fail "table show names no identity: $("$tunelock" table show tables/host.json)"
"$tunelock" launch -n 1 -- "$demo" --manifest manifest.json --steps 1 >/dev/null 2>&1 || fail "manifest"
"$tunelock" choose --table tables/host.json --candidates manifest.json --kernel demo.ops.matmul_splitk \
  --key 'M=64|N=64|K=384|f32|f32' --explain | grep -q 'timed on code version:demo-matmul-1' ||
  fail "choose --explain names no identity"
TUNELOCK_MODE=pinned TUNELOCK_TABLE_PATH=tables TUNELOCK_CHOICE_LOG=logs/same \
  "$demo" --steps 1 >/dev/null 2>&1 || fail "pinned run"
"$tunelock" table coverage tables/host.json logs/same.rank0.json >same.out ||
  fail "a run the table covers exits non-zero: $(cat same.out)"
grep -q "0 not" same.out || fail "$(cat same.out)"

# Another shape: the matmuls' keys have no entry.
TUNELOCK_MODE=pinned TUNELOCK_TABLE_PATH=tables TUNELOCK_CHOICE_LOG=logs/other \
  "$demo" --steps 1 --m 32 >/dev/null 2>&1 || fail "pinned run of another shape"
set +e
"$tunelock" table coverage tables/host.json logs/other.rank0.json >other.out
code=$?
"$tunelock" table coverage --json tables/host.json logs/other.rank0.json >other.json
json_code=$?
set -e
[[ $code == 1 && $json_code == 1 ]] || fail "uncovered keys exit $code/$json_code, expected 1: $(cat other.out)"
grep -q '^demo.ops.matmul_splitk$' other.out || fail "the kernel is not named: $(cat other.out)"
grep -q '\[M=32|N=64|K=384|f32|f32\] no entry: fell back' other.out || fail "$(cat other.out)"
python3 -c '
import json, sys
r = json.load(open("other.json"))
assert r["covered"] is False, r
assert any(m["kernel"] == "demo.ops.matmul_splitk" and m["gap"] == "fallback" for m in r["misses"]), r
' || fail "the JSON report: $(cat other.json)"

# Not a choice log: a clear error, exit 2.
set +e
"$tunelock" table coverage tables/host.json tables/host.json >bad.out 2>&1
code=$?
set -e
[[ $code == 2 ]] || fail "a table given as a log exits $code: $(cat bad.out)"
grep -q "tables/host.json" bad.out || fail "the bad file is not named: $(cat bad.out)"
echo "ok: covered run exits 0; another shape's keys named per kernel, exit 1; a bad log exits 2"
