"""Configs that give the same bits are interchangeable, with the stand-in
Triton: the record's audit sorts configs into bit classes (the call's
inputs and a seeded second input), merge lists the winner's class in its
entry, and TUNELOCK_EQUIVALENT=timed times within it while logging the
entry's config."""
import json

import tunelock
import tunelock.triton as tt
from kernels import Tensor, config_of, make_warps_autotuner, mixed_values

N = 4096
KEY = "n=4096|torch.float32|torch.float32"
KERNEL = "demo.kernels.row_sum"
SLOW, FAST = "BLOCK=64;warps=1;stages=2", "BLOCK=64;warps=2;stages=2"


def run_once(tuner):
    x, out = Tensor(mixed_values(N)), Tensor([0.0])
    tuner.run(x, out, N)
    return out.values[0]


def record_merge(tmp_path, monkeypatch):
    monkeypatch.setattr(tt, "arch_tag", lambda: "sm90")
    tt.install(mode="record", record_path=str(tmp_path / "rec"))
    run_once(make_warps_autotuner()[0])
    tunelock.flush()
    table_file = tmp_path / "tables" / "sm90.json"
    tunelock.merge([str(tmp_path / "rec.rank0.json")], str(table_file))
    return table_file


def test_record_finds_the_class_and_merge_lists_it(tmp_path, monkeypatch):
    table_file = record_merge(tmp_path, monkeypatch)
    sidecar = json.loads((tmp_path / "rec.rank0.timings.json").read_text())
    classes = {t["signature"]: t["class"] for t in sidecar["timings"]["sm90"][KERNEL][KEY]}
    assert classes[SLOW] == classes[FAST]
    assert len(set(classes.values())) == 3  # BLOCK 128 and 256 each their own bits
    entry = json.loads(table_file.read_text())["kernels"][KERNEL][KEY]
    assert entry["kwargs"] == {"BLOCK": 64} and entry["num_warps"] == 2
    assert [(e["kwargs"], e["num_warps"]) for e in entry["equivalent"]] == [({"BLOCK": 64}, 1)]
    assert entry["faster_equivalents"] == 0  # the winner was the fastest of its class
    report = tunelock.report([str(tmp_path / "rec.rank0.json")])
    assert report["disagreements"][0]["equivalent"] == [SLOW]


def test_timed_equivalents_give_plain_pinneds_bits_and_digest_at_the_fast_configs_speed(
        tmp_path, monkeypatch):
    table_file = record_merge(tmp_path, monkeypatch)
    table = json.loads(table_file.read_text())
    entry = table["kernels"][KERNEL][KEY]
    fast = config_of(entry)
    table["kernels"][KERNEL][KEY] = {**entry["equivalent"][0], "equivalent": [fast]}  # pin the slow
    table_file.write_text(json.dumps(table))

    results, digests, launched = [], [], []
    for equivalent in ("off", "timed"):
        tt.install(mode="pinned", table_path=[str(tmp_path / "tables")], on_miss="error",
                   equivalent=equivalent)
        tuner, kernel, bench = make_warps_autotuner()
        results.append(run_once(tuner))
        results.append(run_once(tuner))
        digests.append(tunelock.choice_digest())
        assert tunelock.choice_log()[f"sm90|{KERNEL}|{KEY}"] == SLOW + ";pinned"
        launched.append([launch["num_warps"] for launch in kernel.launches[-2:]])
        assert bench.calls == (2 if equivalent == "timed" else 0)  # the class, timed once
    assert len(set(results)) == 1 and len(set(digests)) == 1
    assert launched == [[1, 1], [2, 2]]  # plain pinned runs the slow config, timed the fast one


def pin_the_slow_config(table_file, **fields):
    """The table pins the slow config, its class holding the fast one."""
    table = json.loads(table_file.read_text())
    entry = table["kernels"][KERNEL][KEY]
    fast = config_of(entry)
    table["kernels"][KERNEL][KEY] = {**entry["equivalent"][0], "equivalent": [fast], **fields}
    table_file.write_text(json.dumps(table))


def test_an_entry_whose_record_timed_no_equivalent_faster_times_nothing(tmp_path, monkeypatch):
    pin_the_slow_config(record_merge(tmp_path, monkeypatch), faster_equivalents=0)
    tt.install(mode="pinned", table_path=[str(tmp_path / "tables")], on_miss="error",
               equivalent="timed")
    tuner, kernel, bench = make_warps_autotuner()
    run_once(tuner)
    run_once(tuner)
    assert bench.calls == 0  # not worth timing: launched as plain pinned launches it
    assert [launch["num_warps"] for launch in kernel.launches[-2:]] == [1, 1]


def test_equivalents_are_timed_briefly_where_the_autotuner_uses_tritons_benchmarker(
        tmp_path, monkeypatch):
    import triton.testing
    from tunelock._bits import BRIEF_REPEAT_MS, BRIEF_WARMUP_MS
    pin_the_slow_config(record_merge(tmp_path, monkeypatch), faster_equivalents=1)
    tt.install(mode="pinned", table_path=[str(tmp_path / "tables")], on_miss="error",
               equivalent="timed")
    tuner = make_warps_autotuner(own_bench=False)[0]
    del triton.testing.budgets[:]
    run_once(tuner)
    # The entry's config and its one faster equivalent, each timed briefly.
    assert triton.testing.budgets == [(BRIEF_WARMUP_MS, BRIEF_REPEAT_MS)] * 2
    assert "do_bench" not in vars(tuner)  # the autotuner's own benchmarker, untouched
    # Recording times as Triton does, with its own budget.
    tt.install(mode="record", record_path=str(tmp_path / "again"))
    del triton.testing.budgets[:]
    run_once(make_warps_autotuner(own_bench=False)[0])
    assert triton.testing.budgets == [(25, 100)] * 4
