"""One rank of the torch.distributed verify test: runs the stand-in
autotuned kernel under the policy from the environment, then verifies over
the gloo process group and prints the verdict (or the error)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "standin"))
sys.path.insert(0, HERE)

import torch.distributed as dist  # noqa: E402

import tunelock  # noqa: E402
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
    tunelock.log_choice("sm90", "stage", "head", "N=1",
                        {"kwargs": {"BLOCK": 64}, "num_warps": 4, "num_stages": 2}, True)
try:
    print(f"rank {dist.get_rank()}: verify -> {tunelock.verify()}", flush=True)
    print(f"rank {dist.get_rank()}: first check collectives {calls}", flush=True)
    calls.clear()
    print(f"rank {dist.get_rank()}: verify again -> {tunelock.verify()}", flush=True)
    print(f"rank {dist.get_rank()}: empty check collectives {calls}", flush=True)
except tunelock.TunelockError as error:
    print(f"rank {dist.get_rank()}: error: {error}", flush=True)
dist.destroy_process_group()
