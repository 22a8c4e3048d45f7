"""triton.testing.do_bench for the stand-in: the same signature, timed by
the wall clock, and every call's budget kept in `budgets` for tests."""
import time

budgets = []  # (warmup, rep) of every call, in order


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None, return_mode="mean"):
    budgets.append((warmup, rep))
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1e3)
    samples.sort()
    if quantiles is None:
        return samples[len(samples) // 2]
    return [samples[len(samples) // 2], samples[1], samples[3]]
