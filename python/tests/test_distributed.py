"""Verify across ranks over torch.distributed (gloo): Python moves the
engine's bytes; the engine decides. Skipped where torch is absent."""
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


def run_ranks(policy, size=2):
    port = str(free_port())
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port,
           "WORLD_SIZE": str(size), "PYTHONPATH": os.pathsep.join(sys.path), **policy}
    ranks = [subprocess.Popen([sys.executable, WORKER], env={**env, "RANK": str(r)},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(size)]
    return [rank.communicate(timeout=300)[0] for rank in ranks]


def test_pinned_ranks_agree_over_torch_distributed():
    for out in run_ranks({"TUNELOCK_MODE": "pinned"}):
        assert "verify -> True" in out, out


def test_chaos_is_caught_on_both_ranks_and_strict_raises():
    outputs = run_ranks({"TUNELOCK_MODE": "pinned", "TUNELOCK_CHAOS": "1",
                         "TUNELOCK_VERIFY_STRICT": "1"})
    for out in outputs:
        assert "error:" in out and "differ" in out, out


def test_the_check_moves_fixed_size_tensors_and_six_integers_when_ranks_agree():
    """No all_gather_object: when every rank logged the same new keys (or none)
    a check is one all-reduce of 6 integers (each rank's count and a digest of
    its new entries), however many keys are new; ranks whose new keys differ
    take a few more all-reduces of integers (no gather without a conflict)."""
    for out in run_ranks({"TUNELOCK_MODE": "pinned", "VERIFY_COUNT": "1"}, size=3):
        assert "verify -> True" in out and "verify again -> True" in out, out
        assert "first check collectives [('all_reduce', 6)]" in out, out
        assert "empty check collectives [('all_reduce', 6)]" in out, out
    # Pipeline stages: rank 2 logs a key the others do not (absent is no conflict).
    for out in run_ranks({"TUNELOCK_MODE": "pinned", "VERIFY_COUNT": "1", "EXTRA_KEY_RANK": "2"},
                         size=3):
        assert "verify -> True" in out, out
        first = out.split("first check collectives ")[1].splitlines()[0]
        assert "all_gather'" not in first and 2 < first.count("all_reduce") <= 5, out


def test_a_conflict_over_the_tensors_names_both_values_on_every_rank():
    outputs = run_ranks({"TUNELOCK_MODE": "pinned", "TUNELOCK_CHAOS": "1", "VERIFY_COUNT": "1"},
                        size=3)
    for out in outputs:
        assert "verify -> False" in out, out
    report = "".join(outputs)
    assert "differ" in report and "on rank" in report, report
