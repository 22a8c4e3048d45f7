"""Stand-in of torch._inductor.runtime.triton_heuristics (torch 2.11): a
generated kernel's autotuner, which times its configs on its first launch
(noisy, per NOISE_SEED), keeps the fastest, then runs coordinate descent."""
import random

NOISE_SEED = 0
bench_calls = []  # the config of each timing
descent_calls = []


class Config:
    def __init__(self, kwargs, num_warps=4, num_stages=1):
        self.kwargs, self.num_warps, self.num_stages = dict(kwargs), num_warps, num_stages

    def __repr__(self):
        return f"Config({self.kwargs}, num_warps={self.num_warps})"


class Launcher:
    """Sums `in_ptr0` in blocks of XBLOCK into `out_ptr0`: another block
    size, another order of the sum, other bits."""

    def __init__(self, config):
        self.config = config

    def __call__(self, x, out, stream=None):
        block = self.config.kwargs["XBLOCK"]
        total = 0.0
        for start in range(0, len(x.values), block):
            total += sum(x.values[start:start + block])
        out.values[0] = total


class CachingAutotuner:
    def __init__(self, fn, triton_meta, configs, save_cache_hook, mutated_arg_names,
                 optimize_mem, heuristic_type, size_hints=None, inductor_meta=None, **rest):
        self.fn, self.size_hints = fn, size_hints
        self.inductor_meta = inductor_meta or {}
        self.mutated_arg_names = mutated_arg_names
        self.launchers = [Launcher(c) for c in configs]

    def bench(self, launcher, *args, **kwargs):
        config = launcher.config
        bench_calls.append(dict(config.kwargs))
        noise = random.Random(f"{NOISE_SEED}|{config.kwargs}").uniform(0, 0.3)
        return (1.0 + abs(config.kwargs["XBLOCK"] - 32) / 64) * (1 + noise)

    def autotune_to_one_config(self, *args, **kwargs):
        timings = {launcher: self.bench(launcher, *args, **kwargs) for launcher in self.launchers}
        self.launchers = [min(timings, key=timings.get)]

    def coordinate_descent_tuning(self, launcher, *args, **kwargs):
        descent_calls.append(dict(launcher.config.kwargs))
        wider = Config({**launcher.config.kwargs, "XBLOCK": launcher.config.kwargs["XBLOCK"] * 2},
                       launcher.config.num_warps, launcher.config.num_stages)
        return Launcher(wider)

    def reset_to_zero_args(self, *args, **kwargs):
        pass

    def run(self, *args, stream=None, **kwargs):
        if len(self.launchers) > 1:
            self.autotune_to_one_config(*args, **kwargs)
        if self.inductor_meta.get("coordinate_descent_tuning") and \
                not getattr(self.launchers[0].config, "found_by_coordesc", False):
            launcher = self.coordinate_descent_tuning(self.launchers[0], *args, **kwargs)
            launcher.config.found_by_coordesc = True
            self.launchers = [launcher]
        return self.launchers[0](*args, stream=stream, **kwargs)
