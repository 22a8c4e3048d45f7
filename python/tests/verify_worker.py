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
tuner, _, _ = make_autotuner(seed=dist.get_rank())
tuner.run(Tensor(mixed_values(1024)), Tensor([0.0]), 1024)
try:
    print(f"rank {dist.get_rank()}: verify -> {tunelock.verify()}", flush=True)
except tunelock.TunelockError as error:
    print(f"rank {dist.get_rank()}: error: {error}", flush=True)
dist.destroy_process_group()
