"""TUNELOCK_MODE=audit with the stand-in Triton: the run launches what
pinned launches (same bits, same choice log) and its first call per key
times every live config and runs the bits audit; `tunelock.audit` then
reports each entry's regret against the fastest config, weighted by calls.
The stand-in's benchmark returns fixed times, so the regret is exact."""
import json

import pytest

import tunelock
import tunelock.triton as tt
from kernels import EQUIVALENT_MS, config_of, make_warps_autotuner
from test_equivalent import record_merge, run_once

KEY = "n=4096|torch.float32|torch.float32"
KERNEL = "demo.kernels.row_sum"


def slow_table(tmp_path, monkeypatch):
    """A table recorded and merged here, its entry swapped for the slow
    config of the fast one's bit class (BLOCK 64, 1 warp: 1.00 ms vs 0.40)."""
    table_file = record_merge(tmp_path, monkeypatch)
    table = json.loads(table_file.read_text())
    entry = table["kernels"][KERNEL][KEY]
    fast = config_of(entry)
    table["kernels"][KERNEL][KEY] = {**entry["equivalent"][0], "equivalent": [fast]}
    table_file.write_text(json.dumps(table))
    return tmp_path / "tables"


def test_audit_launches_what_pinned_launches_and_reports_the_exact_regret(tmp_path, monkeypatch):
    tables = slow_table(tmp_path, monkeypatch)
    runs = {}
    for mode in ("pinned", "audit"):
        tt.install(mode=mode, table_path=[str(tables)], on_miss="error",
                   record_path=str(tmp_path / "audit"))
        tuner, kernel, bench = make_warps_autotuner()
        results = [run_once(tuner) for _ in range(4)]
        runs[mode] = (results, tunelock.choice_digest(), [l["num_warps"] for l in kernel.launches[-4:]],
                      bench.calls)
        tunelock.flush()
    assert runs["audit"][:3] == runs["pinned"][:3]  # same bits, digest and launches
    assert runs["pinned"][3] == 0 and runs["audit"][3] == len(EQUIVALENT_MS)  # every config, once
    audit_file = tmp_path / "audit.rank0.audit.json"
    assert audit_file.exists()
    report = tunelock.audit(str(audit_file))
    (row,) = report["rows"]
    assert row["kernel"] == KERNEL and row["key"] == KEY and row["calls"] == 4
    assert row["pinned"] == "BLOCK=64;warps=1;stages=2" and row["fastest"] == "BLOCK=64;warps=2;stages=2"
    assert row["regret_pct"] == pytest.approx(150.0)  # 1.00 ms against 0.40
    assert row["equivalent_differs"] == [] and row["bits_changed"] is False
    assert report["total_regret_pct"] == pytest.approx(150.0)
    assert report["exit_code"] == 1 and "over the limit" in report["text"]
    assert tunelock.audit([str(audit_file)], max_regret=151)["exit_code"] == 0
    # An entry whose pinned config was never measured fails the gate at any limit.
    edited = json.loads(audit_file.read_text())
    for entry in edited["entries"]:
        entry["candidates"] = []
    unmeasured = tmp_path / "edited.rank0.audit.json"
    unmeasured.write_text(json.dumps(edited))
    report = tunelock.audit(str(unmeasured), max_regret=1000)
    assert report["unmeasured"] == 1 and report["exit_code"] == 1
    assert "regret unknown: the pinned config was not measured" in report["text"]


def test_audit_needs_a_record_prefix_and_bad_arguments_are_refused(tmp_path):
    with pytest.raises(tunelock.TunelockError, match="mode 'audit' needs a record path"):
        tt.install(mode="audit")
    with pytest.raises(ValueError, match="tunelock.audit: max_regret"):
        tunelock.audit(str(tmp_path / "x.json"), max_regret=-1)
    with pytest.raises(TypeError, match="tunelock.audit: max_regret"):
        tunelock.audit(str(tmp_path / "x.json"), max_regret="5")
    (tmp_path / "bad.audit.json").write_text('{"format_version": 1, "entries": [{"arch": 1}]}')
    with pytest.raises(tunelock.TunelockError, match=r"bad.audit.json: entries\[0\].arch"):
        tunelock.audit(str(tmp_path / "bad.audit.json"))


def test_the_call_plan_is_the_engines(tmp_path):
    tt.install(mode="audit", record_path=str(tmp_path / "a"))
    assert tunelock.call_plan("demo.kernels", "row_sum", 4) == "audited"
    assert tunelock.call_plan("demo.kernels", "row_sum", 1) == "single_logged"
    tt.install(mode="record", record_path=str(tmp_path / "a"), modules=["other"])
    assert tunelock.call_plan("demo.kernels", "row_sum", 4) == "untouched"
    tt.install(mode="auto")
    assert tunelock.call_plan("demo.kernels", "row_sum", 4) == "untouched"
    assert tunelock.call_plan("demo.kernels", "row_sum", 1) == "single"
    tt.install(mode="auto", verify_every=10)
    assert tunelock.call_plan("demo.kernels", "row_sum", 4) == "timed_logged"
