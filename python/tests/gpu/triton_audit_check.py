"""What a table costs today, with real Triton on a GPU (not run by ctest).

    python triton_audit_check.py WORKDIR

The equivalence checks' step (a tl.dot matmul, a softmax, a row sum) and
the atomic checks' matrix-vector kernel (SPLIT=4 adds with tl.atomic_add):

1. record in 2 processes -> merge -> audit (TUNELOCK_MODE=audit) in a fresh
   process: the audit run's outputs and digest equal a pinned run's, and
   every entry's regret is near 0 %.
2. the same table with the matmul's entry swapped for its cheapest config
   (the cost rule's pick): that entry's regret against the per-call ratio
   measured directly (triton.testing.do_bench of the two configs).
3. the matvec's entry swapped for its atomic config: the audit names its
   changed bits and fails.
"""
import copy
import json
import os
import sys

import torch
import triton

import triton_atomic_checks as atomic
import triton_equivalent_checks as equivalent
from processes import fresh_process

SHAPE = atomic.SHAPES[0]


def one_process(fields):
    import tunelock
    import tunelock.triton
    tunelock.triton.install(**fields)
    tensors = equivalent.inputs()
    for _ in range(3):
        equivalent.step(*tensors)
    y = atomic.call(*SHAPE)
    torch.cuda.synchronize()
    result = {"step": equivalent.hashlib.sha256(tensors[4].cpu().numpy().tobytes()).hexdigest()[:16],
              "matvec": atomic.digest(y), "digest": tunelock.choice_digest()}
    tunelock.flush()
    print(json.dumps(result))


def spawn(fields, env=None):
    return fresh_process("triton_audit_check", "one_process", fields, env=env)[0]


def per_call_ms(config):
    """The matmul at the step's shape with `config`, timed by Triton's do_bench."""
    a, b, c, _, _ = equivalent.inputs()
    kw = config["kwargs"]
    grid = (equivalent.M // kw["BLOCK_M"], equivalent.N // kw["BLOCK_N"])
    run = lambda: equivalent.matmul.fn[grid](a, b, c, equivalent.M, equivalent.N, equivalent.K,  # noqa: E731
                                             num_warps=config["num_warps"],
                                             num_stages=config["num_stages"], **kw)
    return triton.testing.do_bench(run, warmup=50, rep=300)


def audit(work, name, tables):
    import tunelock
    prefix = os.path.join(work, name, "run")
    audited = spawn({"mode": "audit", "table_path": [tables], "record_path": prefix})
    pinned = spawn({"mode": "pinned", "table_path": [tables]})
    report = tunelock.audit([prefix + ".rank0.audit.json"])
    print(report["text"])
    same = audited == pinned
    print(f"  audit run launched what pinned launches (outputs and digest): {same}")
    return report, same


def main(work):
    import tunelock
    os.makedirs(work, exist_ok=True)
    print(f"triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name()}")
    ok = True

    print("== 1. record in 2 processes -> merge -> audit")
    for rank in range(2):
        spawn({"mode": "record", "record_path": os.path.join(work, "rec", "run")},
              env={"RANK": str(rank), "WORLD_SIZE": "2"})
    tables = os.path.join(work, "tables")
    table_file = os.path.join(tables, f"{json.load(open(os.path.join(work, 'rec', 'run.rank0.json'))).popitem()[0]}.json")
    tunelock.merge([os.path.join(work, "rec", f"run.rank{r}.json") for r in range(2)], table_file)
    report, same = audit(work, "audit-recorded", tables)
    worst = max(abs(r["regret_pct"] or 0) for r in report["rows"])
    print(f"summary 1: {len(report['rows'])} entries, largest regret {worst:.1f}%")
    ok &= same and not any(r["bits_changed"] for r in report["rows"])

    print("== 2. the matmul's entry swapped for the cheapest config")
    table = json.load(open(table_file))
    matmul_name = next(k for k in table["kernels"] if k.endswith("matmul"))
    (key, entry), = table["kernels"][matmul_name].items()
    candidates = [{"kwargs": dict(c.kwargs), "num_warps": c.num_warps, "num_stages": c.num_stages}
                  for c in equivalent.matmul_configs()]
    cheapest = candidates[tunelock.choose(matmul_name, key, candidates).index]
    recorded = {k: v for k, v in entry.items() if k not in ("equivalent", "ties", "faster_equivalents")}
    swapped = copy.deepcopy(table)
    swapped["kernels"][matmul_name][key] = cheapest
    slow_tables = os.path.join(work, "tables-cheapest")
    os.makedirs(slow_tables, exist_ok=True)
    json.dump(swapped, open(os.path.join(slow_tables, os.path.basename(table_file)), "w"))
    report, same = audit(work, "audit-cheapest", slow_tables)
    row = next(r for r in report["rows"] if r["kernel"] == matmul_name)
    cheap_ms, fastest_ms = per_call_ms(cheapest), per_call_ms(recorded)
    measured = 100 * (cheap_ms / fastest_ms - 1)
    print(f"summary 2: cheapest {tunelock.signature(cheapest)}: audit regret {row['regret_pct']:.1f}%, "
          f"measured per call {cheap_ms:.3f} ms vs the recorded winner's {fastest_ms:.3f} ms: "
          f"{measured:.1f}%")
    ok &= same and row["regret_pct"] is not None

    print("== 3. the matvec's entry swapped for its atomic config")
    atomic_table = copy.deepcopy(table)
    matvec_name = next(k for k in table["kernels"] if k.endswith("matvec"))
    for k in atomic_table["kernels"][matvec_name]:
        atomic_table["kernels"][matvec_name][k] = {"kwargs": {"BLOCK_K": 256, "SPLIT": 4},
                                                   "num_warps": 2, "num_stages": 1}
    atomic_tables = os.path.join(work, "tables-atomic")
    os.makedirs(atomic_tables, exist_ok=True)
    json.dump(atomic_table, open(os.path.join(atomic_tables, os.path.basename(table_file)), "w"))
    report, _ = audit(work, "audit-atomic", atomic_tables)  # racy: outputs may differ run to run
    row = next(r for r in report["rows"] if r["kernel"] == matvec_name)
    print(f"summary 3: atomic pin: bits_changed={row['bits_changed']}, exit {report['exit_code']}")
    ok &= row["bits_changed"] and report["exit_code"] == 1

    print("summary: " + ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/tunelock-audit"))
