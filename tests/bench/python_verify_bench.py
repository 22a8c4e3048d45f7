#!/usr/bin/env python3
"""tunelock.verify() over torch.distributed against all_gather_object of the
same batch as text (the transport and check Megatron's autotune uses), side
by side in the same processes: an empty batch; 1,000 new entries per rank
per round, the same on every rank (a data-parallel group); and 1,000 new
entries that differ per rank (pipeline stages: half shared, half the
rank's own). Once per verify transport (TUNELOCK_VERIFY_TRANSPORT): UCX
bootstrapped through the group, then the group's own collectives.

usage: python_verify_bench.py RANKS [BACKEND] [TRANSPORT...]   (gloo by
default; nccl needs one GPU per rank; transports: ucx group). The tunelock
package must be importable (PYTHONPATH). Prints one line per transport and
case with both medians in ms and their ratio. An empty round is 20 checks
back to back (ms per check); a round with entries is one check.
"""
import os
import socket
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

ROUNDS = 15
REPEATS = 20  # empty checks per round
ENTRIES = 1000
CONFIG = {"kwargs": {"BLOCK_M": 128, "BLOCK_N": 64}, "num_warps": 8, "num_stages": 3}
VALUE = "BLOCK_M=128,BLOCK_N=64;warps=8;stages=3;pinned"


def megatron_check(payload, size):
    """all_gather_object of the batch, then every key's values compared."""
    out = [None] * size
    dist.all_gather_object(out, payload)
    seen = {}
    for batch in out:
        for key, value in batch.items():
            seen.setdefault(key, set()).add(value)
    return [key for key, values in seen.items() if len(values) > 1]


def timed(function, repeats=1):
    """ms per call. Ranks start together; an empty check is timed over
    REPEATS calls back to back, as a trainer's steps call it, so that the
    barrier's exit skew (tens of µs) is not counted as the check's cost."""
    dist.barrier()
    start = time.perf_counter()
    for _ in range(repeats):
        function()
    return (time.perf_counter() - start) * 1e3 / repeats


def rank_main(rank, size, port, backend, results):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    if backend == "nccl":
        torch.cuda.set_device(rank)
    dist.init_process_group(backend, rank=rank, world_size=size)
    import tunelock
    tunelock.install(mode="pinned")
    tunelock.verify()  # connects; not timed
    megatron_check({}, size)
    cases = {}
    names = ("empty", f"{ENTRIES} new entries", f"{ENTRIES} new entries, half per rank")
    for number, case in enumerate(names):
        batches = []
        for round_ in range(ROUNDS):
            keys = [] if case == "empty" else [
                f"M={round_ * ENTRIES + i}|case{number}" for i in range(ENTRIES)]
            if case.endswith("half per rank"):
                keys = keys[:ENTRIES // 2] + [f"{key}@stage{rank}" for key in keys[ENTRIES // 2:]]
            batches.append(keys)
        repeats = REPEATS if case == "empty" else 1
        # Megatron's check first, every round, then tunelock's: neither runs
        # in the shadow of the other's last message.
        payloads = [{f"sm90|bench.ops.mm|{key}": VALUE for key in keys} for keys in batches]
        theirs = [timed(lambda: megatron_check(payload, size), repeats) for payload in payloads]
        ours = []
        for keys in batches:
            for key in keys:
                tunelock.first_call("sm90", "bench.ops", "mm", key, [CONFIG], 1,
                                    tunelock.NothingToRun())
            ours.append(timed(tunelock.verify, repeats))
        cases[case] = (statistics.median(ours), statistics.median(theirs))
    if rank == 0:
        results.put(cases)
    dist.destroy_process_group()


def main():
    size = int(sys.argv[1])
    backend = sys.argv[2] if len(sys.argv) > 2 else "gloo"
    transports = sys.argv[3:] or ["ucx", "group"]
    context = mp.get_context("spawn")
    for transport in transports:
        os.environ["TUNELOCK_VERIFY_TRANSPORT"] = transport  # the ranks inherit it
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        results = context.Queue()
        mp.start_processes(rank_main, args=(size, port, backend, results), nprocs=size,
                           start_method="spawn")
        for case, (ours, theirs) in results.get().items():
            print(f"{backend} {size} ranks, verify over {transport}, {case}: tunelock.verify "
                  f"{ours:.3f} ms, all_gather_object {theirs:.3f} ms: {theirs / ours:.1f}x",
                  flush=True)


if __name__ == "__main__":
    main()
