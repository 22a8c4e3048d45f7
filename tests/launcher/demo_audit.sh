#!/usr/bin/env bash
# TUNELOCK_MODE=audit on the host demo with a deliberately slow table
# entry (demo.ops.sgd_update pinned to PASSES=4, the same bits as PASSES=1
# at about four times the work): the audit run gives the pinned run's choice
# digest and output checksum, and `tunelock table audit` names the entry's
# regret and exits 1.
#
# With --compare (make bench) it also measures the per-call ratio of the two
# configs in a separate record run and fails unless the audit's regret is
# within 20% of it: a timing check, so never part of `make test`.
set -euo pipefail
demo=$(realpath "$1") tunelock=$(realpath "$2") compare=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
unset TUNELOCK_MODE TUNELOCK_RECORD TUNELOCK_CHAOS TUNELOCK_TABLE_PATH TUNELOCK_CHOICE_LOG RANK WORLD_SIZE
fail() { echo "FAIL: $*"; exit 1; }

TUNELOCK_RECORD=rec/run "$demo" >/dev/null 2>&1
"$tunelock" merge rec/run.rank0.json -o tables/host.json >/dev/null
# The slow config in the entry's place, the fast one as its equivalent.
python3 - <<'PY'
import json
table = json.load(open("tables/host.json"))
(key, entry), = table["kernels"]["demo.ops.sgd_update"].items()
configs = [{k: v for k, v in c.items() if k not in ("equivalent", "ties", "faster_equivalents")}
           for c in [entry] + entry.get("equivalent", [])]
by_passes = {c["kwargs"]["PASSES"]: c for c in configs}
assert set(by_passes) == {1, 4}, f"record found PASSES 1 and 4 bit-identical, got {set(by_passes)}"
table["kernels"]["demo.ops.sgd_update"][key] = {**by_passes[4], "equivalent": [by_passes[1]]}
json.dump(table, open("tables/host.json", "w"))
PY

summary() { grep -E '^(choices|checksum)'; }
pinned=$(TUNELOCK_MODE=pinned TUNELOCK_TABLE_PATH=tables "$demo" 2>/dev/null | summary)
audited=$(TUNELOCK_MODE=audit TUNELOCK_TABLE_PATH=tables TUNELOCK_RECORD=aud/run "$demo" 2>/dev/null | summary)
echo "pinned:  $pinned" | tr '\n' ' '; echo
echo "audited: $audited" | tr '\n' ' '; echo
[[ $pinned == "$audited" ]] || fail "the audit run launched other bits or logged other choices"
[[ -f aud/run.rank0.audit.json ]] || fail "no audit file"

status=0
"$tunelock" table audit aud/run.rank0.audit.json >report.txt || status=$?
cat report.txt
[[ $status == 1 ]] || fail "table audit exited $status, expected 1 (a slow entry)"
grep -q "pinned PASSES=4;warps=4;stages=1 (table)" report.txt || fail "the slow entry is not named"
grep -Eq "fastest PASSES=1;warps=4;stages=1: .*over the limit" report.txt ||
  fail "the slow entry's regret is not over the limit"
"$tunelock" table audit --json aud/run.rank0.audit.json >report.json || true
regret=$(python3 -c '
import json
rows = json.load(open("report.json"))["rows"]
print(next(r["regret_pct"] for r in rows if r["kernel"] == "demo.ops.sgd_update"))')
echo "audit regret of the slow entry: ${regret}%"

# The audit changes nothing when the table is right.
"$tunelock" merge rec/run.rank0.json -o tables/host.json >/dev/null
TUNELOCK_MODE=audit TUNELOCK_TABLE_PATH=tables TUNELOCK_RECORD=good/run "$demo" >/dev/null 2>&1
"$tunelock" table audit --max-regret 1000 good/run.rank0.audit.json >/dev/null ||
  fail "a freshly recorded table fails its audit"

if [[ $compare == --compare ]]; then
  TUNELOCK_RECORD=again/run "$demo" >/dev/null 2>&1
  python3 - "$regret" <<'PY'
import json, sys
audit_regret = float(sys.argv[1])
timed = json.load(open("again/run.rank0.timings.json"))["timings"]["host"]["demo.ops.sgd_update"]
(candidates,) = timed.values()
ms = {c["signature"].split(";")[0]: c["median_ms"] for c in candidates}
measured = 100 * (ms["PASSES=4"] / ms["PASSES=1"] - 1)
off = abs(audit_regret - measured) / measured
print(f"measured per-call: PASSES=4 {ms['PASSES=4']:.4f} ms, PASSES=1 {ms['PASSES=1']:.4f} ms: "
      f"{measured:.0f}% slower; the audit said {audit_regret:.0f}% ({100 * off:.0f}% apart)")
sys.exit(0 if off <= 0.2 else 1)
PY
fi
echo "ok: the audit run launched what pinned launched and named the slow entry"
