"""Determinism without the speed cost, with real Triton on a GPU (not run by ctest).

    python triton_equivalent_checks.py WORKDIR

A three-kernel step (a tl.dot matmul, a softmax, a row sum), every kernel
autotuned: tile shapes, num_warps and num_stages change speed, and some of
them (the matmul's BLOCK_K, the row sum's BLOCK) change the bits.

1. record in 3 processes -> merge: the bit classes the audits found, and
   each entry's "equivalent" list.
2. 8 fresh pinned processes with TUNELOCK_EQUIVALENT=timed: one output.
3. Steady-state step time, one process per mode, twice in turn: Triton's
   own autotuning, pinned to the table, pinned with TUNELOCK_EQUIVALENT=timed;
   then the same table with each entry swapped for the slowest config of its
   class (a table recorded elsewhere, or pinned by hand): plain pinned pays
   for it, timed does not, and the bits stay the same.
"""
import hashlib
import json
import os
import statistics
import sys
import time

import torch
import triton
import triton.language as tl

import triton_gpu_checks
from processes import fresh_process

M = N = K = 8192
ROWS, COLS = 8192, 8192


def matmul_configs():
    return [triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}, num_warps=w, num_stages=s)
            for bm in (64, 128) for bn in (64, 128) for bk in (32, 64) for w, s in ((4, 3), (8, 4))]


@triton.autotune(configs=matmul_configs(), key=["M", "N", "K"])
@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
           BLOCK_K: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.autotune(configs=[triton.Config({}, num_warps=w, num_stages=s)
                          for w in (4, 8, 16) for s in (1, 2)], key=["cols"])
@triton.jit
def softmax(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * cols + offs, mask=offs < cols, other=-float("inf"))
    x = x - tl.max(x, 0)
    e = tl.exp(x)
    tl.store(y_ptr + row * cols + offs, e / tl.sum(e, 0), mask=offs < cols)


# The row sum of triton_gpu_checks, with num_warps among its configs too.
row_sum = triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=w, num_stages=1)
                                   for b in (256, 1024) for w in (2, 4, 8)],
                          key=["cols"])(triton_gpu_checks.row_sum.fn)


def inputs():
    g = torch.Generator(device="cuda").manual_seed(11)
    a = torch.randn(M, K, device="cuda", generator=g, dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", generator=g, dtype=torch.float16)
    return a, b, torch.empty(M, N, device="cuda"), torch.empty(ROWS, COLS, device="cuda"), \
        torch.empty(ROWS, device="cuda")


def step(a, b, c, s, r):
    matmul[lambda m: (M // m["BLOCK_M"], N // m["BLOCK_N"])](a, b, c, M, N, K)
    softmax[(ROWS,)](c.view(ROWS, COLS), s, COLS, BLOCK=triton.next_power_of_2(COLS))
    row_sum[(ROWS,)](s, r, COLS)


def one_process(fields, measure):
    import tunelock
    import tunelock.triton
    tunelock.triton.install(**fields)
    tensors = inputs()
    step(*tensors)
    torch.cuda.synchronize()
    result = {"output": hashlib.sha256(tensors[4].cpu().numpy().tobytes()).hexdigest()[:16],
              "matmul": str(matmul.best_config), "digest": tunelock.choice_digest()}
    if measure:
        rounds = []
        for _ in range(7):
            start = time.perf_counter()
            for _ in range(10):
                step(*tensors)
            torch.cuda.synchronize()
            rounds.append((time.perf_counter() - start) / 10 * 1e3)
        result["step_ms"] = statistics.median(rounds)
    tunelock.flush()
    print(json.dumps(result))


def spawn(fields, measure=False, env=None):
    return fresh_process("triton_equivalent_checks", "one_process", fields, measure, env=env)[0]


def write_slowest_of_each_class(table, sidecar_path, out_path):
    """The table with each entry swapped for its class's slowest config (by
    rank 0's timings): same bits, a slower pin."""
    import copy
    import tunelock
    sidecar = json.load(open(sidecar_path))
    slow = copy.deepcopy(table)
    for kernel, keys in slow["kernels"].items():
        for key, entry in keys.items():
            members = [entry] + entry.get("equivalent", [])
            if len(members) < 2:
                continue
            timed = {t["signature"]: t["median_ms"] or 0.0
                     for t in sidecar["timings"][table["arch"]][kernel][key]}
            # Configs alone: the entry's equivalents and tie set describe the old pin.
            lists = ("equivalent", "ties", "faster_equivalents")
            plain = [{k: v for k, v in m.items() if k not in lists} for m in members]
            slowest = max(plain, key=lambda m: timed.get(tunelock.signature(m), 0.0))
            keys[key] = {**slowest, "equivalent": [m for m in plain if m != slowest]}
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    with open(out_path, "w") as f:
        json.dump(slow, f)


def main(work):
    import tunelock
    os.makedirs(work, exist_ok=True)
    print(f"triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}")
    print("== 1. record in 3 processes -> merge")
    t0 = time.perf_counter()
    for rank in range(3):
        spawn({"mode": "record", "record_path": os.path.join(work, "rec", "run")},
              env={"RANK": str(rank), "WORLD_SIZE": "3"})
    print(f"  3 record processes: {time.perf_counter() - t0:.0f} s")
    records = [os.path.join(work, "rec", f"run.rank{r}.json") for r in range(3)]
    for r in range(3):
        sidecar = json.load(open(os.path.join(work, "rec", f"run.rank{r}.timings.json")))
        for arch, kernels in sidecar["timings"].items():
            for kernel, keys in kernels.items():
                for key, timed in keys.items():
                    classes = {}
                    for t in timed:
                        classes.setdefault(t.get("class"), []).append(t["signature"])
                    print(f"  rank {r} {kernel.split('.')[-1]}: {len(timed)} configs in "
                          f"{len([c for c in classes if c is not None])} bit class(es), "
                          f"sizes {sorted(len(v) for c, v in classes.items() if c is not None)}")
    merged = tunelock.merge(records, os.path.join(work, "tables", "table.json"))
    arch = merged["arch"]
    path = os.path.join(work, "tables", f"{arch}.json")
    os.replace(os.path.join(work, "tables", "table.json"), path)
    table = tunelock.table(path)
    for kernel, keys in table["kernels"].items():
        for key, entry in keys.items():
            print(f"  table {kernel.split('.')[-1]}: entry {entry['kwargs']} warps {entry['num_warps']} "
                  f"stages {entry['num_stages']}, {len(entry.get('equivalent', []))} equivalent")
    tables = [os.path.join(work, "tables")]

    print("== 2. 8 fresh pinned processes with TUNELOCK_EQUIVALENT=timed")
    runs = [spawn({"mode": "pinned", "table_path": tables, "on_miss": "error", "equivalent": "timed"})
            for _ in range(8)]
    outputs = {r["output"] for r in runs}
    plain = spawn({"mode": "pinned", "table_path": tables, "on_miss": "error"})
    print(f"  {len(outputs)} distinct output(s); plain pinned's output the same: "
          f"{plain['output'] in outputs}; digests equal to plain pinned's: "
          f"{all(r['digest'] == plain['digest'] for r in runs)}")
    print(f"  matmul launched under timed: {sorted({r['matmul'] for r in runs})}")
    ok = len(outputs) == 1 and plain["output"] in outputs

    slow = [os.path.join(work, "slow")]
    write_slowest_of_each_class(table, os.path.join(work, "rec", "run.rank0.timings.json"),
                                os.path.join(slow[0], f"{arch}.json"))
    print("== 3. step time (ms, median of 7 rounds x 10 steps), one process per mode, twice")
    modes = {"Triton autotuning": {"mode": "auto"},
             "pinned": {"mode": "pinned", "table_path": tables, "on_miss": "error"},
             "pinned, equivalent=timed": {"mode": "pinned", "table_path": tables,
                                          "on_miss": "error", "equivalent": "timed"},
             "slow table, pinned": {"mode": "pinned", "table_path": slow, "on_miss": "error"},
             "slow table, timed": {"mode": "pinned", "table_path": slow, "on_miss": "error",
                                   "equivalent": "timed"}}
    times, outs = {label: [] for label in modes}, {label: set() for label in modes}
    for _ in range(2):
        for label, fields in modes.items():
            result = spawn(fields, measure=True)
            times[label].append(result["step_ms"])
            outs[label].add(result["output"])
    for label, values in times.items():
        print(f"  {label:26s}: {', '.join(f'{v:.4f}' for v in values)}  output {sorted(outs[label])}")
    auto, pinned_ms, timed_ms, slow_ms, slow_timed_ms = (min(times[label]) for label in modes)
    print(f"  throughput, equivalent=timed vs Triton: {auto / timed_ms:.3f}x; "
          f"vs plain pinned: {pinned_ms / timed_ms:.3f}x; plain pinned vs Triton: {auto / pinned_ms:.3f}x")
    print(f"  slow table: timed vs Triton {auto / slow_timed_ms:.3f}x, plain pinned vs Triton "
          f"{auto / slow_ms:.3f}x; timed vs plain pinned {slow_ms / slow_timed_ms:.3f}x")
    ok &= outs["slow table, timed"] == outs["slow table, pinned"] == outs["pinned"]
    print("summary: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/tunelock-equivalent"))
