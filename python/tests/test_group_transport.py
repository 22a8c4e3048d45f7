"""A program's process group carries verify (tunelock_verify_group), with
no torch: a hub in this process all-gathers for the ranks. Over UCX (the
default where built) the group carries the ranks' addresses once, at the
first check, and nothing after; with TUNELOCK_VERIFY_TRANSPORT=group every
check goes through the group's all-reduce."""
import os
import subprocess
import sys
import threading
from multiprocessing.connection import Listener

import pytest

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "group_worker.py")


def serve(listener, size):
    """Rounds: one message from every rank, then the list to each of them."""
    connections = {}
    for _ in range(size):
        connection = listener.accept()
        connections[connection.recv()] = connection
    ranks = sorted(connections)
    try:
        while True:
            parts = [connections[r].recv() for r in ranks]
            for r in ranks:
                connections[r].send(parts)
    except (EOFError, OSError):
        pass  # a rank finished or died: no more rounds


def run_ranks(env, size=3, world_ranks="4,6,8"):
    with Listener(("127.0.0.1", 0), authkey=b"tunelock-test") as listener:
        hub = threading.Thread(target=serve, args=(listener, size), daemon=True)
        hub.start()
        base = {**os.environ, "WORLD_SIZE": str(size), "WORLD_RANKS": world_ranks,
                "HUB_PORT": str(listener.address[1]), "PYTHONPATH": os.pathsep.join(sys.path),
                "TUNELOCK_VERIFY_TIMEOUT": "120", **env}
        ranks = [subprocess.Popen([sys.executable, WORKER], env={**base, "RANK": str(r)},
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                 for r in range(size)]
        return [rank.communicate(timeout=300)[0] for rank in ranks]


def over_ucx(env, **kwargs):
    outputs = run_ranks({**env, "TUNELOCK_VERIFY_TRANSPORT": "ucx"}, **kwargs)
    if any("has no UCX" in out for out in outputs):
        pytest.skip("this build of tunelock has no UCX")
    return outputs


def test_over_ucx_the_group_carries_the_addresses_once():
    for r, out in enumerate(over_ucx({})):
        # The first check's one callback: the all-gather of the UCX addresses.
        assert f"rank {r}: first: verdict 1, over ucx 1, callbacks 1" in out, out
        assert f"rank {r}: empty: verdict 1, over ucx 1, callbacks 0" in out, out
        assert f"rank {r}: new keys: verdict 1, over ucx 1, callbacks 0" in out, out


def test_over_the_group_every_check_uses_its_all_reduce():
    for r, out in enumerate(run_ranks({"TUNELOCK_VERIFY_TRANSPORT": "group"})):
        assert f"rank {r}: first: verdict 1, over ucx 0, callbacks 1" in out, out
        assert f"rank {r}: empty: verdict 1, over ucx 0, callbacks 1" in out, out


@pytest.mark.parametrize("transport", ["ucx", "group"])
def test_a_conflict_names_the_world_ranks(transport):
    env = {"ODD_RANK": "1"}
    outputs = (over_ucx(env) if transport == "ucx"
               else run_ranks({**env, "TUNELOCK_VERIFY_TRANSPORT": transport}))
    for r, out in enumerate(outputs):
        assert f"rank {r}: first: verdict 0" in out, out
    report = "".join(outputs)
    assert "BLOCK=64" in report and "on rank 6" in report, report


def test_over_ucx_a_rank_that_died_is_named_by_its_world_rank():
    outputs = over_ucx({"DIE_RANK": "2"})
    assert "rank 2: first: verdict 1" in outputs[2], outputs[2]
    for r in (0, 1):  # the root, and its other child, told by the root
        assert f"rank {r}: empty: error: verify: lost rank(s) 8 (" in outputs[r], outputs[r]


def test_a_bad_transport_is_named():
    # Refused at install, where install(mode=...) reads the environment, not at the first check.
    for out in run_ranks({"TUNELOCK_VERIFY_TRANSPORT": "nccl"}, size=2, world_ranks="0,1"):
        assert ("TunelockError: TUNELOCK_VERIFY_TRANSPORT: invalid value 'nccl'; "
                "allowed: auto, ucx, group") in out, out
        assert "first:" not in out, out
