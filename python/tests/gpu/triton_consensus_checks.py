"""Consensus mode with real Triton on one GPU (not run by ctest).

    python triton_consensus_checks.py WORKDIR

Two ranks over torch.distributed (gloo) on one GPU run a matrix-vector
kernel (configs BLOCK_K x SPLIT; SPLIT=4 adds its partial sums with
`tl.atomic_add`, so its bits depend on the order programs finish in). Each
rank's clock is skewed on purpose: Triton's own timing of every config but
the rank's favourite is multiplied, so the ranks' local winners differ.

1. consensus: both ranks' output bits per step (step 0 runs before the
   first check), the configs launched before and after the switch, and the
   table rank 0 writes.
2. pinned with that table, 2 ranks: its bits and its steady step time
   against the consensus run's after the switch.
3. record, 2 ranks: the first step's cost (timing + audit) against
   consensus's first step.
"""
import hashlib
import json
import os
import socket
import statistics
import subprocess
import sys
import time

import torch
import triton
import triton.language as tl

SHAPES = [(64, 65536), (128, 32768), (256, 16384)]
STEPS = 6
CALLS_PER_STEP = 50
TIMED_STEPS = 21


def configs():
    # The atomic configs get more warps, so the cost rule's cheapest is a
    # non-atomic one: the deterministic choice of step 0 repeats its bits.
    return [triton.Config({"BLOCK_K": b, "SPLIT": s}, num_warps=8 if s == 4 else 4, num_stages=1)
            for b, s in ((256, 1), (512, 1), (1024, 1), (1024, 4), (256, 4))]


@triton.autotune(configs=configs(), key=["K"], reset_to_zero=["y_ptr"])
@triton.jit
def matvec(a_ptr, x_ptr, y_ptr, K, BLOCK_K: tl.constexpr, SPLIT: tl.constexpr):
    row = tl.program_id(0)
    part = tl.program_id(1)
    chunk = tl.cdiv(K, SPLIT)
    acc = tl.zeros([BLOCK_K], tl.float32)
    for start in range(part * chunk, (part + 1) * chunk, BLOCK_K):
        offs = start + tl.arange(0, BLOCK_K)
        mask = (offs < K) & (offs < (part + 1) * chunk)
        a = tl.load(a_ptr + row * K + offs, mask=mask, other=0.0)
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        acc += a * x
    tl.atomic_add(y_ptr + row, tl.sum(acc, 0))  # SPLIT=4: four adds race per row


def skew_the_clock(rank):
    """Rank 0 favours BLOCK_K=1024; rank 1 BLOCK_K=512, with 1024 close
    behind: the votes tie and the aggregated timing picks 1024."""
    factors = {0: {(1024, 1): 1.0}, 1: {(512, 1): 1.0, (1024, 1): 1.5}}[rank]
    own = matvec._bench

    def skewed(*args, config, **kwargs):
        timing = own(*args, config=config, **kwargs)
        factor = factors.get((config.kwargs["BLOCK_K"], config.kwargs["SPLIT"]), 3.0)
        return [t * factor for t in timing] if isinstance(timing, list) else timing * factor
    matvec._bench = skewed


def inputs(rows, cols):
    g = torch.Generator(device="cuda").manual_seed(rows * 7 + cols)
    scale = torch.logspace(-4, 4, cols, device="cuda")
    a = (torch.randn(rows, cols, device="cuda", generator=g) * scale).contiguous()
    x = torch.randn(cols, device="cuda", generator=g)
    return a, x


def rank_main(work, check_after_first_step):
    """One rank: STEPS steps over SHAPES; prints one JSON line."""
    import torch.distributed as dist
    import tunelock
    import tunelock.triton
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    tunelock.triton.install()
    skew_the_clock(rank)
    data = {shape: inputs(*shape) for shape in SHAPES}
    ys = {shape: torch.zeros(shape[0], device="cuda") for shape in SHAPES}
    result = {"rank": rank, "steps": []}

    def one_step():
        for _ in range(CALLS_PER_STEP):
            for (rows, cols), y in ys.items():
                a, x = data[(rows, cols)]
                y.zero_()
                matvec[lambda meta, rows=rows: (rows, meta["SPLIT"])](a, x, y, cols)
        torch.cuda.synchronize()

    start = time.perf_counter()
    for step in range(STEPS):
        one_step()
        bits = [hashlib.sha256(y.cpu().numpy().tobytes()).hexdigest()[:16] for y in ys.values()]
        kw = matvec.best_config.kwargs
        entry = {"bits": bits, "last_launched": f"BLOCK_K={kw['BLOCK_K']},SPLIT={kw['SPLIT']}"}
        if step == 0 and check_after_first_step:
            entry["verify"] = tunelock.verify()
        if step == 0:
            entry["first_step_wall"] = time.perf_counter() - start
        result["steps"].append(entry)
    # The steady step, timed by one rank at a time: two processes sharing a
    # GPU would time each other's time slices.
    for turn in range(2):
        dist.barrier()
        if turn == rank:
            samples = []
            for _ in range(TIMED_STEPS):
                began = time.perf_counter()
                one_step()
                samples.append(time.perf_counter() - began)
            result["steady_call_s"] = statistics.median(samples) / CALLS_PER_STEP / len(SHAPES)
        dist.barrier()
    result["digest"] = tunelock.choice_digest()
    tunelock.flush()
    dist.destroy_process_group()
    print(json.dumps(result))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def two_ranks(work, policy, check=True):
    env = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()),
           "WORLD_SIZE": "2", **policy}
    code = (f"import sys; sys.path[:0] = {sys.path!r}; import triton_consensus_checks as c; "
            f"c.rank_main({work!r}, {check!r})")
    here = os.path.dirname(os.path.abspath(__file__))
    ranks = [subprocess.Popen([sys.executable, "-c", code], env={**env, "RANK": str(r)}, cwd=here,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in range(2)]
    outs = [p.communicate(timeout=900) for p in ranks]
    results = []
    for (out, err), p in zip(outs, ranks):
        if p.returncode != 0:
            raise RuntimeError(err[-3000:])
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results, [err for _, err in outs]


def steady(results):
    return statistics.median(r["steady_call_s"] for r in results)


def main(work):
    os.makedirs(work, exist_ok=True)
    print(f"triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}")
    ok = True
    print("== 1. consensus, 2 ranks with skewed clocks")
    cons, errs = two_ranks(work, {"TUNELOCK_MODE": "consensus",
                                  "TUNELOCK_RECORD": os.path.join(work, "cons", "run")})
    for step in range(STEPS):
        same = cons[0]["steps"][step]["bits"] == cons[1]["steps"][step]["bits"]
        ok &= same
        print(f"  step {step}: bits {'identical' if same else 'DIFFER'} on both ranks; "
              f"launched {cons[0]['steps'][step]['last_launched']} / {cons[1]['steps'][step]['last_launched']}")
    print(f"  verify after step 0: {[r['steps'][0]['verify'] for r in cons]}; digests equal: "
          f"{cons[0]['digest'] == cons[1]['digest']}")
    ok &= cons[0]["digest"] == cons[1]["digest"]
    import tunelock
    report = tunelock.report([os.path.join(work, "cons", f"run.rank{r}.json") for r in range(2)])
    print(f"  the ranks' own clocks disagreed on {len(report['disagreements'])} key(s); flagged: "
          f"{sorted({s for d in report['disagreements'] for s in d['nondeterministic']})}")
    tables = os.path.join(work, "cons", "run.tables")
    print(f"  table: {os.listdir(tables)}")
    for line in errs[0].splitlines():
        if "consensus" in line:
            print("  rank 0:", line[:200])

    print("== 2. pinned with the consensus table, 2 ranks")
    pinned, _ = two_ranks(work, {"TUNELOCK_MODE": "pinned", "TUNELOCK_TABLE_PATH": tables,
                                 "TUNELOCK_ON_MISS": "error"})
    same = pinned[0]["steps"][0]["bits"] == cons[0]["steps"][-1]["bits"]
    ok &= same
    print(f"  pinned step 0 bits == consensus bits after the switch: {same}")
    print(f"  steady call (median of {TIMED_STEPS} steps, one rank at a time): consensus "
          f"{[round(r['steady_call_s'] * 1e6, 2) for r in cons]} us, pinned "
          f"{[round(r['steady_call_s'] * 1e6, 2) for r in pinned]} us; consensus speed = "
          f"{steady(pinned) / steady(cons):.3f}x pinned's")

    print("== 3. record, 2 ranks: the first step's cost")
    rec, _ = two_ranks(work, {"TUNELOCK_MODE": "record",
                              "TUNELOCK_RECORD": os.path.join(work, "rec", "run")})
    c0 = max(r["steps"][0]["first_step_wall"] for r in cons)
    r0 = max(r["steps"][0]["first_step_wall"] for r in rec)
    p0 = max(r["steps"][0]["first_step_wall"] for r in pinned)
    print(f"  first step and its check: consensus {c0:.2f} s, record {r0:.2f} s "
          f"({c0 / r0:.2f}x), pinned {p0:.2f} s")
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
