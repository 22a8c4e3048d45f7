"""The Python faces of the first-call conformance: the cases of
first_call_cases.json through `tunelock.triton` over the stand-in Triton
(python/tests/standin), compared with what the C++ faces wrote
(first_call_conformance, run first): the same launched candidate, choice
log, digest, audit file and record, byte for byte. Then through
`tunelock.inductor` over the stand-in Inductor (python/tests/standin_inductor),
a generated kernel's first launch: the same launched candidate or error,
and the same choice log once its kernel and key are named as the C++
family's (its runner offers no second input, so its records' bit classes,
and with them the files and the digest, are its own).

Usage: first_call_conformance.py PROGRAM CASES OUT_DIR; exit 0 when every
case matches, 1 naming each difference."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python", "tests", "standin"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python", "tests"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python", "tests", "standin_inductor"))

import triton  # noqa: E402  (the stand-in)
from kernels import DType  # noqa: E402  (the stand-in's dtypes)

from torch._inductor.runtime import triton_heuristics as th  # noqa: E402  (the stand-in)

import tunelock  # noqa: E402
import tunelock._bits  # noqa: E402
import tunelock.inductor as ti  # noqa: E402
import tunelock.triton as tt  # noqa: E402
from tunelock import _inductor_describe as describe  # noqa: E402
from tunelock import _native  # noqa: E402


class Tensor:
    """The stand-in tensor: values as 32-bit floats, as the C++ faces hold them."""

    def __init__(self, values, dtype="f32"):
        import array
        self.values = array.array("f", values)
        self.dtype = DType(dtype)

    def zero_(self):
        self.values = type(self.values)("f", [0.0] * len(self.values))

    def clone(self):
        return Tensor(self.values, str(self.dtype))

    def copy_(self, other):
        self.values = type(self.values)("f", other.values)

    def tolist(self):
        return self.values.tolist()


CALL_INPUTS = [1.0, 1e8, -1e8]
SECOND_INPUTS = [0.5, -3e7, 2e-3]


def f32_sum(values):
    import array
    total = array.array("f", [0.0])
    for v in values:
        total[0] = total[0] + v  # rounded to float32 after every add, as in C++
    return total[0]


class Kernel:
    """Like a JITFunction: `run` launches the candidate its BLOCK names."""

    def __init__(self, candidates):
        self.candidates = {c["kwargs"]["BLOCK"]: c for c in candidates}
        self.runs = {block: 0 for block in self.candidates}
        self.last = None
        self.arg_names = ["x", "out", "N", "BLOCK"]

        def mix(x, out, N, BLOCK):  # noqa: N803  (the C++ family's key argument)
            raise AssertionError("launched through run")
        mix.__module__ = "conf.ops"
        self.fn = mix

    def run(self, x, out, N, BLOCK, **_options):  # noqa: N803
        self.last = BLOCK
        how = self.candidates[BLOCK]["sum"]
        if how == "fails":
            raise RuntimeError("candidate fails to run")
        backwards = how == "backwards"
        if how == "racy":
            backwards = self.runs[BLOCK] % 2 == 1
            self.runs[BLOCK] += 1
        values = list(x.values)
        out.values[0] = f32_sum(reversed(values) if backwards else values)


class ScriptedBench:
    """do_bench: warm-up and repeats as the C++ faces run them, the time scripted."""

    def __init__(self, kernel):
        self.kernel = kernel

    def __call__(self, kernel_call, quantiles):
        for _ in range(4):
            kernel_call()
        ms = self.kernel.candidates[self.kernel.last]["ms"]
        return [ms, ms, ms]


def second_input(self, seed=0):
    """The C++ faces' second input (the stand-in's own is seeded floats)."""
    self.tensors["x"].copy_(Tensor(SECOND_INPUTS))
    self.base = {name: t.clone() for name, t in self.tensors.items()}


def run_case(scenario, case, directory):
    os.makedirs(os.path.join(directory, "tables"), exist_ok=True)
    with open(os.path.join(directory, "tables", "host.json"), "w") as f:
        f.write(json.dumps(scenario["table"], indent=1) + "\n")
    fields = dict(case["policy"])
    if case["table"]:
        fields["table_path"] = [os.path.join(directory, "tables")]
    fields["record_path"] = os.path.join(directory, "run")
    tt.install(**fields)
    device = {"device_name": "conformance", "recorded_at": "2026-01-01T00:00:00Z"}
    _native.check(_native.lib.tunelock_set_device(_native.encode(json.dumps(device))))
    tunelock._bits.capturing = lambda: bool(case.get("capturing"))

    candidates = scenario["candidates"]
    kernel = Kernel(candidates)
    configs = [triton.Config(dict(c["kwargs"]), num_warps=c["num_warps"],
                             num_stages=c["num_stages"]) for c in candidates]
    tuner = triton.Autotuner(kernel, ["x", "out", "N"], configs, ["N"], None, None,
                             do_bench=ScriptedBench(kernel))
    x, out = Tensor(CALL_INPUTS), Tensor([-1.0])
    summary = {}
    try:
        tuner.run(x, out, scenario["n"])
        summary["launched"] = [c["kwargs"]["BLOCK"] for c in candidates].index(kernel.last)
    except tunelock.TunelockError as error:
        summary["error"] = str(error)
    tunelock.flush()
    summary["choice_log"] = tunelock.choice_log()
    summary["digest"] = tunelock.choice_digest()
    summary["files"] = {}
    for name in sorted(os.listdir(directory)):
        if name.startswith("run."):
            with open(os.path.join(directory, name)) as f:
                summary["files"][name] = f.read()
    return summary


class GeneratedKernel:
    """Like an Inductor-generated kernel: one launcher per candidate, adding
    up x into out as the candidate's `sum` says, timed by a scripted bench."""

    class Launcher:
        def __init__(self, candidate):
            self.candidate = candidate
            self.config = th.Config(dict(candidate["kwargs"]), candidate["num_warps"],
                                    candidate["num_stages"])
            self.runs = 0

        def __call__(self, x, out, stream=None):
            how = self.candidate["sum"]
            if how == "fails":
                raise RuntimeError("candidate fails to run")
            backwards = how == "backwards" or (how == "racy" and self.runs % 2 == 1)
            if how == "racy":
                self.runs += 1
            values = list(x.values)
            out.values[0] = f32_sum(reversed(values) if backwards else values)

    def __init__(self, candidates):
        fn = type("JITFunction", (), {})()
        fn.__name__, fn.arg_names = "triton_per_fused_mix_0", ["in_ptr0", "out_ptr0"]
        fn.src = "def triton_per_fused_mix_0(in_ptr0, out_ptr0):\n    pass\n"
        self.tuner = th.CachingAutotuner(fn, {}, [], None, ["out_ptr0"], False, None,
                                         size_hints={"x": 3})
        self.launchers = [self.Launcher(c) for c in candidates]
        self.tuner.launchers = list(self.launchers)
        kernel = self

        def bench(launcher, *args, **kwargs):
            for _ in range(4):  # warm-up and repeats, as the C++ faces run them
                launcher(*args, **kwargs)
            return launcher.candidate["ms"]
        self.tuner.bench = bench
        self.kernel = kernel


def run_inductor_case(scenario, case, directory):
    """The case through tunelock.inductor: its launched candidate (or error)
    and its choice log, with the generated kernel and key named as the C++
    family's."""
    candidates = scenario["candidates"]
    generated = GeneratedKernel(candidates)
    qualified = f"{describe.MODULE}.{describe.kernel_name(generated.tuner)}"
    key = tunelock.tuning_key(describe.kernel_key_args(generated.tuner))
    family = f"{scenario['module']}.{scenario['name']}"
    family_key = f"N={scenario['n']}|{scenario['dtype']}|{scenario['dtype']}"
    table = json.loads(json.dumps(scenario["table"]))
    (entries,) = table["kernels"].values()
    table["kernels"] = {qualified: {key: next(iter(entries.values()))}}
    os.makedirs(os.path.join(directory, "tables"), exist_ok=True)
    with open(os.path.join(directory, "tables", "host.json"), "w") as f:
        f.write(json.dumps(table, indent=1) + "\n")
    fields = dict(case["policy"])
    if case["table"]:
        fields["table_path"] = [os.path.join(directory, "tables")]
    fields["record_path"] = os.path.join(directory, "run")
    ti.install(**fields)
    ti.capturing = lambda: bool(case.get("capturing"))
    x, out = Tensor(CALL_INPUTS), Tensor([-1.0])
    summary = {}
    try:
        generated.tuner.run(x, out)
        summary["launched"] = generated.launchers.index(generated.tuner.launchers[0])
    except tunelock.TunelockError as error:
        summary["error"] = str(error).replace(qualified, family).replace(key, family_key)
    summary["choice_log"] = {k.replace(qualified, family).replace(key, family_key): v
                             for k, v in tunelock.choice_log().items()}
    tunelock.flush()
    return summary


def compare(face, name, got, want, fields):
    differences = 0
    for field in fields:
        if got.get(field) != want.get(field):
            differences += 1
            print(f"{name} ({face}): {field} differs\n  {face}: {got.get(field)!r}\n"
                  f"  C++:    {want.get(field)!r}", file=sys.stderr)
    return differences


def main(program, cases_file, out):
    cxx_out = os.path.join(out, "cxx")
    subprocess.run([program, cases_file, cxx_out], check=True)
    with open(os.path.join(cxx_out, "summary.json")) as f:
        expected = json.load(f)
    with open(cases_file) as f:
        scenario = json.load(f)
    tt.arch_tag = lambda: "host"
    tunelock._bits.IdenticalInputs.use_second_input = second_input
    ti.arch_tag = lambda: "host"
    differences = 0
    for case in scenario["cases"]:
        want = expected[case["name"]]
        got = run_case(scenario, case, os.path.join(out, "python", case["name"]))
        differences += compare("triton", case["name"], got, want, sorted(set(got) | set(want)))
        got = run_inductor_case(scenario, case, os.path.join(out, "inductor", case["name"]))
        # Chaos draws from the kernel's name and key, which are Inductor's own here.
        fields = ["error"] if case["policy"].get("chaos") else ["launched", "error", "choice_log"]
        differences += compare("inductor", case["name"], got, want, fields)
    print(f"{len(scenario['cases'])} cases, two Python faces (Triton, Inductor): "
          f"{differences} difference(s)")
    return 1 if differences else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: first_call_conformance.py PROGRAM CASES OUT_DIR")
    sys.exit(main(*sys.argv[1:]))
