"""The engine from Python: the same policy sources, rules, formats and
messages as the C++ library and the CLI."""
import json
import os
import re
import subprocess
import sys

import pytest

import tunelock

CANDIDATES = [
    {"kwargs": {"BLOCK_M": 128, "BLOCK_N": 128}, "num_warps": 8, "num_stages": 3},
    {"kwargs": {"BLOCK_M": 64, "BLOCK_N": 64}, "num_warps": 4, "num_stages": 2},
]


class Timed(tunelock.Runner):
    """A runner whose candidates take these milliseconds and, with `runs`,
    whose successive runs of candidate i name their bits runs[i][0], [1], ..."""

    def __init__(self, *median_ms, runs=None):
        self.median_ms, self.runs = median_ms, runs
        self.has_outputs = runs is not None
        self.ran = [0] * len(median_ms)

    def time(self, index):
        return self.median_ms[index]

    def run_outputs(self, index):
        bits = self.runs[index][min(self.ran[index], len(self.runs[index]) - 1)]
        self.ran[index] += 1
        return bits.encode()


def first_call(runner, key="M=1"):
    """The driver's first call of pkg.mm at `key` over CANDIDATES."""
    return tunelock.first_call("sm90", "pkg", "mm", key, CANDIDATES, len(CANDIDATES), runner)


def test_policy_from_keywords_is_validated_and_resolved_by_the_engine():
    policy = tunelock.Policy(mode="pinned", block_sizes={"BLOCK_M": 64}, modules=["a.b", "c"])
    assert policy.mode == "pinned"
    assert policy.block_sizes == {"BLOCK_M": 64}
    assert policy.modules == ["a.b", "c"]
    assert policy.intercepts is True


@pytest.mark.parametrize("fields, message", [
    ({"mode": "bogus"}, "mode"),
    ({"on_miss": "panic"}, "on_miss"),
    ({"block_sizes": {"WARPS": 4}}, "BLOCK"),
    ({"mode": "record"}, "record"),
    ({"verify_evry": 3}, "verify_evry"),
])
def test_bad_policy_fields_raise_the_engines_message(fields, message):
    with pytest.raises(tunelock.TunelockError) as error:
        tunelock.Policy(**fields)
    assert message in str(error.value)


def test_policy_from_environment_reads_the_same_variables(monkeypatch):
    monkeypatch.setenv("TUNELOCK_MODE", "pinned")
    monkeypatch.setenv("MCORE_AUTOTUNE_ON_MISS", "error")
    monkeypatch.setenv("TUNELOCK_BLOCK_M", "64")
    policy = tunelock.Policy.from_environment()
    assert (policy.mode, policy.on_miss, policy.block_sizes) == ("pinned", "error", {"BLOCK_M": 64})
    monkeypatch.setenv("TUNELOCK_MODDE", "pinned")
    with pytest.raises(tunelock.TunelockError, match="TUNELOCK_MODDE"):
        tunelock.Policy.from_environment()


@pytest.mark.parametrize("name, value, words", [
    ("TUNELOCK_VERIFY_TRANSPORT", "nccl2", "invalid value 'nccl2'; allowed: auto, ucx, group"),
    ("TUNELOCK_WATCH_VERIFY", "2", "invalid value '2'"),
    ("TUNELOCK_NONDETERMINISTIC", "|", "'|' names no config"),
    ("TUNELOCK_LOG_LEVEL", "loud",
     "invalid value 'loud'; allowed: trace, debug, info, warn, error, critical, off"),
])
def test_bad_values_of_every_variable_are_refused_at_start_with_the_engines_words(
        monkeypatch, name, value, words):
    monkeypatch.setenv(name, value)
    with pytest.raises(tunelock.TunelockError, match=f"{name}: .*{re.escape(words)}"):
        tunelock.Policy.from_environment()


def test_an_unwritable_record_path_fails_install_and_keeps_the_previous_policy(tmp_path):
    tunelock.install(mode="pinned")
    blocked = tmp_path / "file"
    blocked.write_text("")
    with pytest.raises(tunelock.TunelockError):
        tunelock.install(mode="record", record_path=str(blocked / "sub" / "rec"))
    assert tunelock.installed_policy().mode == "pinned"


def test_tuning_keys_are_built_as_the_engine_builds_them():
    assert tunelock.tuning_key([("M", 128), ("CAUSAL", False), ("name", "x")],
                               ["torch.bfloat16"]) == "M=128|CAUSAL=False|name=x|torch.bfloat16"


def test_choose_explains_with_the_rules_own_words():
    choice = tunelock.choose("pkg.mm", "M=1", candidates=CANDIDATES)
    assert (choice.index, choice.reason) == (1, "min_cost")
    assert choice.signature == "BLOCK_M=64,BLOCK_N=64;warps=4;stages=2"
    assert any("cheapest" in line for line in choice.explanation)
    assert tunelock.choose("pkg.mm", "M=1", candidates=CANDIDATES,
                           block_sizes={"BLOCK_M": 128}).reason == "block_sizes"
    with pytest.raises(tunelock.TunelockError, match="pkg.mm"):
        tunelock.choose("pkg.mm", "M=1", candidates=CANDIDATES, on_miss="error")


def test_choose_uses_a_table_file_and_chaos_is_rank_dependent(tmp_path):
    table = tmp_path / "sm90.json"
    table.write_text(json.dumps({"arch": "sm90", "kernels": {"mm": {"M=1": CANDIDATES[0]}}}))
    choice = tunelock.choose("pkg.mm", "M=1", candidates=CANDIDATES, tables=[table])
    assert (choice.index, choice.reason) == (0, "table")
    picks = {tunelock.choose("pkg.mm", "M=1", candidates=CANDIDATES, chaos=True, rank=r).index
             for r in range(2)}
    assert picks == {0, 1}


def test_tables_load_and_convert_both_ways(tmp_path):
    source = tmp_path / "sm90.json"
    source.write_text(json.dumps({"arch": "sm90", "kernels": {"k": {"*": CANDIDATES[1]}}}))
    tunelock.convert_table(str(source), str(tmp_path / "sm90.tlb"))
    assert tunelock.table(str(tmp_path / "sm90.tlb")) == tunelock.table(str(source))
    assert tunelock.table(str(source))["arch"] == "sm90"
    with pytest.raises(tunelock.TunelockError, match="nope.json"):
        tunelock.table(str(tmp_path / "nope.json"))


def test_file_kind_tells_each_file_as_the_engine_does(tmp_path):
    source = tmp_path / "sm90.json"
    source.write_text(json.dumps({"arch": "sm90", "kernels": {"k": {"*": CANDIDATES[1]}}}))
    tunelock.convert_table(str(source), str(tmp_path / "sm90.tlb"))
    assert tunelock.file_kind(source) == ("table", "json", None)
    assert tunelock.file_kind(tmp_path / "sm90.tlb") == tunelock.FileKind("table", "binary")
    manifest = tmp_path / "candidates.json"
    manifest.write_text(json.dumps({"kernels": {"pkg.mm": {"key": ["M"], "configs": CANDIDATES}}}))
    assert tunelock.file_kind(manifest).kind == "manifest"
    tunelock.install(mode="pinned")
    first_call(tunelock.NothingToRun())
    tunelock.flush(str(tmp_path / "log"))
    tunelock.install(mode="record", record_path=str(tmp_path / "rec"))
    first_call(Timed(0.5, 0.7))
    tunelock.flush()
    assert tunelock.file_kind(tmp_path / "rec.rank0.json").kind == "record"
    assert tunelock.file_kind(tmp_path / "rec.rank0.timings.json").kind == "timings"
    assert tunelock.file_kind(tmp_path / "log.rank0.json") == ("choice_log", "json", None)
    garbage = tmp_path / "notes.txt"
    garbage.write_text("not a tunelock file")
    unknown = tunelock.file_kind(garbage)
    assert (unknown.kind, unknown.encoding) == ("unknown", None)
    assert unknown.problem.startswith(f"{garbage}: not a tunelock file")
    with pytest.raises(tunelock.TunelockError, match="nope.json"):
        tunelock.file_kind(tmp_path / "nope.json")


def test_pinned_choices_are_logged_once_and_digested(tmp_path):
    tunelock.install(mode="pinned")
    first = first_call(tunelock.NothingToRun())
    again = first_call(tunelock.NothingToRun())
    assert first == again and first.reason == "min_cost" and first.plan == "pinned"
    assert tunelock.choice_log() == {"sm90|pkg.mm|M=1": "BLOCK_M=64,BLOCK_N=64;warps=4;stages=2;pinned"}
    digest = tunelock.choice_digest()
    assert len(digest) == 32
    tunelock.flush(str(tmp_path / "log"))
    dumped = json.loads((tmp_path / "log.rank0.json").read_text())
    assert dumped["digest"] == digest


def test_record_merge_and_report_as_the_cli_does(tmp_path):
    tunelock.install(mode="record", record_path=str(tmp_path / "rec"))
    # The second candidate's two runs differ: flagged nondeterministic.
    first_call(Timed(0.5, 0.7, runs=[["1", "1"], ["2", "3"]]))
    tunelock.flush()
    records = [str(tmp_path / "rec.rank0.json")]
    merged = tunelock.merge(records, str(tmp_path / "sm90.json"))
    assert (merged["arch"], merged["entries"]) == ("sm90", 1)
    report = tunelock.report(records)
    assert report["disagreements"][0]["nondeterministic"] == ["BLOCK_M=64,BLOCK_N=64;warps=4;stages=2"]
    assert tunelock.choose("pkg.mm", "M=1", candidates=CANDIDATES,
                           tables=[str(tmp_path / "sm90.json")]).index == 0


def test_merge_and_report_take_a_directory_of_records_as_the_cli_does(tmp_path):
    """A folder of `<run>.rank<N>.json` records (sidecars beside them) is
    expanded as `tunelock merge rec -o out` expands it."""
    (tmp_path / "rec").mkdir()
    for rank, winner in ((0, 0), (1, 0), (2, 1)):
        tunelock.install(mode="record", record_path=str(tmp_path / "run"))
        first_call(Timed(0.5 + winner, 1.0 - winner * 0.9))
        tunelock.flush()
        # One process plays every rank: the sidecar's own rank is left out,
        # so the reader takes each rank from its file's name.
        sidecar = json.loads((tmp_path / "run.rank0.timings.json").read_text())
        del sidecar["rank"]
        (tmp_path / "rec" / f"run.rank{rank}.timings.json").write_text(json.dumps(sidecar))
        (tmp_path / "run.rank0.json").rename(tmp_path / "rec" / f"run.rank{rank}.json")
        tunelock.install(mode="auto")  # a new policy: the next rank records afresh
    merged = tunelock.merge([str(tmp_path / "rec")], str(tmp_path / "sm90.json"))
    assert (merged["arch"], merged["entries"]) == ("sm90", 1)
    votes = tunelock.report([str(tmp_path / "rec")])["disagreements"][0]["winners"]
    assert sorted(w["votes"] for w in votes) == [1, 2]  # all three ranks read
    (tmp_path / "empty").mkdir()
    with pytest.raises(tunelock.TunelockError, match="empty: a directory with no record files"):
        tunelock.merge([str(tmp_path / "empty")], str(tmp_path / "x.json"))


def test_verify_alone_agrees_and_maybe_verify_follows_the_cadence():
    tunelock.install(mode="pinned", verify_every=2)
    first_call(tunelock.NothingToRun())
    assert tunelock.maybe_verify(1) is None
    assert tunelock.maybe_verify(2) is True


def test_the_library_loads_in_a_fresh_interpreter_and_reports_its_version():
    code = "import tunelock; print(tunelock.version())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip()[0].isdigit()


def test_autotune_configs_reduces_an_in_tree_kernels_list_only_when_pinned():
    """Megatron's selection.autotune_configs: a kernel decorated with no
    autotuner to intercept gets one config under pinned (the block-size
    match, else the cheapest), every config otherwise."""
    import triton
    configs = [triton.Config({"BLOCK": b}, num_warps=w, num_stages=2) for b, w in ((256, 8), (64, 2), (128, 4))]
    tunelock.install(mode="auto")
    assert tunelock.autotune_configs(configs) == configs
    tunelock.install(mode="pinned")
    assert tunelock.autotune_configs(configs) == [configs[1]]  # the cheapest, the same object
    tunelock.install(mode="pinned", block_sizes={"BLOCK": 128})
    assert tunelock.autotune_configs(configs) == [configs[2]]
    assert tunelock.autotune_configs([]) == []
    with pytest.raises(TypeError, match="autotune_configs: configs"):
        tunelock.autotune_configs("BLOCK=64")
    tunelock.install(mode="auto")
