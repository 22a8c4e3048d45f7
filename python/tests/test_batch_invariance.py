"""Batch invariance through tunelock.triton with the stand-in Triton: a row
kernel declares its batch dim (tunelock.triton.batch_rows), record under
batch_invariant audits each config's rows at a ladder of sizes through the
C ABI's run_first_rows, merge pins one class per shape, tunelock.invariance
is the gate, and pinned gives every row the same bits at every size. The
GPU twin with real Triton is tests/gpu/batch_invariance_checks.py."""
import json
import os
import subprocess
import sys

import pytest
import triton

import tunelock
import tunelock.triton as tt
from kernels import DType, JITKernel

COLS = 16
SIZES = (1, 2, 4, 8)


class Rows:
    """A 2-D stand-in tensor over shared storage: narrow(0, 0, r) is a view
    of its first r rows (writes land in the whole), as torch's is."""

    def __init__(self, storage, rows, cols, dtype="torch.float32"):
        self.storage, self.rows, self.cols, self.dtype = storage, rows, cols, DType(dtype)

    def narrow(self, axis, start, length):
        assert axis == 0 and start == 0
        return Rows(self.storage, length, self.cols, str(self.dtype))

    def clone(self):
        return Rows(self.tolist(), self.rows, self.cols, str(self.dtype))

    def copy_(self, other):
        self.storage[:self.rows * self.cols] = other.storage[:other.rows * other.cols]

    def zero_(self):
        self.storage[:self.rows * self.cols] = [0.0] * (self.rows * self.cols)

    def tolist(self):
        return self.storage[:self.rows * self.cols]


def rows_tensor(rows, cols, values):
    return Rows(list(values), rows, cols)


def row_sums(x, out, M, NCOLS, BLOCK, FOLLOW_M):
    """out[r] = the sum of row r of x in BLOCK-sized partial sums; with
    FOLLOW_M the block follows M (2 below M = 4), as a split heuristic does."""
    block = (2 if M < 4 else BLOCK) if FOLLOW_M else BLOCK
    for r in range(M):
        total = 0.0
        for start in range(0, NCOLS, block):
            total += sum(x.storage[r * NCOLS + start:r * NCOLS + min(start + block, NCOLS)])
        out.storage[r] = total


CONFIGS = [triton.Config({"BLOCK": 4, "FOLLOW_M": 0}, num_warps=1, num_stages=1),
           triton.Config({"BLOCK": 4, "FOLLOW_M": 0}, num_warps=2, num_stages=1),
           triton.Config({"BLOCK": 8, "FOLLOW_M": 0}, num_warps=1, num_stages=1),
           triton.Config({"BLOCK": 8, "FOLLOW_M": 1}, num_warps=1, num_stages=1)]
# (BLOCK, FOLLOW_M, warps) -> ms: the batch-variant config is the fastest.
COST_MS = {(4, 0, 1): 1.0, (4, 0, 2): 0.9, (8, 0, 1): 2.0, (8, 1, 1): 0.5}


class Bench:
    def __init__(self, kernel):
        self.kernel = kernel

    def __call__(self, kernel_call, quantiles):
        kernel_call()
        launch = self.kernel.launches[-1]
        ms = COST_MS[(launch["BLOCK"], launch["FOLLOW_M"], launch["num_warps"])]
        return [ms, ms, ms]


def make_kernel():
    kernel = JITKernel(row_sums)
    kernel.fn.__module__ = "demo.kernels"
    tuner = triton.Autotuner(kernel, ["x", "out", "M", "NCOLS"], CONFIGS, ["M", "NCOLS"], [], None,
                             do_bench=Bench(kernel))
    return tuner, kernel


def mixed(count):
    import random
    rng = random.Random(11)
    return [rng.uniform(-1, 1) * 10 ** rng.randint(-6, 6) for _ in range(count)]


X = mixed(SIZES[-1] * COLS)


def call(tuner, m):
    x = rows_tensor(SIZES[-1], COLS, X).narrow(0, 0, m)
    out = rows_tensor(m, 1, [0.0] * m)
    tuner.run(x, out, m, COLS)
    return out.tolist()


def record_and_merge(tmp_path, batch_invariant, name):
    tt.install(mode="record", record_path=str(tmp_path / name), batch_invariant=batch_invariant)
    tuner, _ = make_kernel()
    tt.batch_rows(tuner, "M", {"x": 0, "out": 0})
    for m in SIZES:
        call(tuner, m)
    tunelock.flush()
    table = tmp_path / f"{name}-tables" / "sm90.json"
    tunelock.merge([str(tmp_path / f"{name}.rank0.json")], str(table))
    return table


def differing_rows(table, batch_invariant):
    tt.install(mode="pinned", table_path=[str(table.parent)], on_miss="error",
               batch_invariant=batch_invariant)
    tuner, _ = make_kernel()
    full = call(tuner, SIZES[-1])
    return sum(a != b for m in SIZES for a, b in zip(call(tuner, m), full))


@pytest.fixture(autouse=True)
def arch(monkeypatch):
    monkeypatch.setattr(tt, "arch_tag", lambda: "sm90")


def test_record_merge_pinned_keeps_every_rows_bits_at_every_size(tmp_path):
    table = record_and_merge(tmp_path, True, "rec")
    gate = tunelock.invariance(table)
    assert gate["passes"], gate
    (kernel,) = gate["kernels"]
    assert (kernel["kernel"], kernel["verdict"], kernel["dim"]) == (
        "demo.kernels.row_sums", "proven", "M")
    assert kernel["proven"] == list(SIZES)
    assert kernel["variant"] == ["BLOCK=8,FOLLOW_M=1;warps=1;stages=1"]
    entries = tunelock.table(table)["kernels"]["demo.kernels.row_sums"]
    # Tuned inside the class: the faster of its two configs, at every size.
    assert {(e["kwargs"]["BLOCK"], e["num_warps"]) for e in entries.values()} == {(4, 2)}
    assert differing_rows(table, True) == 0


def test_a_plain_record_pins_the_variant_config_fails_the_gate_and_rows_differ(tmp_path):
    table = record_and_merge(tmp_path, False, "plain")
    gate = tunelock.invariance(table)
    assert not gate["passes"] and gate["kernels"][0]["verdict"] == "unproven"
    assert differing_rows(table, False) > 0  # the rows of M = 1 and 2 add in blocks of 2


def test_ranks_at_other_sizes_agree_by_class_and_a_table_of_another_class_is_named(tmp_path):
    """Rank 0 at M = 1 and rank 1 at M = 8 share no key; the class entry
    each logs is what `tunelock verify` compares."""
    table = record_and_merge(tmp_path, True, "rec")
    worker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "batch_rows_worker.py")

    def rank(number, rows, tables, prefix):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "RANK": str(number),
               "WORLD_SIZE": "2"}
        done = subprocess.run([sys.executable, worker, str(tables), str(rows), str(prefix)],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stdout
        return json.loads((tmp_path / f"{prefix.name}.rank{number}.json").read_text())["entries"]

    def verify(prefix):
        return subprocess.run([sys.executable, "-m", "tunelock", "verify",
                               str(tmp_path / f"{prefix}.rank0.json"),
                               str(tmp_path / f"{prefix}.rank1.json")],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=120)

    class_key = "class|demo.kernels.row_sums|sm90|M=*|NCOLS=16|torch.float32|torch.float32"
    first = rank(0, 1, table.parent, tmp_path / "run")
    second = rank(1, 8, table.parent, tmp_path / "run")
    assert first[class_key] == second[class_key] == (
        "class{BLOCK=4,FOLLOW_M=0;warps=1;stages=1 | BLOCK=4,FOLLOW_M=0;warps=2;stages=1};pinned")
    agreed = verify("run")
    assert agreed.returncode == 0, agreed.stdout

    # Rank 1 on a table whose class is BLOCK=8's: named, exit 1.
    other = json.loads(table.read_text())
    for entry in other["kernels"]["demo.kernels.row_sums"].values():
        entry.update(kwargs={"BLOCK": 8, "FOLLOW_M": 0}, num_warps=1, num_stages=1)
        for field in [f for f in entry if f not in ("kwargs", "num_warps", "num_stages")]:
            del entry[field]
    group = other["invariance"]["demo.kernels.row_sums"]["groups"]
    group[next(iter(group))]["class"] = ["BLOCK=8,FOLLOW_M=0;warps=1;stages=1"]
    (tmp_path / "other" / "sm90.json").parent.mkdir()
    (tmp_path / "other" / "sm90.json").write_text(json.dumps(other))
    rank(0, 1, table.parent, tmp_path / "mixed")
    rank(1, 8, tmp_path / "other", tmp_path / "mixed")
    differ = verify("mixed")
    assert differ.returncode == 1, differ.stdout
    assert f"{class_key}: 'class{{BLOCK=4" in differ.stdout, differ.stdout
    assert "'class{BLOCK=8,FOLLOW_M=0;warps=1;stages=1};pinned' on rank 1" in differ.stdout


def test_runs_after_put_back_start_from_the_calls_own_inputs():
    """The rows audit runs after the bits check's second input: put_back
    must return later runs to the call's own inputs, which a pinned run
    sees (on the second input's wide exponents a real log-softmax's configs
    round alike where their rows differ on its own logits)."""
    from kernels import Tensor, row_sum
    from tunelock._bits import IdenticalInputs
    kernel = JITKernel(row_sum)
    config = triton.Config({"BLOCK": 2}, num_warps=1, num_stages=1)
    tuner = triton.Autotuner(kernel, ["x", "out", "n"], [config], ["n"], [], None)
    x, out = Tensor([1.0, 2.0, 3.0, 4.0]), Tensor([0.0])
    inputs = IdenticalInputs(tuner, (x, out, 4), {})
    inputs.use_second_input()
    second = inputs.run_once(config)
    assert second["x"].tolist() != [1.0, 2.0, 3.0, 4.0]
    inputs.put_back()
    assert (x.tolist(), out.tolist()) == ([1.0, 2.0, 3.0, 4.0], [0.0])
    own = inputs.run_once(config)
    assert (own["x"].tolist(), own["out"].tolist()) == ([1.0, 2.0, 3.0, 4.0], [10.0])


def test_batch_rows_refuses_what_it_cannot_carry_out():
    tuner, _ = make_kernel()
    with pytest.raises(ValueError, match=r"tunelock\.triton\.batch_rows: dim: 'N' is not one of "
                                         r"the kernel's key arguments"):
        tt.batch_rows(tuner, "N", {"x": 0})
    with pytest.raises(ValueError, match=r"tensors: 'y' is not an argument of the kernel"):
        tt.batch_rows(tuner, "M", {"y": 0})
    with pytest.raises(TypeError, match=r"tensors: expected \{tensor argument: axis\}"):
        tt.batch_rows(tuner, "M", {})
    with pytest.raises(TypeError, match=r"kernel: expected an autotuned kernel or its qualified"):
        tt.batch_rows(42, "M", {"x": 0})
