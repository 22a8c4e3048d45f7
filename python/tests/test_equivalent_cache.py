"""TUNELOCK_EQUIVALENT=timed at what it saves, with the stand-in Triton: merge
lists an entry's equivalents fastest first, a pinned run times only the
entry and the two fastest of them (its tie set too), and remembers the pick
per machine in the equivalents cache, so the next runtime launches it
without timing; a corrupt or foreign cache file is named, never trusted and
never overwritten. Bits and digests stay those of plain pinned."""
import json
import logging
import os
import subprocess
import sys

import triton

import tunelock
import tunelock.triton as tt
from kernels import JITKernel, TableBench, Tensor, config_of, mixed_values, row_sum

N = 4096
KEY = "n=4096|torch.float32|torch.float32"
KERNEL = "demo.kernels.row_sum"
# One BLOCK (the same bits), five speeds.
WARPS_MS = {1: 1.00, 2: 0.40, 4: 0.50, 8: 0.60, 16: 0.70}


def make_tuner():
    kernel = JITKernel(row_sum)
    kernel.fn.__module__ = "demo.kernels"
    bench = TableBench(kernel, lambda launch: WARPS_MS[launch["num_warps"]])
    configs = [triton.Config({"BLOCK": 64}, num_warps=w, num_stages=2) for w in WARPS_MS]
    return (triton.Autotuner(kernel, ["x", "out", "n"], configs, ["n"], ["out"], None,
                             do_bench=bench), kernel, bench)


def run_once(tuner):
    x, out = Tensor(mixed_values(N)), Tensor([0.0])
    tuner.run(x, out, N)
    return out.values[0]


def said(caplog):
    return "\n".join(r.getMessage() for r in caplog.records)


def pinned_slowest(tmp_path, monkeypatch):
    """A recorded table whose entry is pinned to the slowest-but-one config."""
    monkeypatch.setattr(tt, "arch_tag", lambda: "sm90")
    tt.install(mode="record", record_path=str(tmp_path / "rec"))
    run_once(make_tuner()[0])
    tunelock.flush()
    table_file = tmp_path / "tables" / "sm90.json"
    tunelock.merge([str(tmp_path / "rec.rank0.json")], str(table_file))
    table = json.loads(table_file.read_text())
    entry = table["kernels"][KERNEL][KEY]
    # Merge lists the equivalents fastest first by the recorded medians.
    assert [e["num_warps"] for e in entry["equivalent"]] == [4, 8, 16, 1]
    fastest = config_of(entry)
    table["kernels"][KERNEL][KEY] = {**entry["equivalent"][2],  # warps=16
                                     "equivalent": [fastest] + entry["equivalent"][:2]
                                     + entry["equivalent"][3:]}
    table_file.write_text(json.dumps(table))
    return table_file


def pinned_run(table_file):
    return pinned_run_in(str(table_file.parent))


def pinned_run_in(tables):
    tt.install(mode="pinned", table_path=[tables], equivalent="timed")
    tuner, kernel, bench = make_tuner()
    result = run_once(tuner)
    run_once(tuner)
    assert tunelock.choice_log()[f"sm90|{KERNEL}|{KEY}"] == "BLOCK=64;warps=16;stages=2;pinned"
    return result, kernel.launches[-1]["num_warps"], bench.calls, tunelock.choice_digest()


def test_only_the_entry_and_the_two_fastest_equivalents_are_timed_and_the_pick_is_remembered(
        tmp_path, monkeypatch):
    table_file = pinned_slowest(tmp_path, monkeypatch)
    tt.install(mode="pinned", table_path=[str(table_file.parent)])
    plain = run_once(make_tuner()[0])
    plain_digest = tunelock.choice_digest()

    first = pinned_run(table_file)
    assert first[1:3] == (2, 3)  # warps 16, 2 and 4 timed (not 8, not 1); 2 launched
    tunelock.flush()
    cache = json.loads(open(os.environ["TUNELOCK_EQUIVALENT_CACHE"]).read())
    assert list(cache["picks"].values()) == ["BLOCK=64;warps=2;stages=2"]

    second = pinned_run(table_file)  # a fresh runtime state reads the machine's pick
    assert second[1:3] == (2, 0)  # launched untimed
    assert first[0] == second[0] == plain and first[3] == second[3] == plain_digest


def test_a_second_process_on_the_machine_launches_the_first_ones_pick_untimed(
        tmp_path, monkeypatch):
    table_file = pinned_slowest(tmp_path, monkeypatch)
    worker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "equivalent_cache_worker.py")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path),
           "TUNELOCK_EQUIVALENT_CACHE": str(tmp_path / "machine" / "equivalents.json")}
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, worker, str(table_file.parent)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stdout
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert [(r["warps"], r["calls"]) for r in runs] == [(2, 3), (2, 0)]
    assert runs[0]["result"] == runs[1]["result"] and runs[0]["digest"] == runs[1]["digest"]


def test_a_corrupt_or_foreign_cache_is_named_ignored_and_left_as_it_is(
        tmp_path, monkeypatch, caplog):
    table_file = pinned_slowest(tmp_path, monkeypatch)
    cache = os.environ["TUNELOCK_EQUIVALENT_CACHE"]
    for text in ("{not json", table_file.read_text(),
                 json.dumps({"format": "tunelock equivalent cache", "format_version": 1,
                             "picks": {"k": 3}})):
        with open(cache, "w") as f:
            f.write(text)
        tt.install(mode="auto")  # a fresh runtime state: the cache is read again
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="tunelock"):
            result = pinned_run(table_file)
            tunelock.flush()
        assert result[1:3] == (2, 3), text  # timed again, the cache never trusted
        assert f"{cache}" in said(caplog) and "the equivalents cache is ignored" in said(caplog)
        assert open(cache).read() == text  # nothing lost
