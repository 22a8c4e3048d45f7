"""A rank that stops during a check is named by the survivor, with real
Triton on a GPU (not run by ctest; test_killed_ranks.py covers the logic
without one).

    python triton_rank_left_check.py

Two ranks share the GPU over a gloo process group and verify at every
step of the atomic matrix-vector kernel (triton_atomic_checks.py). Rank 1
runs with TUNELOCK_CHAOS and TUNELOCK_VERIFY_STRICT: the bits check of its
first call may refuse the racy config it picked, or the check finds the
ranks chose differently. Either way rank 0 must raise tunelock's words
(a conflict, or "rank 1 left during the check"), never the transport's
raw "Connection closed by peer". Then rank 1 is killed (SIGKILL) in the
middle of a pinned run, and rank 0 must name it within the timeout.
Several rounds, so chaos picks several configs. Exits 1 on any miss.
"""
import os
import re
import signal
import socket
import subprocess
import sys
import time

TIMEOUT_S = 10
HERE = os.path.dirname(os.path.abspath(__file__))


def rank_main(rank, scenario):
    import torch
    import torch.distributed as dist

    import tunelock
    import tunelock.triton
    sys.path.insert(0, HERE)
    import triton_atomic_checks as atomic

    dist.init_process_group("gloo")
    tunelock.triton.install()  # the environment's policy
    for step, (rows, cols) in enumerate(atomic.SHAPES * 2):
        if scenario == "killed" and rank == 1 and step == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        start = None  # the check's start, once the step's call returned
        try:
            atomic.call(rows, cols)
            start = time.monotonic()
            verdict = tunelock.verify()
        except tunelock.TunelockError as error:
            took = time.monotonic() - start if start is not None else 0.0
            print(f"rank {rank}: step {step} raised after {took:.1f} s: {error}", flush=True)
            os._exit(3)
        print(f"rank {rank}: step {step} verify -> {verdict}", flush=True)
    torch.cuda.synchronize()
    print(f"rank {rank}: finished", flush=True)
    os._exit(0)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_pair(scenario, extra_rank1):
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()),
           "WORLD_SIZE": "2", "TUNELOCK_MODE": "pinned", "TUNELOCK_VERIFY_TRANSPORT": "group",
           "TUNELOCK_VERIFY_TIMEOUT": str(TIMEOUT_S)}
    ranks = [subprocess.Popen([sys.executable, __file__, "rank", str(r), scenario],
                              env={**env, "RANK": str(r), **(extra_rank1 if r == 1 else {})},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(2)]
    return [(rank.communicate(timeout=300)[0], rank.returncode) for rank in ranks]


def main():
    misses = 0
    chaos = {"TUNELOCK_CHAOS": "1", "TUNELOCK_VERIFY_STRICT": "1"}
    outcomes = {}
    for attempt in range(4):
        (survivor, code), (other, other_code) = run_pair("chaos", chaos)
        last = [line for line in survivor.splitlines() if line.startswith("rank 0")][-1:]
        other_last = [line for line in other.splitlines() if line.startswith("rank 1")][-1:]
        print(f"chaos round {attempt}: rank 0 exit {code}: {last}; rank 1 exit {other_code}: "
              f"{other_last}")
        raw = "Connection closed by peer" in survivor and "the transport said" not in survivor
        if raw or "Traceback" in survivor:
            print("MISS: rank 0 printed the transport's own error:\n" + survivor[-3000:])
            misses += 1
        named = re.search(r"rank 1 left during the check|autotune choices differ", survivor)
        finished = "rank 0: finished" in survivor and "rank 1: finished" in other
        outcomes[attempt] = "named" if named else "agreed" if finished else "other"
        if not (named or finished):
            print("MISS: rank 0 neither named rank 1 nor finished:\n" + survivor[-3000:])
            misses += 1
    print(f"chaos outcomes: {outcomes}")
    (survivor, code), (_, victim_code) = run_pair("killed", {})
    line = [x for x in survivor.splitlines() if x.startswith("rank 0") and "raised" in x]
    print(f"killed at step 3: rank 0 exit {code}: {line}; rank 1 exit {victim_code}")
    found = re.search(r"raised after ([0-9.]+) s: verify: rank 1 left during the check", survivor)
    if victim_code != -9 or not found or float(found.group(1)) >= TIMEOUT_S:
        print("MISS: the killed rank was not named in time:\n" + survivor[-3000:])
        misses += 1
    print("ok" if misses == 0 else f"{misses} miss(es)")
    return 1 if misses else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "rank":
        rank_main(int(sys.argv[2]), sys.argv[3])
    sys.exit(main())
