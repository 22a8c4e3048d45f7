"""One process compiling and running a small program through the stand-in
Inductor (tests/standin_inductor), under the policy in its environment, as
a torch.compile'd model would: one mm decision among ATen and two template
tiles, and one generated reduction with four configs. Prints what it chose,
what Inductor benchmarked and the output's bits, as JSON.

    inductor_worker.py [--counter N] [--rows N] [--no-install | --via-triton | --via-tunelock]

NOISE_SEED (environment) seeds the stand-in's clocks, as each process's own
clock differs; --counter shifts Inductor's running numbers (triton_mm_N,
triton_red_fused_sum_N), which other programs do not share."""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "standin_inductor"))  # the stand-in torch, first
sys.path.insert(1, HERE)
sys.path.insert(2, os.path.join(HERE, "standin"))  # the stand-in Triton, which kernels.py uses

from torch._inductor import select_algorithm as sa  # noqa: E402
from torch._inductor.runtime import triton_heuristics as th  # noqa: E402

import tunelock  # noqa: E402
import tunelock.inductor  # noqa: E402
import tunelock.triton  # noqa: E402
from kernels import Tensor, mixed_values  # noqa: E402

SOURCE = '''
@triton.jit
def {name}(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr, R0_BLOCK : tl.constexpr):
    tmp0 = tl.load(in_ptr0 + r0_index)
    tl.store(out_ptr0, tl.sum(tmp0))
'''


class JITFunction:
    def __init__(self, name):
        self.__name__ = name
        self.src = SOURCE.format(name=name)
        self.arg_names = ["in_ptr0", "out_ptr0", "xnumel", "r0_numel"]


def mm_choices(counter):
    tile = "ACC_TYPE='tl.float32', ALLOW_TF32=False, BLOCK_K=32, BLOCK_M={m}, BLOCK_N=64, " \
           "EVEN_K=True, GROUP_M=8, num_stages=3, num_warps={w}"
    return [sa.ExternKernelCaller("mm", 1.0),
            sa.TritonTemplateCaller(f"triton_mm_{counter}", tile.format(m=64, w=4), 0.9),
            sa.TritonTemplateCaller(f"triton_mm_{counter + 1}", tile.format(m=128, w=8), 0.9)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--counter", type=int, default=0)
    parser.add_argument("--rows", type=int, default=2048)
    parser.add_argument("--no-install", action="store_true")
    parser.add_argument("--via-triton", action="store_true")
    parser.add_argument("--via-tunelock", action="store_true")  # tunelock.install(): every adapter
    options = parser.parse_args()
    sa.NOISE_SEED = th.NOISE_SEED = int(os.environ.get("NOISE_SEED", "0"))
    if options.via_triton:
        tunelock.triton.install()
    elif options.via_tunelock:
        tunelock.install()
        out_patched = {"triton": tunelock.triton._interception.original_run is not None,
                       "inductor": tunelock.inductor._interception.original_call is not None}
    elif not options.no_install:
        tunelock.inductor.install()
    out = {"patched": out_patched} if options.via_tunelock else {}
    try:
        rows = options.rows
        nodes = [sa.Node("torch.bfloat16", [rows, 768], [768, 1]),
                 sa.Node("torch.bfloat16", [768, 3072], [1, 768])]
        layout = sa.Layout("torch.bfloat16", [rows, 3072], [3072, 1])
        out["mm"] = sa.AlgorithmSelectorCache()("mm", mm_choices(options.counter + 3), nodes,
                                                layout)[2] or "aten"
        name = f"triton_red_fused_sum_{options.counter}"
        kernel = th.CachingAutotuner(
            JITFunction(name), {}, [th.Config({"XBLOCK": b, "R0_BLOCK": 64}) for b in (8, 16, 32, 64)],
            None, [], False, "reduction", size_hints={"x": 1, "r0_": 4096},
            inductor_meta={"kernel_name": name, "coordinate_descent_tuning": True})
        x, result = Tensor(mixed_values(4096)), Tensor([0.0])
        kernel.run(x, result)
        kernel.run(x, result)  # a later launch decides nothing
        out["kernel"] = kernel.launchers[0].config.kwargs
        out["bits"] = repr(result.values[0])
    except tunelock.TunelockError as error:
        out["error"] = str(error)
    out["benchmarked"] = sa.benchmarked
    out["compiled"] = sa.compiled
    out["bench_calls"] = len(th.bench_calls)
    out["descent_calls"] = len(th.descent_calls)
    out["log"] = tunelock.choice_log()
    tunelock.flush()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
