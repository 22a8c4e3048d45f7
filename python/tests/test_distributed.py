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


def run_ranks(policy):
    port = str(free_port())
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port, "WORLD_SIZE": "2",
           "PYTHONPATH": os.pathsep.join(sys.path), **policy}
    ranks = [subprocess.Popen([sys.executable, WORKER], env={**env, "RANK": str(r)},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(2)]
    return [rank.communicate(timeout=300)[0] for rank in ranks]


def test_pinned_ranks_agree_over_torch_distributed():
    for out in run_ranks({"TUNELOCK_MODE": "pinned"}):
        assert "verify -> True" in out, out


def test_chaos_is_caught_on_both_ranks_and_strict_raises():
    outputs = run_ranks({"TUNELOCK_MODE": "pinned", "TUNELOCK_CHAOS": "1",
                         "TUNELOCK_VERIFY_STRICT": "1"})
    for out in outputs:
        assert "error:" in out and "differ" in out, out
