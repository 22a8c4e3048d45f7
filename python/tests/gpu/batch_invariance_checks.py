"""Batch-invariant tables with real Triton kernels on a GPU (not run by
ctest: CI has no GPU; the host family test covers the same logic there).

    python batch_invariance_checks.py all WORKDIR

Three kernels declare their batch dim with tunelock.triton.batch_rows:
a GEMM (bf16 in, fp32 out, N = K = 4096) whose configs include split-K
with tl.atomic_add, fixed at 4 ways or following M (4 ways up to M = 64,
as split-K heuristics do: the negative control); RMSNorm and log-softmax
over rows of 4096 and 8192. For M in 1, 2, 4, ..., 4096:

1. record under TUNELOCK_BATCH_INVARIANT=1 and plain, in fresh processes;
   merge each; `tunelock table invariance` on both (exit 0 / exit 1);
2. pinned on each table: the same rows alone (first M rows) and inside the
   M = 4096 call, every row's bits compared: differing rows per kernel;
3. side by side in one process: invariant-tuned against per-shape tuned
   (geomean), against one fixed config (the fixed-config libraries'
   128x128x64, at decode sizes M <= 32), and against torch.mm at M <= 32.
"""
import json
import math
import os
import subprocess
import sys

import torch
import triton
import triton.language as tl

SIZES = [2 ** i for i in range(13)]  # 1 .. 4096
N = K = 4096
NORM_N = 4096
SOFTMAX_N = 8192


def _split(split_k, m):
    return split_k if split_k > 0 else (4 if m <= 64 else 1)


MM_CONFIGS = [
    triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "SPLIT_K": s}, num_warps=w,
                  num_stages=st)
    for bm, bn, bk, s, w, st in [
        (16, 64, 128, 1, 4, 4), (32, 64, 128, 1, 4, 4), (64, 64, 64, 1, 4, 4),
        (64, 128, 64, 1, 4, 4), (128, 128, 64, 1, 8, 3), (128, 256, 64, 1, 8, 3),
        (16, 64, 128, 4, 4, 4), (64, 128, 64, 4, 4, 4),  # split-K, atomic: racy
        (16, 64, 128, 0, 4, 4), (64, 128, 64, 0, 4, 4),  # split-K by M: batch-variant
    ]]


@triton.autotune(configs=MM_CONFIGS, key=["M", "N", "K"], reset_to_zero=["c_ptr"])
@triton.jit
def bi_mm(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
          BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr):
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    splits = tl.num_programs(1)
    grid_n = tl.cdiv(N, BLOCK_N)
    rm = (pid // grid_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = (pid % grid_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    k_per = tl.cdiv(tl.cdiv(K, BLOCK_K), splits) * BLOCK_K
    k_start = pid_k * k_per
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for k in range(0, k_per, BLOCK_K):
        rk = k_start + k + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :],
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :],
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    c = c_ptr + rm[:, None] * N + rn[None, :]
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    if SPLIT_K == 1:
        tl.store(c, acc, mask=mask)
    else:
        tl.atomic_add(c, acc, mask=mask)


def mm_grid(meta):
    """From the call's own M (never a closure's): a call on fewer rows gets
    the grid, and the split, that M calls for."""
    return (triton.cdiv(meta["M"], meta["BLOCK_M"]) * triton.cdiv(meta["N"], meta["BLOCK_N"]),
            _split(meta["SPLIT_K"], meta["M"]))


def rows_grid(meta):
    return (meta["M"],)


def mm(a, b, c):
    bi_mm[mm_grid](a, b, c, a.shape[0], N, K)


NORM_CONFIGS = [triton.Config({"BLOCK": b}, num_warps=w)
                for b, w in [(512, 4), (1024, 4), (1024, 8), (2048, 8), (4096, 8), (4096, 16)]]


@triton.autotune(configs=NORM_CONFIGS, key=["M", "NCOLS"])
@triton.jit
def bi_rmsnorm(x_ptr, w_ptr, y_ptr, M, NCOLS, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, NCOLS, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * NCOLS + cols, mask=cols < NCOLS, other=0.0).to(tl.float32)
        acc += x * x
    scale = 1.0 / tl.sqrt(tl.sum(acc, 0) / NCOLS + 1e-6)
    for start in range(0, NCOLS, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * NCOLS + cols, mask=cols < NCOLS, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=cols < NCOLS, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * NCOLS + cols, x * scale * w, mask=cols < NCOLS)


SOFTMAX_CONFIGS = [triton.Config({"BLOCK": b}, num_warps=w)
                   for b, w in [(1024, 4), (2048, 8), (4096, 8), (8192, 16)]]


@triton.autotune(configs=SOFTMAX_CONFIGS, key=["M", "NCOLS"])
@triton.jit
def bi_log_softmax(x_ptr, y_ptr, M, NCOLS, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    top = tl.full([BLOCK], -float("inf"), tl.float32)
    for start in range(0, NCOLS, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * NCOLS + cols, mask=cols < NCOLS, other=-float("inf"))
        top = tl.maximum(top, x.to(tl.float32))
    peak = tl.max(top, 0)
    total = tl.zeros([BLOCK], tl.float32)
    for start in range(0, NCOLS, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * NCOLS + cols, mask=cols < NCOLS, other=-float("inf"))
        total += tl.exp(x.to(tl.float32) - peak)
    log_total = tl.log(tl.sum(total, 0)) + peak
    for start in range(0, NCOLS, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * NCOLS + cols, mask=cols < NCOLS, other=0.0)
        tl.store(y_ptr + row * NCOLS + cols, x.to(tl.float32) - log_total, mask=cols < NCOLS)


def inputs():
    g = torch.Generator(device="cuda").manual_seed(2026)
    full = SIZES[-1]
    return {
        "a": torch.randn(full, K, device="cuda", generator=g).to(torch.bfloat16),
        "b": (torch.randn(K, N, device="cuda", generator=g) / 64).to(torch.bfloat16),
        "x": torch.randn(full, NORM_N, device="cuda", generator=g).to(torch.bfloat16),
        "w": torch.randn(NORM_N, device="cuda", generator=g).to(torch.bfloat16),
        "logits": (torch.randn(full, SOFTMAX_N, device="cuda", generator=g) * 4),
    }


def run_kernel(kind, data, m):
    """The kernel on the first m rows; its output."""
    if kind == "mm":
        c = torch.zeros(m, N, device="cuda", dtype=torch.float32)
        mm(data["a"][:m], data["b"], c)
        return c
    if kind == "rmsnorm":
        y = torch.empty(m, NORM_N, device="cuda", dtype=torch.float32)
        bi_rmsnorm[rows_grid](data["x"][:m], data["w"], y, m, NORM_N)
        return y
    y = torch.empty(m, SOFTMAX_N, device="cuda", dtype=torch.float32)
    bi_log_softmax[rows_grid](data["logits"][:m], y, m, SOFTMAX_N)
    return y


KINDS = ("mm", "rmsnorm", "log_softmax")


def declare():
    import tunelock.triton
    tunelock.triton.batch_rows(bi_mm, "M", {"a_ptr": 0, "c_ptr": 0})
    tunelock.triton.batch_rows(bi_rmsnorm, "M", {"x_ptr": 0, "y_ptr": 0})
    tunelock.triton.batch_rows(bi_log_softmax, "M", {"x_ptr": 0, "y_ptr": 0})


def record(prefix, invariant):
    import tunelock
    declare()
    tunelock.install(mode="record", record_path=prefix, batch_invariant=invariant)
    data = inputs()
    for kind in KINDS:
        for m in SIZES:
            run_kernel(kind, data, m)
    torch.cuda.synchronize()
    tunelock.flush()


def differing_rows(table_dir, invariant):
    """Per kernel: rows of the first-M call whose bits differ from the same
    rows of the M = 4096 call, summed over every M."""
    import tunelock
    declare()
    tunelock.install(mode="pinned", table_path=[table_dir], on_miss="error",
                     batch_invariant=invariant)
    data = inputs()
    out = {}
    for kind in KINDS:
        full = run_kernel(kind, data, SIZES[-1])
        differ = 0
        for m in SIZES:
            part = run_kernel(kind, data, m)
            same = (part.view(torch.int32) == full[:m].view(torch.int32)).all(dim=1)
            differ += int((~same).sum())
        out[kind] = differ
    return out


def timed(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=100)


def bench(invariant_dir, plain_dir):
    """Side by side in one process: each table's pinned configs, one fixed
    config, and torch.mm, per M; ratios as geomeans."""
    import tunelock
    data = inputs()
    tables = {name: tunelock.table(os.path.join(d, sorted(f for f in os.listdir(d))[0]))
              for name, d in (("invariant", invariant_dir), ("plain", plain_dir))}
    fixed = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "SPLIT_K": 1}

    def config_for(table, m):
        name = next(k for k in table["kernels"] if k.endswith("bi_mm"))
        entries = table["kernels"][name]
        entry = entries[next(k for k in entries if k.split("|")[0] == f"M={m}")]
        return {k: entry["kwargs"][k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "SPLIT_K")}, \
            entry.get("num_warps", 4), entry.get("num_stages", 3)

    def direct(meta, warps, stages, m):
        a, b = data["a"][:m], data["b"]
        c = torch.zeros(m, N, device="cuda", dtype=torch.float32)
        split = _split(meta["SPLIT_K"], m)
        grid = (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]), split)
        fn = bi_mm.fn
        return lambda: (c.zero_() if split > 1 else None,
                        fn[grid](a, b, c, m, N, K, num_warps=warps, num_stages=stages, **meta))

    rows = []
    for m in SIZES:
        inv = config_for(tables["invariant"], m)
        plain = config_for(tables["plain"], m)
        row = {"M": m, "invariant": timed(direct(*inv, m)), "plain": timed(direct(*plain, m)),
               "fixed": timed(direct(fixed, 8, 3, m)),
               "torch_mm": timed(lambda: torch.mm(data["a"][:m], data["b"])),
               "invariant_config": inv[0], "plain_config": plain[0]}
        rows.append(row)
        print(json.dumps(row), flush=True)

    def geomean(values):
        return math.exp(sum(math.log(v) for v in values) / len(values))
    decode = [r for r in rows if r["M"] <= 32]
    summary = {
        "invariant_over_per_shape_tuned": geomean([r["invariant"] / r["plain"] for r in rows]),
        "fixed_over_invariant_decode": geomean([r["fixed"] / r["invariant"] for r in decode]),
        "torch_mm_over_invariant_decode": geomean([r["torch_mm"] / r["invariant"] for r in decode]),
    }
    print("summary", json.dumps(summary), flush=True)


def main():
    step = sys.argv[1]
    if step == "record":
        record(sys.argv[2], sys.argv[3] == "1")
    elif step == "rows":
        print("rows", sys.argv[3], json.dumps(differing_rows(sys.argv[2], sys.argv[3] == "1")),
              flush=True)
    elif step == "bench":
        bench(sys.argv[2], sys.argv[3])
    elif step == "all":
        work = sys.argv[2]
        os.makedirs(work, exist_ok=True)
        me = os.path.abspath(__file__)
        for name, flag in (("invariant", "1"), ("plain", "0")):
            subprocess.run([sys.executable, me, "record", os.path.join(work, name), flag],
                           check=True)
            tables = os.path.join(work, f"{name}-tables")
            os.makedirs(tables, exist_ok=True)
            arch = json.load(open(os.path.join(work, f"{name}.rank0.json")))
            table = os.path.join(tables, f"{next(iter(arch))}.json")
            subprocess.run(["tunelock", "merge", os.path.join(work, f"{name}.rank0.json"),
                            "-o", table], check=True)
            gate = subprocess.run(["tunelock", "table", "invariance", table],
                                  capture_output=True, text=True)
            print(f"gate {name}: exit {gate.returncode}\n{gate.stdout}{gate.stderr}", flush=True)
        for name, flag in (("invariant", "1"), ("plain", "0")):
            subprocess.run([sys.executable, me, "rows", os.path.join(work, f"{name}-tables"),
                            flag], check=True)
        subprocess.run([sys.executable, me, "bench", os.path.join(work, "invariant-tables"),
                        os.path.join(work, "plain-tables")], check=True)


if __name__ == "__main__":
    main()
