"""Configs that give the same bits are interchangeable, with the stand-in
Triton: the record's audit sorts configs into bit classes (the call's
inputs and a seeded second input), merge lists the winner's class in its
entry, and TUNELOCK_EQUIVALENT=timed times within it while logging the
entry's config."""
import json

import tunelock
import tunelock.triton as tt
from kernels import Tensor, make_warps_autotuner, mixed_values

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
    report = tunelock.report([str(tmp_path / "rec.rank0.json")])
    assert report["disagreements"][0]["equivalent"] == [SLOW]


def test_timed_equivalents_give_plain_pinneds_bits_and_digest_at_the_fast_configs_speed(
        tmp_path, monkeypatch):
    table_file = record_merge(tmp_path, monkeypatch)
    table = json.loads(table_file.read_text())
    entry = table["kernels"][KERNEL][KEY]
    fast = {k: v for k, v in entry.items() if k != "equivalent"}
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
