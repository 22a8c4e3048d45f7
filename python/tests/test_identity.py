"""Tables that know their kernels' code, with the stand-in Triton: a record
carries the JIT function's cache key ("triton:<key>"), merge keeps it in the
table, a pinned run of an edited kernel names the mismatch (warn, strict,
ignore), and tunelock.coverage is the must-hit gate over a run's choice log."""
import json
import logging

import pytest

import tunelock
import tunelock.triton as tt
from kernels import Tensor, make_autotuner, mixed_values

N = 4096
KERNEL = "demo.kernels.row_sum"


def said(caplog):
    return "\n".join(r.getMessage() for r in caplog.records)


def run_once(tuner, n=N):
    x, out = Tensor(mixed_values(n)), Tensor([0.0])
    tuner.run(x, out, n)
    return out.values[0]


def record_merge(tmp_path, monkeypatch):
    monkeypatch.setattr(tt, "arch_tag", lambda: "sm90")
    tt.install(mode="record", record_path=str(tmp_path / "rec"))
    tuner, kernel, _ = make_autotuner()
    run_once(tuner)
    tunelock.flush()
    table_file = tmp_path / "tables" / "sm90.json"
    tunelock.merge([str(tmp_path / "rec.rank0.json")], str(table_file))
    return table_file, "triton:" + kernel.cache_key


def edited(tuner_and_kernel):
    """The same kernel after a library upgrade changed its body."""
    tuner, kernel, _ = tuner_and_kernel
    kernel.src += "    # changed upstream\n"
    return tuner


def test_the_record_and_the_table_carry_the_kernels_cache_key(tmp_path, monkeypatch):
    table_file, identity = record_merge(tmp_path, monkeypatch)
    sidecar = json.loads((tmp_path / "rec.rank0.timings.json").read_text())
    assert sidecar["identities"] == {"sm90": {KERNEL: identity}}
    assert json.loads(table_file.read_text())["identities"] == {KERNEL: identity}
    assert tunelock.table(table_file)["identities"] == {KERNEL: identity}


def test_an_edited_kernel_warns_once_fails_when_strict_and_is_quiet_when_ignored(
        tmp_path, monkeypatch, caplog):
    table_file, identity = record_merge(tmp_path, monkeypatch)
    tables = [str(table_file.parent)]
    with caplog.at_level(logging.WARNING, logger="tunelock"):
        tt.install(mode="pinned", table_path=tables)
        tuner = edited(make_autotuner())
        run_once(tuner)
        run_once(tuner, n=2048)  # another key of the same kernel: no second line
    lines = [line for line in said(caplog).splitlines() if "not the code its table" in line]
    assert len(lines) == 1, said(caplog)
    assert f"kernel {KERNEL} on sm90 is not the code its table entries were timed on" in lines[0]
    assert f"(table: {identity}, this run: triton:" in lines[0]
    assert "TUNELOCK_IDENTITY=ignore" in lines[0]

    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="tunelock"):
        tt.install(mode="pinned", table_path=tables, identity="ignore")
        run_once(edited(make_autotuner()))
        tt.install(mode="pinned", table_path=tables, identity="strict")
        run_once(make_autotuner()[0])  # the recorded code: nothing to say
    assert "not the code" not in said(caplog)

    tt.install(mode="pinned", table_path=tables, identity="strict")
    with pytest.raises(tunelock.TunelockError, match="TUNELOCK_IDENTITY=strict refuses it"):
        run_once(edited(make_autotuner()))


def test_coverage_names_a_key_the_table_does_not_answer(tmp_path, monkeypatch):
    table_file, _ = record_merge(tmp_path, monkeypatch)
    tt.install(mode="pinned", table_path=[str(table_file.parent)])
    tuner = make_autotuner()[0]
    run_once(tuner)
    tunelock.flush(str(tmp_path / "covered"))
    full = tunelock.coverage(table_file, [tmp_path / "covered.rank0.json"])
    assert full["covered"] and full["needed"] == 1 and full["answered"] == 1

    run_once(tuner, n=2048)  # a shape the record never saw
    tunelock.flush(str(tmp_path / "partial"))
    partial = tunelock.coverage(table_file, tmp_path / "partial.rank0.json")
    assert not partial["covered"]
    assert [(m["kernel"], m["key"], m["gap"]) for m in partial["misses"]] == [
        (KERNEL, "n=2048|torch.float32|torch.float32", "fallback")]
    with pytest.raises(tunelock.TunelockError, match="rec.rank0.json"):
        tunelock.coverage(table_file, tmp_path / "rec.rank0.json")  # a record, not a log
