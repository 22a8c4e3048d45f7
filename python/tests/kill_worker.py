"""One rank of the killed-rank test over torch.distributed (gloo): rank
KILL_RANK kills itself with SIGKILL at the moment KILL_AT of a check, and
the survivors print how long their failing check took and its error, then
exit 1 (a trainer's uncaught exception).

The moments, by transport (TUNELOCK_VERIFY_TRANSPORT):
- group: the check after a good one, in which the victim logged a key of
  its own (so the check takes several all-reduces). `before`: at its first
  all-reduce, before it sends; `during`: after its first all-reduce came
  back; `after`: once that check is over, so the next check meets it gone.
- ucx: the first check, whose all-gathers carry the UCX addresses.
  `before`: at its first all-gather; `during`: after the addresses came
  back, before the UCX round; `after`: once the first check is over."""
import os
import signal
import sys
import time

import torch.distributed as dist

import tunelock
import tunelock.distributed as transport

dist.init_process_group("gloo")
rank, victim, moment = dist.get_rank(), int(os.environ["KILL_RANK"]), os.environ["KILL_AT"]
over_ucx = os.environ.get("TUNELOCK_VERIFY_TRANSPORT") == "ucx"
tunelock.install(tunelock.Policy(mode="pinned", over_environment=True))  # TUNELOCK_VERIFY_TIMEOUT
config = {"kwargs": {"BLOCK": 32}, "num_warps": 4, "num_stages": 2}


def die():
    os.kill(os.getpid(), signal.SIGKILL)


def kill_around(name, after_calls):
    """Replaces the transport's `name` so that the victim dies at that
    call: before the first (after_calls 0) or once `after_calls` came back."""
    real = getattr(transport._TensorTransport, name)
    calls = [0]

    def call(self, *args):
        if calls[0] == after_calls == 0:
            die()
        result = real(self, *args)
        calls[0] += 1
        if calls[0] == after_calls:
            die()
        return result
    setattr(transport._TensorTransport, name, call)


def checked(label):
    start = time.monotonic()
    try:
        verdict = tunelock.verify()
    except tunelock.TunelockError as error:
        print(f"rank {rank}: {label} failed after {time.monotonic() - start:.1f} s: {error}",
              flush=True)
        os._exit(1)  # no collective teardown: a peer is gone
    print(f"rank {rank}: {label} -> {verdict}", flush=True)


for m in range(10):
    tunelock.first_call("sm90", "ops", "mm", f"M={m}", [config], 1, tunelock.NothingToRun())
if over_ucx and rank == victim and moment != "after":
    kill_around("gather", 0 if moment == "before" else 2)
checked("first check")
if rank == victim and moment == "after" and over_ucx:
    die()
tunelock.first_call("sm90", "ops", "mm", "M=100", [config], 1, tunelock.NothingToRun())
if rank == victim:
    tunelock.first_call("sm90", "stage", "head", "N=1", [config], 1, tunelock.NothingToRun())
    if not over_ucx and moment != "after":
        kill_around("all_reduce", 0 if moment == "before" else 1)
checked("second check")
if rank == victim:
    die()
checked("third check")
print(f"rank {rank}: no check failed", flush=True)
sys.exit(0)
