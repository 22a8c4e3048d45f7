"""Stand-in kernels and tensors for the interception tests: plain objects
with `.dtype`, and JIT-like kernels with `run`. The row sum adds BLOCK-sized
partial sums, so BLOCK changes the bits of the result, as on a GPU; the
fake benchmark reads a per-BLOCK cost plus seeded noise, so "fresh
processes" (seeds) can time different winners."""
import hashlib
import inspect
import random

import triton


class DType:
    """Equal and hashed by name, as torch's interned dtype objects are."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name

    def __eq__(self, other):
        return isinstance(other, DType) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


class Tensor:
    def __init__(self, values, dtype="torch.float32"):
        self.values = list(values)
        self.dtype = DType(dtype)

    def zero_(self):
        self.values = [0.0] * len(self.values)

    def clone(self):
        return Tensor(self.values, str(self.dtype))

    def copy_(self, other):
        self.values = list(other.values)

    def tolist(self):
        return list(self.values)


class JITKernel:
    """Like triton.JITFunction: `fn` is the Python function, `run` launches."""

    def __init__(self, fn):
        self.fn = fn
        self.arg_names = list(inspect.signature(fn).parameters)
        self.launches = []
        self.src = inspect.getsource(fn)  # as Triton keeps it, without the decorators

    @property
    def cache_key(self):
        """Triton's is a hash of the source and its dependencies' sources."""
        return hashlib.sha256(self.src.encode()).hexdigest()

    def run(self, *args, **kwargs):
        accepted = {k: v for k, v in kwargs.items() if k in self.arg_names}
        self.launches.append(dict(kwargs))  # with num_warps and the other launch options
        return self.fn(*args, **accepted)


def row_sum(x, out, n, BLOCK):
    total = 0.0
    for start in range(0, n, BLOCK):
        total += sum(x.values[start:start + BLOCK])
    out.values[0] += total  # accumulates: autotuning needs reset_to_zero


def mixed_values(n=4096, seed=7):
    rng = random.Random(seed)
    return [rng.uniform(-1, 1) * 10 ** rng.randint(-6, 6) for _ in range(n)]


BLOCKS = (64, 128, 256, 512)
BASE_MS = {64: 1.00, 128: 0.98, 256: 0.99, 512: 1.01}  # close: noise decides


class NoisyBench:
    """do_bench for the stand-in: runs the call, returns its BLOCK's cost
    plus noise from `seed` (one seed per simulated process)."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.calls = 0
        self.kernel = None

    def __call__(self, kernel_call, quantiles):
        self.calls += 1
        kernel_call()
        block = self.kernel.launches[-1]["BLOCK"]
        ms = BASE_MS[block] * (1 + self.rng.uniform(-0.05, 0.05))
        return [ms, ms * 0.99, ms * 1.01]


def make_autotuner(seed=0, configs=None, **options):
    kernel = JITKernel(row_sum)
    kernel.fn.__module__ = "demo.kernels"
    bench = NoisyBench(seed)
    bench.kernel = kernel
    configs = configs or [triton.Config({"BLOCK": b}, num_warps=max(1, b // 64), num_stages=2)
                          for b in BLOCKS]
    tuner = triton.Autotuner(kernel, ["x", "out", "n"], configs, ["n"],
                             options.pop("reset_to_zero", ["out"]), options.pop("restore_value", None),
                             do_bench=bench, **options)
    return tuner, kernel, bench


def racy_row_sum(x, out, n, BLOCK, ATOMIC):
    """With ATOMIC=1, BLOCK partial sums are added in an order that changes
    from run to run, as `tl.atomic_add` adds them on a GPU."""
    partial = [sum(x.values[start:start + BLOCK]) for start in range(0, n, BLOCK)]
    if ATOMIC:  # every other run adds them backwards: two runs in a row always differ
        racy_row_sum.runs += 1
        if racy_row_sum.runs % 2:
            partial.reverse()
    total = 0.0
    for p in partial:
        total += p
    out.values[0] += total


racy_row_sum.runs = 0

RACY_MS = {(64, 1): 0.50, (128, 0): 0.90, (256, 0): 1.00}  # the atomic config is fastest


class TableBench:
    """do_bench reading each launch's time from a table: `ms_of(launch)`."""

    def __init__(self, kernel, ms_of):
        self.kernel, self.ms_of, self.calls = kernel, ms_of, 0

    def __call__(self, kernel_call, quantiles):
        self.calls += 1
        kernel_call()
        ms = self.ms_of(self.kernel.launches[-1])
        return [ms, ms, ms]


def racy_configs():
    """The atomic config is also the cheapest (smallest BLOCK)."""
    return [triton.Config({"BLOCK": 64, "ATOMIC": 1}, num_warps=1, num_stages=2),
            triton.Config({"BLOCK": 128, "ATOMIC": 0}, num_warps=2, num_stages=2),
            triton.Config({"BLOCK": 256, "ATOMIC": 0}, num_warps=4, num_stages=2)]


def make_racy_autotuner():
    kernel = JITKernel(racy_row_sum)
    kernel.fn.__module__ = "demo.kernels"
    bench = TableBench(kernel, lambda launch: RACY_MS[(launch["BLOCK"], launch["ATOMIC"])])
    tuner = triton.Autotuner(kernel, ["x", "out", "n"], racy_configs(), ["n"], ["out"], None,
                             do_bench=bench)
    return tuner, kernel, bench


# BLOCK changes the bits; num_warps only the speed: (64, 1) is slow,
# (64, 2) the fastest, and both give the same bits.
EQUIVALENT_MS = {(64, 1): 1.00, (64, 2): 0.40, (128, 4): 0.90, (256, 4): 0.95}


def make_warps_autotuner(own_bench=True):
    """With own_bench=False the autotuner times with Triton's benchmarker
    (the stand-in's triton.testing.do_bench), as one declared without
    do_bench does."""
    kernel = JITKernel(row_sum)
    kernel.fn.__module__ = "demo.kernels"
    bench = TableBench(kernel, lambda launch: EQUIVALENT_MS[(launch["BLOCK"], launch["num_warps"])])
    configs = [triton.Config({"BLOCK": block}, num_warps=warps, num_stages=2)
               for block, warps in EQUIVALENT_MS]
    tuner = triton.Autotuner(kernel, ["x", "out", "n"], configs, ["n"], ["out"], None,
                             do_bench=bench if own_bench else None)
    return tuner, kernel, bench


CONFIG_FIELDS = ("kwargs", "num_warps", "num_stages", "num_ctas", "maxnreg", "ir_override",
                 "algorithm")


def config_of(entry):
    """A table entry's own config, without its lists (equivalent, ties, ...)."""
    return {k: v for k, v in entry.items() if k in CONFIG_FIELDS}
