#!/usr/bin/env python3
"""The comparison for ucx_verify_bench: torch.distributed all_gather_object
over gloo (the transport Megatron's autotune check uses), with the same
rounds: an empty payload, and 1,000 new entries per rank per round.

usage: gloo_all_gather_bench.py RANKS   (Debian's python3-torch)
Prints one line with the two medians, in microseconds.
"""
import os
import socket
import statistics
import sys
import time

import torch.distributed as dist
import torch.multiprocessing as mp

EMPTY_ROUNDS = 200
FULL_ROUNDS = 100
ENTRIES = 1000


def entries(start):
    # The same strings as the tunelock benchmark's choice-log entries.
    return {f"sm90|bench.ops.mm|M={i}": "BLOCK_M=128,BLOCK_N=64;warps=8;stages=3;pinned"
            for i in range(start, start + ENTRIES)}


def rank_main(rank, size, port, results):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=size)
    out = [None] * size
    dist.all_gather_object(out, {})  # connects; not timed
    empty, full = [], []
    for _ in range(EMPTY_ROUNDS):
        dist.barrier()  # ranks start together, as in ucx_verify_bench
        start = time.perf_counter()
        dist.all_gather_object(out, {})
        empty.append((time.perf_counter() - start) * 1e6)
    for round_ in range(FULL_ROUNDS):
        payload = entries(round_ * ENTRIES)
        dist.barrier()
        start = time.perf_counter()
        dist.all_gather_object(out, payload)
        # The check Megatron runs on what arrived: every key's values compared.
        seen = {}
        for batch in out:
            for key, value in batch.items():
                seen.setdefault(key, set()).add(value)
        _ = [key for key, values in seen.items() if len(values) > 1]
        full.append((time.perf_counter() - start) * 1e6)
    if rank == 0:
        results.put((statistics.median(empty), statistics.median(full)))
    dist.destroy_process_group()


def main():
    size = int(sys.argv[1])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    mp.start_processes(rank_main, args=(size, port, results), nprocs=size, join=True,
                       start_method="spawn")
    empty, full = results.get(timeout=60)
    print(f"gloo all_gather_object, {size} ranks: empty {empty:.0f} us, "
          f"{ENTRIES} new entries per rank {full:.0f} us (medians)")


if __name__ == "__main__":
    main()
