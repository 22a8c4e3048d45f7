"""Verify across ranks over torch.distributed (gloo): Python moves the
engine's bytes; the engine decides, over UCX bootstrapped through the group
(the default where built) or over the group's own collectives
(TUNELOCK_VERIFY_TRANSPORT=group). Skipped where torch is absent."""
import os
import socket
import subprocess
import sys

import pytest

pytest.importorskip("torch.distributed", reason="torch is not installed here")

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "verify_worker.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


GROUP = {"TUNELOCK_VERIFY_TRANSPORT": "group"}
UCX = {"TUNELOCK_VERIFY_TRANSPORT": "ucx"}


def run_ranks(policy, size=2):
    port = str(free_port())
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port,
           "WORLD_SIZE": str(size), "PYTHONPATH": os.pathsep.join(sys.path),
           "TUNELOCK_VERIFY_TIMEOUT": "120", **policy}
    ranks = [subprocess.Popen([sys.executable, WORKER], env={**env, "RANK": str(r)},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(size)]
    return [rank.communicate(timeout=300)[0] for rank in ranks]


def run_over_ucx(policy, size=2):
    """The ranks' outputs with the UCX transport, or a skip where this build has none."""
    outputs = run_ranks({**policy, **UCX}, size)
    if any("has no UCX" in out for out in outputs):
        pytest.skip("this build of tunelock has no UCX")
    return outputs


@pytest.mark.parametrize("transport", [GROUP, UCX], ids=["group", "ucx"])
def test_pinned_ranks_agree_over_torch_distributed(transport):
    outputs = (run_over_ucx if transport is UCX else run_ranks)({"TUNELOCK_MODE": "pinned",
                                                                 **transport})
    for out in outputs:
        assert "verify -> True" in out and "verify new -> True" in out, out
        assert f"over ucx {transport is UCX}" in out, out


@pytest.mark.parametrize("transport", [GROUP, UCX], ids=["group", "ucx"])
def test_chaos_is_caught_on_both_ranks_and_strict_raises(transport):
    outputs = (run_over_ucx if transport is UCX else run_ranks)(
        {"TUNELOCK_MODE": "pinned", "TUNELOCK_CHAOS": "1", "TUNELOCK_VERIFY_STRICT": "1",
         **transport})
    for out in outputs:
        assert "error:" in out and "differ" in out, out


def test_the_check_moves_fixed_size_tensors_and_six_integers_when_ranks_agree():
    """No all_gather_object: when every rank logged the same new keys (or none)
    a check is one all-reduce of 6 integers (each rank's count and a digest of
    its new entries), however many keys are new; ranks whose new keys differ
    take a few more all-reduces of integers (no gather without a conflict)."""
    for out in run_ranks({"TUNELOCK_MODE": "pinned", "VERIFY_COUNT": "1", **GROUP}, size=3):
        assert "verify -> True" in out and "verify again -> True" in out, out
        assert "first check collectives [('all_reduce', 6)]" in out, out
        assert "empty check collectives [('all_reduce', 6)]" in out, out
    # Pipeline stages: rank 2 logs a key the others do not (absent is no conflict).
    for out in run_ranks({"TUNELOCK_MODE": "pinned", "VERIFY_COUNT": "1", "EXTRA_KEY_RANK": "2",
                          **GROUP}, size=3):
        assert "verify -> True" in out, out
        first = out.split("first check collectives ")[1].splitlines()[0]
        assert "all_gather'" not in first and 2 < first.count("all_reduce") <= 5, out


def test_over_ucx_the_group_carries_the_addresses_once_and_nothing_after():
    """The group's first check all-gathers each rank's UCX address (lengths,
    then the padded addresses); no check after it, empty or with new keys,
    calls a torch collective."""
    for out in run_over_ucx({"TUNELOCK_MODE": "pinned", "VERIFY_COUNT": "1",
                             "EXTRA_KEY_RANK": "2"}, size=3):
        assert "verify -> True" in out and "over ucx True" in out, out
        first = out.split("first check collectives ")[1].splitlines()[0]
        assert first.startswith("[('all_gather', 3), ('all_gather', ") and first.count("(") == 2, out
        assert "empty check collectives []" in out, out
        assert "verify new -> True" in out and "new key check collectives []" in out, out


def test_over_ucx_a_subgroup_names_world_ranks_and_a_rank_that_died(tmp_path):
    outputs = run_over_ucx({"TUNELOCK_MODE": "pinned", "VERIFY_GROUP": "1,2", "DIE_RANK": "2",
                            "DONE_FILE": str(tmp_path / "done")}, size=3)
    assert "verify ->" not in outputs[0], outputs[0]  # not a member
    assert "rank 1: verify -> True" in outputs[1] and "rank 2: verify -> True" in outputs[2]
    # Rank 1 is the subgroup's rank 0 and rank 2 its rank 1: errors name world ranks.
    assert "rank 1: error: verify: lost rank(s) 2 (" in outputs[1], outputs[1]


def test_a_bad_transport_is_named_at_start():
    for out in run_ranks({"TUNELOCK_MODE": "pinned", "TUNELOCK_VERIFY_TRANSPORT": "mpi"}):
        assert ("TunelockError: TUNELOCK_VERIFY_TRANSPORT: invalid value 'mpi'; allowed: auto, "
                "ucx, group") in out, out
        assert "verify ->" not in out, out


@pytest.mark.parametrize("transport", [GROUP, UCX], ids=["group", "ucx"])
def test_a_conflict_names_both_values_on_every_rank(transport):
    outputs = (run_over_ucx if transport is UCX else run_ranks)(
        {"TUNELOCK_MODE": "pinned", "TUNELOCK_CHAOS": "1", "VERIFY_COUNT": "1", **transport},
        size=3)
    for out in outputs:
        assert "verify -> False" in out, out
    report = "".join(outputs)
    assert "differ" in report and "on rank" in report, report
