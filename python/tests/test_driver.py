"""The driver as the one public way in for a face: a runner of one's own
through tunelock.first_call, the Plan a face reads instead of names, the
adapter registry behind tunelock.install(), and the step hooks retired."""
import json
import logging
import os
import subprocess
import sys

import pytest

import tunelock
import tunelock._adapters as adapters

HERE = os.path.dirname(os.path.abspath(__file__))
CANDIDATES = [
    {"kwargs": {"BLOCK_M": 128, "BLOCK_N": 128}, "num_warps": 8, "num_stages": 3},
    {"kwargs": {"BLOCK_M": 64, "BLOCK_N": 64}, "num_warps": 4, "num_stages": 2},
]
CHEAPEST = 1


class ScriptedRunner(tunelock.Runner):
    """A face's runner: fixed timings; `racy` candidates give new bits on every run."""

    has_outputs = True

    def __init__(self, times, racy=(), failing=()):
        self.times, self.racy, self.failing = times, set(racy), set(failing)
        self.runs = 0
        self.asked = []

    def time(self, index):
        self.asked.append(index)
        if index in self.failing:
            raise RuntimeError("out of shared memory")
        return self.times[index]

    def run_outputs(self, index):
        self.runs += 1
        return b"%d" % (self.runs if index in self.racy else 0)


def first(runner, key="M=64", **policy):
    tunelock.install(**policy)
    return tunelock.first_call("sm90", "face", "mm", key, CANDIDATES, len(CANDIDATES), runner)


def test_a_pinned_first_call_chooses_without_the_clock_and_checks_the_bits():
    runner = ScriptedRunner([0.5, 2.0])
    outcome = first(runner, mode="pinned")
    assert outcome.plan == "pinned" and outcome.plan.engine_chooses
    assert outcome.launched == CHEAPEST and outcome.reason == "min_cost"
    assert runner.asked == [] and runner.runs == 2  # never timed; run twice for its bits
    assert not outcome.timed and outcome.audit_id is None and not outcome.provisional
    (entry,) = tunelock.choice_log().values()
    assert entry.endswith(";pinned")


def test_changed_bits_of_the_pinned_config_are_named(caplog):
    with caplog.at_level(logging.WARNING, logger="tunelock"):
        first(ScriptedRunner([0.5, 2.0], racy={CHEAPEST}), mode="pinned")
    assert "of kernel 'face.mm' [M=64] gave different bits in two runs" in caplog.text


def test_a_recorded_first_call_times_every_candidate_and_launches_the_fastest(tmp_path):
    runner = ScriptedRunner([0.5, 2.0])
    outcome = first(runner, mode="record", record_path=str(tmp_path / "rec"))
    assert outcome.plan == "timed_recorded" and not outcome.plan.engine_chooses
    assert outcome.launched == 0 and outcome.timed
    assert sorted(set(runner.asked)) == [0, 1]
    tunelock.flush()
    (record,) = [name for name in os.listdir(tmp_path) if name.endswith(".json")
                 and ".timings" not in name]
    assert "face.mm" in open(tmp_path / record).read()


def test_a_runner_that_raises_is_a_candidate_that_failed(caplog):
    with caplog.at_level(logging.WARNING, logger="tunelock"):
        outcome = first(ScriptedRunner([0.5, 2.0], failing={0}), mode="auto", verify_every=1)
    assert outcome.launched == 1
    assert "RuntimeError: out of shared memory" in caplog.text


def test_an_audited_plan_counts_calls_against_its_entry(tmp_path):
    outcome = first(ScriptedRunner([0.5, 2.0]), mode="audit", record_path=str(tmp_path / "aud"))
    assert outcome.plan == "audited" and outcome.plan.counts_calls
    assert isinstance(outcome.audit_id, int)
    tunelock.count_audited_call(outcome.audit_id, 3)


@pytest.mark.parametrize("mode, count, plan, chooses, intercepts, counts", [
    ("pinned", 4, "pinned", True, True, False),
    ("audit", 4, "audited", True, True, True),
    ("consensus", 4, "consensus", True, True, False),
    ("record", 4, "timed_recorded", False, True, False),
    ("pinned", 1, "single_logged", False, True, False),
    ("auto", 4, "untouched", False, False, False),
    ("auto", 1, "single", False, False, False),
])
def test_the_plan_says_what_it_means_so_no_face_compares_names(tmp_path, mode, count, plan,
                                                                chooses, intercepts, counts):
    policy = {"mode": mode}
    if mode in ("record", "audit", "consensus"):
        policy["record_path"] = str(tmp_path / "rec")
    tunelock.install(**policy)
    found = tunelock.call_plan("face", "mm", count)
    assert isinstance(found, tunelock.Plan) and found == plan
    assert (found.engine_chooses, found.intercepts, found.counts_calls) == (chooses, intercepts,
                                                                              counts)


def test_one_config_is_logged_by_the_driver_under_the_wildcard_key():
    tunelock.install(mode="pinned")
    outcome = tunelock.first_call("sm90", "face", "one", "*", CANDIDATES[:1], 1,
                                  tunelock.NothingToRun())
    assert outcome.plan == "single_logged" and outcome.launched == 0
    assert [k for k in tunelock.choice_log() if "|face.one|" in k and k.endswith("|*")]


def test_every_adapter_is_registered_once_in_one_place():
    assert [a.name for a in adapters.adapters()] == ["inductor", "triton"]
    assert {a.library for a in adapters.adapters()} == {"torch", "triton"}


def test_one_install_switches_on_every_present_adapter(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TUNELOCK_")}
    if "TUNELOCK_LIBRARY" in os.environ:
        env["TUNELOCK_LIBRARY"] = os.environ["TUNELOCK_LIBRARY"]
    env["TUNELOCK_MODE"] = "pinned"
    done = subprocess.run([sys.executable, os.path.join(HERE, "inductor_worker.py"),
                           "--via-tunelock"], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["patched"] == {"triton": True, "inductor": True}
    assert out["benchmarked"] == [] and len(out["log"]) == 2  # Inductor benchmarked nothing


def test_install_says_once_when_no_adapter_library_is_importable(monkeypatch, caplog):
    monkeypatch.setattr(adapters, "_importable", lambda library: False)
    monkeypatch.setattr(adapters, "_said_none_present", False)
    with caplog.at_level(logging.WARNING, logger="tunelock"):
        tunelock.install(mode="pinned")
        tunelock.install(mode="pinned")
    said = [r for r in caplog.records if "no adapter's library is importable" in r.getMessage()]
    assert len(said) == 1 and "torch for tunelock.inductor" in said[0].getMessage()
    assert tunelock.installed_policy().mode == "pinned"


def test_the_driver_is_the_only_way_in_and_names_its_bad_arguments():
    """The step hooks that told a first call in parts are retired, in Python
    and in the C ABI; the driver checks what they used to check."""
    for retired in ("pinned_choice", "log_choice", "record", "audit_key", "note_bits_check"):
        assert not hasattr(tunelock, retired) and retired not in tunelock.__all__
        assert not hasattr(tunelock._native.lib, f"tunelock_{retired}")
    tunelock.install(mode="pinned")
    with pytest.raises(ValueError, match=r"tunelock\.first_call: arch: 'sm 90' is not an "
                                         r"architecture tag"):
        tunelock.first_call("sm 90", "face", "mm", "M=1", CANDIDATES, 2, tunelock.NothingToRun())
    with pytest.raises(TypeError, match=r"tunelock\.first_call: runner: int has no time\(\)"):
        tunelock.first_call("sm90", "face", "mm", "M=1", CANDIDATES, 2, 5)
    assert tunelock.choice_log() == {}  # nothing was decided or logged
