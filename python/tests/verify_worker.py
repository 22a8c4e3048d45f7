"""One rank of the torch.distributed verify test: runs the stand-in
autotuned kernel under the policy from the environment, then verifies over
the gloo process group and prints the verdict (or the error)."""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "standin"))
sys.path.insert(0, HERE)

import torch.distributed as dist  # noqa: E402

import tunelock  # noqa: E402
import tunelock.distributed  # noqa: E402
import tunelock.triton  # noqa: E402
from kernels import Tensor, make_autotuner, mixed_values  # noqa: E402

dist.init_process_group("gloo")
tunelock.triton.install()  # the environment's policy

# With VERIFY_COUNT set, every collective the check makes is counted (and
# all_gather_object, which pickles and grows with the group, is refused).
calls = []
if os.environ.get("VERIFY_COUNT"):
    def counted(name, real):
        def call(tensor_or_list, *args, **kwargs):
            numel = (tensor_or_list.numel() if hasattr(tensor_or_list, "numel")
                     else sum(t.numel() for t in tensor_or_list))
            calls.append((name, numel))
            return real(tensor_or_list, *args, **kwargs)
        return call

    def refused(*args, **kwargs):
        raise AssertionError("all_gather_object was called")
    dist.all_reduce = counted("all_reduce", dist.all_reduce)
    dist.all_gather = counted("all_gather", dist.all_gather)
    dist.all_gather_object = refused

tuner, _, _ = make_autotuner(seed=dist.get_rank())
tuner.run(Tensor(mixed_values(1024)), Tensor([0.0]), 1024)
# A pipeline stage's own kernel: one rank logs a key the others never see.
if os.environ.get("EXTRA_KEY_RANK") == str(dist.get_rank()):
    tunelock.first_call("sm90", "stage", "head", "N=1",
                        [{"kwargs": {"BLOCK": 64}, "num_warps": 4, "num_stages": 2}], 1,
                        tunelock.NothingToRun())
# With VERIFY_GROUP ("1,2"), the checks run in that subgroup only; with
# DIE_RANK, that rank exits after the first check, so the second names it.
members = [int(r) for r in os.environ["VERIFY_GROUP"].split(",")] if os.environ.get(
    "VERIFY_GROUP") else None
group = dist.new_group(members) if members else None
rank = dist.get_rank()
try:
    if members is None or rank in members:
        print(f"rank {rank}: verify -> {tunelock.verify(group=group)}", flush=True)
        print(f"rank {rank}: first check collectives {calls}", flush=True)
        print(f"rank {rank}: over ucx {tunelock.distributed.last_over_ucx}", flush=True)
        if os.environ.get("DIE_RANK") == str(rank):
            os._exit(0)
        calls.clear()
        print(f"rank {rank}: verify again -> {tunelock.verify(group=group)}", flush=True)
        print(f"rank {rank}: empty check collectives {calls}", flush=True)
        calls.clear()
        tunelock.first_call("sm90", "later", "kernel", "N=2",
                            [{"kwargs": {"BLOCK": 32}, "num_warps": 4, "num_stages": 2}], 1,
                            tunelock.NothingToRun())
        print(f"rank {rank}: verify new -> {tunelock.verify(group=group)}", flush=True)
        print(f"rank {rank}: new key check collectives {calls}", flush=True)
except tunelock.TunelockError as error:
    print(f"rank {rank}: error: {error}", flush=True)
if os.environ.get("DIE_RANK"):
    # A peer is gone: no collective teardown. Rank 0 holds the process
    # group's store, which the others still use, so it leaves last.
    done = os.environ["DONE_FILE"]
    if rank == 0:
        deadline = time.monotonic() + 240
        while not os.path.exists(done) and time.monotonic() < deadline:
            time.sleep(0.05)
    else:
        open(done, "a").close()
    os._exit(0)
dist.destroy_process_group()
