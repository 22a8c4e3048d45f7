"""Pinned means the same bits, with real Triton on a GPU (not run by ctest).

    python triton_atomic_checks.py WORKDIR

A matrix-vector kernel y = A x with configs BLOCK_K x SPLIT: SPLIT=4 adds
four partial sums per row with `tl.atomic_add`, so its bits depend on the
order the programs finish in; SPLIT=1 adds one partial into a zeroed y.

1. `auto` (Triton's own timing): which config wins per shape.
2. `pinned` without a table: the first pinned call's check names the racy
   config when the cost rule's cheapest is the atomic one.
3. record in 3 processes -> tunelock.merge -> 4 fresh pinned processes
   (on_miss=error, plus a shape the record never saw with min_cost): one
   output per shape; the merged table lists the flagged configs.
4. Cost: the first pinned call per key with the bits check vs without (us),
   and a key's first call in record mode (Triton's timing plus the audit)
   vs auto (Triton's timing alone), in ms.
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

from processes import fresh_process

SHAPES = [(64, 65536), (128, 32768), (256, 16384), (32, 131072)]
UNSEEN = (96, 49152)


def configs():
    out = []
    for block_k in (256, 1024):
        for split in (1, 4):
            # The atomic configs get fewer warps: the cost rule's cheapest is atomic.
            out.append(triton.Config({"BLOCK_K": block_k, "SPLIT": split},
                                     num_warps=2 if split == 4 else 4, num_stages=1))
    return out


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


def inputs(rows, cols):
    g = torch.Generator(device="cuda").manual_seed(rows * 7 + cols)
    scale = torch.logspace(-4, 4, cols, device="cuda")
    a = (torch.randn(rows, cols, device="cuda", generator=g) * scale).contiguous()
    x = torch.randn(cols, device="cuda", generator=g)
    return a, x


def call(rows, cols):
    a, x = inputs(rows, cols)
    y = torch.zeros(rows, device="cuda")
    matvec[lambda meta: (rows, meta["SPLIT"])](a, x, y, cols)
    torch.cuda.synchronize()
    return y


def digest(tensor):
    return hashlib.sha256(tensor.cpu().numpy().tobytes()).hexdigest()[:16]


def one_process(fields, shapes):
    import tunelock
    import tunelock.triton
    tunelock.triton.install(**fields)
    result = {}
    for rows, cols in shapes:
        y = call(rows, cols)
        kw = matvec.best_config.kwargs
        result[f"{rows}x{cols}"] = [f"BLOCK_K={kw['BLOCK_K']},SPLIT={kw['SPLIT']}", digest(y)]
    result["digest"] = tunelock.choice_digest()
    tunelock.flush()
    print(json.dumps(result))


def spawn(fields, shapes=SHAPES, env=None):
    return fresh_process("triton_atomic_checks", "one_process", fields, shapes, env=env)


def table(runs, label):
    differing = 0
    for rows, cols in [s for s in SHAPES + [UNSEEN] if f"{s[0]}x{s[1]}" in runs[0]]:
        shape = f"{rows}x{cols}"
        winners = sorted({run[shape][0] for run in runs})
        bits = {run[shape][1] for run in runs}
        differing += len(bits) > 1
        print(f"  {label:8s} {shape:>10s}: {len(bits)} distinct output(s) from {len(runs)} "
              f"processes; config(s) {winners}")
    return differing


def main(work):
    import tunelock
    os.makedirs(work, exist_ok=True)
    print(f"triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}")
    ok = True

    print("== 1. auto: Triton's own timing, 3 processes")
    table([spawn({"mode": "auto"})[0] for _ in range(3)], "auto")

    print("== 2. pinned, no table: the first call's check")
    run, err = spawn({"mode": "pinned"})
    named = [line for line in err.splitlines() if "gave different bits" in line]
    print(f"  {len(named)} warning(s); first: {named[0][:160] if named else None}")
    ok &= bool(named)

    print("== 3. record in 3 processes -> merge -> 4 pinned processes")
    for rank in range(3):
        spawn({"mode": "record", "record_path": os.path.join(work, "rec", "run")},
              env={"RANK": str(rank), "WORLD_SIZE": "3"})
    records = [os.path.join(work, "rec", f"run.rank{r}.json") for r in range(3)]
    report = tunelock.report(records)
    flagged = sorted({s for d in report["disagreements"] for s in d["nondeterministic"]})
    print(f"  the audits flagged: {flagged}")
    merged = tunelock.merge(records, os.path.join(work, "tables", "table.json"))
    arch = merged["arch"]
    os.replace(os.path.join(work, "tables", "table.json"), os.path.join(work, "tables", f"{arch}.json"))
    listed = tunelock.table(os.path.join(work, "tables", f"{arch}.json")).get("nondeterministic", {})
    print(f"  merged table: {merged['entries']} entries; nondeterministic: {listed}")
    pinned = [spawn({"mode": "pinned", "table_path": [os.path.join(work, "tables")],
                     "on_miss": "error"})[0] for _ in range(4)]
    differing = table(pinned, "pinned")
    unseen = [spawn({"mode": "pinned", "table_path": [os.path.join(work, "tables")]},
                    shapes=[UNSEEN])[0] for _ in range(4)]
    differing += table(unseen, "unseen")
    atomic_pinned = any("SPLIT=4" in run[s][0] for run in pinned + unseen for s in run if "x" in s)
    print(f"  {differing} shape(s) with more than one output; an atomic config pinned: {atomic_pinned}")
    ok &= differing == 0 and not atomic_pinned and bool(listed)

    print("== 4. cost")
    costs()
    print("summary: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


def first_calls(fields, rounds=5):
    """Microseconds of each shape's first call under a policy (kernels compiled beforehand)."""
    import tunelock.triton
    times = []
    for _ in range(rounds):
        tunelock.triton.install(**fields)  # a new policy: every key's first call again
        matvec.cache.clear()  # and Triton's own cache, so auto and record time again
        for rows, cols in SHAPES:
            a, x = inputs(rows, cols)
            y = torch.zeros(rows, device="cuda")
            torch.cuda.synchronize()
            start = time.perf_counter()
            matvec[lambda meta: (rows, meta["SPLIT"])](a, x, y, cols)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - start) * 1e6)
    return statistics.median(times)


def costs():
    import tunelock.triton
    tunelock.triton.install(mode="record", record_path="/tmp/tunelock-atomic-warm/run")
    for rows, cols in SHAPES:
        call(rows, cols)  # compile every config once
    with_check = first_calls({"mode": "pinned"})
    without = first_calls({"mode": "pinned", "check_bits": False})
    print(f"  first pinned call per key: {with_check:.0f} us with the bits check, "
          f"{without:.0f} us without (median over {len(SHAPES)} keys x 5 rounds)")
    recorded = first_calls({"mode": "record", "record_path": "/tmp/tunelock-atomic-warm/run"}, 3)
    auto = first_calls({"mode": "auto", "verify_every": 1000}, 3)
    print(f"  a key's first call: record (timing + audit) {recorded / 1e3:.1f} ms, "
          f"auto (timing alone) {auto / 1e3:.1f} ms")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/tunelock-atomic"))
