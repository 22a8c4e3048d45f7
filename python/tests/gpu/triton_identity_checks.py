"""Tables that know their kernels, with real Triton on a GPU (not run by ctest).

    python triton_identity_checks.py WORKDIR

1. Source identity: a Triton kernel recorded, merged, then its body edited
   (a library upgrade): the pinned run of the edited kernel names the
   mismatch, TUNELOCK_IDENTITY=strict refuses it, the unedited kernel runs
   quietly, and tunelock.coverage lists the edited run's keys.
2. Timed equivalents that cost what they save, on a step of six autotuned
   kernels whose tilings mostly give identical bits (as flash-linear-
   attention's do: up to 23 equivalents per key here), one with
   tl.atomic_add: the first step and the steady step of plain pinned,
   TUNELOCK_EQUIVALENT=timed in a first process (fresh equivalents cache)
   and in a second one (the cache the first wrote), each with a cold Triton
   cache, then each with the record's warm one, and the bits of all.
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

KERNEL_V1 = '''
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=w) for b in (256, 1024)
                          for w in (2, 4)], key=["n"])
@triton.jit
def scale_shift(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x * 2.0 + 1.0, mask=offs < n)
'''
# The upgrade: same name, same configs, another body.
KERNEL_V2 = KERNEL_V1.replace("x * 2.0 + 1.0", "(x + 0.5) * 2.0")


def identity_process(kernel_dir, fields, log_prefix):
    sys.path.insert(0, kernel_dir)
    import tunelock
    import tunelock.triton
    tunelock.triton.install(**fields)
    import idkernel
    n = 1 << 20
    x = torch.randn(n, device="cuda")
    y = torch.empty_like(x)
    idkernel.scale_shift[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, y, n)
    torch.cuda.synchronize()
    tunelock.flush(log_prefix)
    print(json.dumps({"ok": True}))


def part_identity(work):
    import tunelock
    for version, text in (("v1", KERNEL_V1), ("v2", KERNEL_V2)):
        os.makedirs(os.path.join(work, version), exist_ok=True)
        with open(os.path.join(work, version, "idkernel.py"), "w") as f:
            f.write(text)
    v1, v2 = os.path.join(work, "v1"), os.path.join(work, "v2")
    rec = os.path.join(work, "idrec", "run")
    fresh_process("triton_identity_checks", "identity_process", v1,
                  {"mode": "record", "record_path": rec}, "")
    merged = tunelock.merge([rec + ".rank0.json"], os.path.join(work, "idtables", "t.json"))
    arch = merged["arch"]
    table_file = os.path.join(work, "idtables", f"{arch}.json")
    os.replace(os.path.join(work, "idtables", "t.json"), table_file)
    identities = tunelock.table(table_file).get("identities", {})
    print(f"  table identities: {identities}")
    pinned = {"mode": "pinned", "table_path": [os.path.dirname(table_file)]}
    _, same_err = fresh_process("triton_identity_checks", "identity_process", v1, pinned,
                                os.path.join(work, "logs", "same"))
    _, edited_err = fresh_process("triton_identity_checks", "identity_process", v2, pinned,
                                  os.path.join(work, "logs", "edited"))
    named = [line for line in edited_err.splitlines() if "not the code its table" in line]
    print(f"  unedited kernel, pinned: mismatch named: {'not the code' in same_err}")
    print(f"  edited kernel, pinned: {named[0] if named else 'NO MISMATCH NAMED'}")
    try:
        fresh_process("triton_identity_checks", "identity_process", v2,
                      {**pinned, "identity": "strict"}, "")
        strict = "ran (not refused)"
    except RuntimeError as e:
        strict = "refused: " + next((l for l in str(e).splitlines() if "strict" in l), str(e)[-300:])
    print(f"  edited kernel, TUNELOCK_IDENTITY=strict: {strict}")
    same_cov = tunelock.coverage(table_file, os.path.join(work, "logs", "same.rank0.json"))
    edited_cov = tunelock.coverage(table_file, os.path.join(work, "logs", "edited.rank0.json"))
    print(f"  coverage: unedited covered {same_cov['covered']}; edited covered "
          f"{edited_cov['covered']}, misses {[(m['key'], m['gap']) for m in edited_cov['misses']]}")
    return (len(identities) == 1 and bool(named) and "not the code" not in same_err
            and strict.startswith("refused") and same_cov["covered"]
            and [m["gap"] for m in edited_cov["misses"]] == ["identity"])


# ---- 2. a step of six kernels with many equivalent tilings ---------------

ROWS, COLS = 4096, 4096
ELEMENTWISE = [triton.Config({"BLOCK": b}, num_warps=w, num_stages=s)
               for b in (256, 512, 1024, 2048) for w in (1, 2, 4) for s in (1, 2)]


@triton.autotune(configs=ELEMENTWISE, key=["n"])
@triton.jit
def gelu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    y = x / (1.0 + tl.exp(-1.702 * x))  # the sigmoid approximation of GELU
    tl.store(y_ptr + offs, y, mask=offs < n)


@triton.autotune(configs=ELEMENTWISE, key=["n"])
@triton.jit
def axpby(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(z_ptr + offs, 1.5 * tl.load(x_ptr + offs, mask=m) - 0.5 * tl.load(y_ptr + offs, mask=m),
             mask=m)


@triton.autotune(configs=ELEMENTWISE, key=["n"])
@triton.jit
def silu_mul(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(z_ptr + offs, x / (1.0 + tl.exp(-x)) * tl.load(y_ptr + offs, mask=m), mask=m)


# Row-wise: one program per row, the whole row in one block: warps and
# stages change the speed, never the order of the sum.
ROWWISE = [triton.Config({}, num_warps=w, num_stages=s) for w in (2, 4, 8, 16) for s in (1, 2, 3)]


@triton.autotune(configs=ROWWISE, key=["cols"])
@triton.jit
def softmax(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * cols + offs, mask=offs < cols, other=-float("inf"))
    e = tl.exp(x - tl.max(x, 0))
    tl.store(y_ptr + row * cols + offs, e / tl.sum(e, 0), mask=offs < cols)


@triton.autotune(configs=ROWWISE, key=["cols"])
@triton.jit
def rms_norm(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * cols + offs, mask=offs < cols, other=0.0)
    tl.store(y_ptr + row * cols + offs, x / tl.sqrt(tl.sum(x * x, 0) / cols + 1e-6),
             mask=offs < cols)


# Column sums with tl.atomic_add: the order partial sums land in changes
# from run to run, so the audit flags it and no config is ever equivalent.
@triton.autotune(configs=[triton.Config({"ROWS_PER": r}, num_warps=4) for r in (16, 64, 256)],
                 key=["rows", "cols"], reset_to_zero=["out_ptr"])
@triton.jit
def column_sum(x_ptr, out_ptr, rows, cols, ROWS_PER: tl.constexpr, BLOCK: tl.constexpr):
    start = tl.program_id(0) * ROWS_PER
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for r in range(ROWS_PER):
        acc += tl.load(x_ptr + (start + r) * cols + offs, mask=offs < cols, other=0.0)
    tl.atomic_add(out_ptr + offs, acc, mask=offs < cols)


def step(x, y, a, b, c, s, r, col):
    n = x.numel()
    grid = lambda m: (triton.cdiv(n, m["BLOCK"]),)  # noqa: E731
    gelu[grid](x, a, n)
    axpby[grid](a, y, b, n)
    silu_mul[grid](b, x, c, n)
    block = triton.next_power_of_2(COLS)
    softmax[(ROWS,)](c, s, COLS, BLOCK=block)
    rms_norm[(ROWS,)](s, r, COLS, BLOCK=block)
    col.zero_()
    column_sum[lambda m: (ROWS // m["ROWS_PER"],)](r, col, ROWS, COLS, BLOCK=block)


def step_process(fields, equivalents_cache):
    os.environ["TUNELOCK_EQUIVALENT_CACHE"] = equivalents_cache
    import tunelock
    import tunelock.triton
    tunelock.triton.install(**fields)
    g = torch.Generator(device="cuda").manual_seed(5)
    x = torch.randn(ROWS, COLS, device="cuda", generator=g)
    y = torch.randn(ROWS, COLS, device="cuda", generator=g)
    a, b, c, s, r = (torch.empty_like(x) for _ in range(5))
    col = torch.empty(COLS, device="cuda")
    torch.cuda.synchronize()
    start = time.perf_counter()
    step(x, y, a, b, c, s, r, col)
    torch.cuda.synchronize()
    first = time.perf_counter() - start
    # The bits: the deterministic kernels' last output (the atomic one's
    # column sums change from run to run by design).
    bits = hashlib.sha256(r.cpu().numpy().tobytes()).hexdigest()[:16]
    rounds = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(20):
            step(x, y, a, b, c, s, r, col)
        torch.cuda.synchronize()
        rounds.append((time.perf_counter() - start) / 20 * 1e3)
    tunelock.flush()
    print(json.dumps({"first_s": first, "step_ms": statistics.median(rounds), "bits": bits,
                      "digest": tunelock.choice_digest()}))


def spawn_step(work, label, fields, cache, triton_cache=None):
    """One step process; Triton's cache cold (its own, empty) unless named."""
    env = {"TRITON_CACHE_DIR": triton_cache or os.path.join(work, "triton-cache", label)}
    return fresh_process("triton_identity_checks", "step_process", fields, cache, env=env)[0]


def part_equivalents(work):
    import tunelock
    # Three recording processes, as three ranks: their votes and tie sets
    # decide what a timed run finds worth timing.
    recs = [os.path.join(work, "steprec", f"run{n}") for n in range(3)]
    warm = os.path.join(work, "triton-cache", "warm")  # the record compiles every config into it
    recorded = [spawn_step(work, f"record{n}", {"mode": "record", "record_path": rec}, "off", warm)
                for n, rec in enumerate(recs)][0]
    merged = tunelock.merge([rec + ".rank0.json" for rec in recs],
                            os.path.join(work, "steptables", "t.json"))
    arch = merged["arch"]
    os.replace(os.path.join(work, "steptables", "t.json"),
               os.path.join(work, "steptables", f"{arch}.json"))
    table = tunelock.table(os.path.join(work, "steptables", f"{arch}.json"))
    counts = {k.split(".")[-1]: max(len(e.get("equivalent", [])) for e in keys.values())
              for k, keys in table["kernels"].items()}

    def worth_timing(e):  # selection.hpp, equivalents_worth_timing
        first = min(2, e.get("faster_equivalents", 2))
        ties = [t for t in e.get("ties", []) if t in e.get("equivalent", [])[first:]]
        return min(first, len(e.get("equivalent", []))) + len(ties)
    worth = {k.split(".")[-1]: max(worth_timing(e) for e in keys.values())
             for k, keys in table["kernels"].items()}
    print(f"  record (Triton's own timing of every config, cold cache): first step "
          f"{recorded['first_s']:.2f} s; equivalents per key: {counts}; "
          f"worth timing: {worth}")
    pinned = {"mode": "pinned", "table_path": [os.path.join(work, "steptables")]}
    timed = {**pinned, "equivalent": "timed"}
    cache = os.path.join(work, "equivalents.json")
    ok = True
    for triton_cache in ("cold", "warm"):
        print(f"  -- Triton's cache {triton_cache} in every process"
              + (" (empty)" if triton_cache == "cold" else " (the record's: every config compiled)"))
        shared = warm if triton_cache == "warm" else None
        runs = {}
        for turn in (1, 2):
            if os.path.exists(cache):
                os.remove(cache)
            runs.setdefault("plain pinned", []).append(
                spawn_step(work, f"{triton_cache}-pinned{turn}", pinned, "off", shared))
            runs.setdefault("timed, first process", []).append(
                spawn_step(work, f"{triton_cache}-timed-a{turn}", timed, cache, shared))
            runs.setdefault("timed, second process", []).append(
                spawn_step(work, f"{triton_cache}-timed-b{turn}", timed, cache, shared))
        for label, results in runs.items():
            firsts = ", ".join("%.2f" % r["first_s"] for r in results)
            steadies = ", ".join("%.3f" % r["step_ms"] for r in results)
            print(f"  {label:23s}: first step {firsts} s; steady {steadies} ms; "
                  f"bits {sorted({r['bits'] for r in results})}")
        first = {label: min(r["first_s"] for r in results) for label, results in runs.items()}
        steady = {label: min(r["step_ms"] for r in results) for label, results in runs.items()}
        base = "plain pinned"
        for label in runs:
            if label != base:
                print(f"  {label} vs plain pinned: first step {first[label] / first[base]:.2f}x, "
                      f"steady step {steady[base] / steady[label]:.3f}x (>1: faster)")
        bits = {r["bits"] for results in runs.values() for r in results}
        digests = {r["digest"] for results in runs.values() for r in results}
        print(f"  one output across all: {len(bits) == 1}; one digest: {len(digests) == 1}")
        ok &= len(bits) == 1 and len(digests) == 1
    return ok


def main(work):
    os.makedirs(work, exist_ok=True)
    print(f"triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}")
    print("== 1. source identity")
    ok = part_identity(work)
    print("== 2. timed equivalents: first and steady step, bits")
    ok &= part_equivalents(work)
    print("summary: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/tunelock-identity"))
