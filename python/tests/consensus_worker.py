"""One rank of the consensus test, started by `tunelock launch` (checks over
UCX) or, with CONSENSUS_OVER=torch, as a torch.distributed rank (gloo): the
stand-in row sum, whose BLOCK changes the bits, timed by a clock that
favours BLOCK=128 on rank 0 and BLOCK=256 on the others. Three steps with
a check after the first; each step prints its output's bits and the BLOCK
it launched."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "standin"))
sys.path.insert(0, HERE)

import triton  # noqa: E402

import tunelock  # noqa: E402
import tunelock.triton  # noqa: E402
from kernels import JITKernel, TableBench, Tensor, mixed_values, row_sum  # noqa: E402

over_torch = os.environ.get("CONSENSUS_OVER") == "torch"
if over_torch:
    import torch.distributed as dist
    dist.init_process_group("gloo")
tunelock.triton.install()  # the environment's policy
rank = int(os.environ.get("RANK", "0"))
# Rank 0: 128 in 1.0 ms, 256 in 1.5; the others: 256 in 1.0, 128 in 2.0. With two ranks
# the votes tie and the aggregated timing decides: 256 (median 1.25 ms against 1.5).
SKEW = {0: {64: 3.0, 128: 1.0, 256: 1.5, 512: 3.0}, 1: {64: 3.0, 128: 2.0, 256: 1.0, 512: 3.0}}

kernel = JITKernel(row_sum)
kernel.fn.__module__ = "demo.kernels"
bench = TableBench(kernel, lambda launch: SKEW[min(rank, 1)][launch["BLOCK"]])
configs = [triton.Config({"BLOCK": b}, num_warps=max(1, b // 64), num_stages=2)
           for b in (64, 128, 256, 512)]
tuner = triton.Autotuner(kernel, ["x", "out", "n"], configs, ["n"], ["out"], None, do_bench=bench)
x = Tensor(mixed_values(1024))
for step in range(3):
    out = Tensor([0.0])
    tuner.run(x, out, 1024)
    print(f"rank {rank}: step {step} out {out.values[0].hex()} BLOCK {kernel.launches[-1]['BLOCK']}",
          flush=True)
    if step == 0 or os.environ.get("CHECK_EVERY_STEP"):
        print(f"rank {rank}: step {step} verify -> {tunelock.verify()}", flush=True)
print(f"rank {rank}: timed {bench.calls}", flush=True)
tunelock.flush()
if over_torch:
    dist.destroy_process_group()
