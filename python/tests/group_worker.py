"""One rank of the process-group transport test, without torch: the
program's "process group" is a hub in the test process that all-gathers
whatever the ranks send it. The rank calls the C ABI's
tunelock_verify_group with that hub's all-gather and all-reduce, prints
each check's verdict, whether it went over UCX, and how many times the
engine called the group back."""
import ctypes
import os
import sys
from multiprocessing.connection import Client

import tunelock
from tunelock._native import ALL_REDUCE_FN, GATHER_FN, lib

rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
hub = Client(("127.0.0.1", int(os.environ["HUB_PORT"])), authkey=b"tunelock-test")
hub.send(rank)
calls = []


def gather(_context, payload, length, sink):
    calls.append("gather")
    hub.send(ctypes.string_at(payload, length))
    for part in hub.recv():
        lib.tunelock_gather_add(sink, part, len(part))
    return 0


def all_reduce(_context, values, count, op):
    calls.append("all_reduce")
    hub.send([values[i] for i in range(count)])
    for i, column in enumerate(zip(*hub.recv())):
        values[i] = sum(column) if op == 0 else min(column)
    return 0


gather_fn, all_reduce_fn = GATHER_FN(gather), ALL_REDUCE_FN(all_reduce)
# World ranks that are not the group's own numbers: reports must use them.
world = (ctypes.c_int * size)(*[int(r) for r in os.environ["WORLD_RANKS"].split(",")])
config = {"kwargs": {"BLOCK": 64 if os.environ.get("ODD_RANK") == str(rank) else 32},
          "num_warps": 4, "num_stages": 2}
tunelock.install(mode="pinned")


def check(name):
    verdict, over_ucx = ctypes.c_int(-1), ctypes.c_int(-1)
    before = len(calls)
    status = lib.tunelock_verify_group(-1, rank, size, b"hub", world, gather_fn, all_reduce_fn,
                                       None, ctypes.byref(verdict), ctypes.byref(over_ucx))
    if status != 0:
        print(f"rank {rank}: {name}: error: {lib.tunelock_last_error().decode()}", flush=True)
        return False
    print(f"rank {rank}: {name}: verdict {verdict.value}, over ucx {over_ucx.value}, "
          f"callbacks {len(calls) - before}", flush=True)
    return True


tunelock.first_call("sm90", "ops", "mm", "M=1", [config], 1, tunelock.NothingToRun())
check("first")
if os.environ.get("DIE_RANK") == str(rank):
    os._exit(0)
check("empty")
for i in range(100):
    tunelock.first_call("sm90", "ops", "mm", f"M={i + 2}", [config], 1, tunelock.NothingToRun())
check("new keys")
hub.close()
sys.exit(0)
