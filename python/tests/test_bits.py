"""Pinned means the same bits, with the stand-in Triton: a kernel whose
fastest and cheapest config adds its partial sums in a run-dependent order
(as `tl.atomic_add` does). The record's audit flags it and it never wins;
merge files it in the table so every later key skips it; without a table
the first pinned call's check names it; a policy can declare it."""
import json

import pytest

import tunelock
import tunelock.triton as tt
from kernels import Tensor, make_racy_autotuner, mixed_values, racy_configs

N = 4096
RACY = "ATOMIC=1,BLOCK=64;warps=1;stages=2"
KERNEL = "demo.kernels.racy_row_sum"


def run_once(tuner, n=N):
    x, out = Tensor(mixed_values(n)), Tensor([0.0])
    tuner.run(x, out, n)
    return out.values[0]


def launched_atomic(kernel):
    return [launch for launch in kernel.launches if launch["ATOMIC"]]


def record_and_merge(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(tt, "arch_tag", lambda: "sm90")
    tt.install(mode="record", record_path=str(tmp_path / "rec"))
    tuner, kernel, bench = make_racy_autotuner()
    with caplog.at_level("WARNING", logger="tunelock"):
        run_once(tuner)
    tunelock.flush()
    return tuner, kernel, bench


def test_the_record_audit_flags_the_racy_config_and_it_never_wins(tmp_path, monkeypatch, caplog):
    tuner, kernel, bench = record_and_merge(tmp_path, monkeypatch, caplog)
    assert bench.calls == 3  # Triton still benchmarks every config
    assert f"config {RACY} of {KERNEL} [n=4096|torch.float32|torch.float32] gave different bits" \
        in caplog.text
    # Triton's fastest was the atomic config; the record's winner is the fastest that repeats.
    assert tuner.best_config.kwargs == {"BLOCK": 128, "ATOMIC": 0}
    assert kernel.launches[-1]["ATOMIC"] == 0  # this call's own result comes from the winner
    record = json.loads((tmp_path / "rec.rank0.json").read_text())
    (winner,) = record["sm90"][KERNEL].values()
    assert winner["kwargs"] == {"BLOCK": 128, "ATOMIC": 0}
    sidecar = json.loads((tmp_path / "rec.rank0.timings.json").read_text())
    (timed,) = sidecar["timings"]["sm90"][KERNEL].values()
    assert [t["signature"] for t in timed if t.get("nondeterministic")] == [RACY]
    report = tunelock.report([str(tmp_path / "rec.rank0.json")])
    assert report["disagreements"][0]["nondeterministic"] == [RACY]


def test_merge_files_it_and_pinned_runs_repeat_on_recorded_and_unseen_keys(tmp_path, monkeypatch,
                                                                            caplog):
    record_and_merge(tmp_path, monkeypatch, caplog)
    table_file = tmp_path / "tables" / "sm90.json"
    tunelock.merge([str(tmp_path / "rec.rank0.json")], str(table_file))
    assert json.loads(table_file.read_text())["nondeterministic"] == {KERNEL: [RACY]}
    for n in (N, 2048, 1024):  # recorded, and two keys the record never saw
        results = set()
        for _ in range(3):  # fresh "processes"
            tt.install(mode="pinned", table_path=[str(tmp_path / "tables")])
            tuner, kernel, bench = make_racy_autotuner()
            results.add(run_once(tuner, n))
            assert bench.calls == 0 and not launched_atomic(kernel)
        assert len(results) == 1


def test_without_a_table_the_first_pinned_call_names_the_racy_cheapest(caplog):
    tt.install(mode="pinned")
    tuner, kernel, _ = make_racy_autotuner()
    run_once(tuner)
    run_once(tuner)
    err = caplog.text
    assert f"pinned config {RACY} of kernel '{KERNEL}' [n=4096|torch.float32|torch.float32] " \
           "gave different bits in two runs" in err
    assert err.count("gave different bits") == 1  # once per key, then the cached choice
    assert "which is deterministic" not in err and "is not known to repeat its bits" in err
    assert len(kernel.launches) == 4  # two check runs, then two real launches: choice unchanged
    assert len(launched_atomic(kernel)) == 4


def test_strict_verification_makes_changed_bits_an_error():
    tt.install(mode="pinned", verify_strict=True)
    tuner, _, _ = make_racy_autotuner()
    with pytest.raises(tunelock.TunelockError, match="gave different bits"):
        run_once(tuner)


def test_check_bits_off_runs_the_pinned_config_once(caplog):
    tt.install(mode="pinned", check_bits=False)
    tuner, kernel, _ = make_racy_autotuner()
    run_once(tuner)
    assert len(kernel.launches) == 1
    assert "different bits" not in caplog.text


@pytest.mark.parametrize("declared", [{KERNEL: [racy_configs()[0]]},
                                      {"racy_row_sum": RACY},
                                      f"{KERNEL}@{RACY}"])
def test_a_declared_config_is_skipped_on_every_key(declared):
    tt.install(mode="pinned", nondeterministic=declared)
    assert tunelock.installed_policy().nondeterministic.endswith("@" + RACY)
    tuner, kernel, _ = make_racy_autotuner()
    for n in (N, 2048):
        run_once(tuner, n)
    assert kernel.launches and not launched_atomic(kernel)


def test_signatures_match_the_engines_and_bad_declarations_are_refused():
    assert tunelock.signature(racy_configs()[0]) == RACY
    with pytest.raises(tunelock.TunelockError, match="not KERNEL@SIGNATURE"):
        tt.install(mode="pinned", nondeterministic="no-at-sign")
    with pytest.raises(TypeError, match="nondeterministic"):
        tt.install(mode="pinned", nondeterministic=42)
