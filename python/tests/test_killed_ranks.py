"""A rank killed with SIGKILL at each moment of a check, over a gloo process
group, with either transport: every survivor raises naming the lost rank,
not the transport's own error, and exits non-zero within
TUNELOCK_VERIFY_TIMEOUT. Skipped where torch is absent; the roll call's
logic is also covered without torch (test_roll_call.py)."""
import os
import re
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip("torch.distributed", reason="torch is not installed here")

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kill_worker.py")
TIMEOUT_S = 8


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_killed(transport, moment, size, victim):
    """Each rank's output and exit code, and the wall time of the slowest."""
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()),
           "WORLD_SIZE": str(size), "PYTHONPATH": os.pathsep.join(sys.path),
           "TUNELOCK_VERIFY_TIMEOUT": str(TIMEOUT_S), "TUNELOCK_VERIFY_TRANSPORT": transport,
           "KILL_RANK": str(victim), "KILL_AT": moment}
    start = time.monotonic()
    ranks = [subprocess.Popen([sys.executable, WORKER], env={**env, "RANK": str(r)},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(size)]
    # Far more than the timeout: a survivor that hangs fails the assertion
    # on its time below rather than this wait.
    outputs = [(rank.communicate(timeout=TIMEOUT_S * 10)[0], rank.returncode) for rank in ranks]
    if any("has no UCX" in out for out, _ in outputs):
        pytest.skip("this build of tunelock has no UCX")
    return outputs, time.monotonic() - start


def failed_after(out):
    found = re.search(r"failed after ([0-9.]+) s: ", out)
    assert found, out
    return float(found.group(1))


@pytest.mark.parametrize("moment", ["before", "during", "after"])
@pytest.mark.parametrize("transport", ["group", "ucx"])
def test_two_ranks_the_survivor_names_the_rank_killed(transport, moment):
    outputs, _ = run_killed(transport, moment, size=2, victim=1)
    (survivor, code), (_, victim_code) = outputs
    assert victim_code == -9, outputs
    assert code == 1, survivor
    if transport == "group":
        assert "verify: rank 1 left during the check (the transport said: " in survivor, survivor
    else:
        assert re.search(r"verify: (rank 1 left during the check|lost rank\(s\) 1 )", survivor), \
            survivor
    assert "Traceback" not in survivor, survivor
    assert failed_after(survivor) < TIMEOUT_S, survivor


@pytest.mark.parametrize("moment", ["before", "during", "after"])
def test_three_ranks_the_roll_call_names_the_rank_killed(moment):
    """Over the group's all-reduce a survivor may wait on a live neighbour
    that already failed: both answer the roll call, the victim never does."""
    outputs, _ = run_killed("group", moment, size=3, victim=2)
    for out, code in outputs[:2]:
        assert code == 1, out
        assert re.search(r"verify: rank 2 (left during the check|never came to the check or "
                         r"left it) \(no answer to the roll call by the check's deadline; the "
                         r"transport said: ", out), out
        assert failed_after(out) < TIMEOUT_S + 1, out
    assert outputs[2][1] == -9, outputs


def test_rank_zero_killed_is_named_though_its_store_is_gone():
    """Under env:// rank 0 holds the group's store: the roll call cannot
    run, and the survivors say so and name rank 0 as the likely one."""
    outputs, _ = run_killed("group", "during", size=3, victim=0)
    for out, code in outputs[1:]:
        assert code == 1, out
        assert "rank 0 is likely the one that left" in out, out
        assert failed_after(out) < TIMEOUT_S + 1, out
