"""The driver: the one way in for a face (an interception of another
autotuner). The engine tells the whole first call of a kernel for a new
key: the plan, the decision, the fastest equivalent, the bits check, the
audit entry, the choice log, the record and every message. A face only

1. asks the plan once per kernel (`call_plan`), and reads what it means
   from the `Plan` (`engine_chooses`, `intercepts`, `counts_calls`), never
   by comparing names;
2. hands each new key's first call to `first_call` with a `Runner` that
   knows how to run one candidate of this call;
3. launches `FirstCall.launched` from then on (and counts each call of an
   audited key with `count_audited_call`).

The same protocol, with the same names, is `tunelock/first_call.hpp` in C++
(`CallRunner`, `run_first_call`) and `tunelock_first_call` in the C ABI.
"""
import ctypes
import json
from collections import namedtuple

from tunelock import _arguments as arguments
from tunelock._native import (RUNNER_ROWS_FN, RUNNER_RUN_FN, RUNNER_STEP_FN, RUNNER_TIME_FN,
                              CallRunnerStruct, call_json, check, encode, lib)


class Runner:
    """What the driver asks of a face for one call; candidates are numbered
    as in the `candidates` handed to `first_call`. Subclassing is optional:
    any object with these members is a runner.

    - `time(i)`: the median milliseconds of candidate i, as the face's
      autotuner times (warm-up, repeats);
    - `time_briefly(i)` (optional): a shorter timing, for choosing among
      configs that give the same bits (TUNELOCK_EQUIVALENT=timed);
    - `run_outputs(i)`: one run of candidate i from the call's inputs, as
      short ASCII bytes (at most 255) equal for two runs exactly when every
      output bit is (`tunelock._bits.DistinctBits` numbers them);
    - `use_second_input()`: overwrite the floating-point inputs with a
      second input, for the bit classes; True when it did;
    - `put_back()`: every buffer of the call as it came in;
    - `has_outputs`, `capturing`: what the call offers and where it runs;
    - `runs_candidates` (optional, True): False for a choice made while a
      program compiles, where `time(i)` hands back the autotuner's own figure;
    - batch invariance (optional): `batch_dim` (the key argument that
      counts the call's independent rows, "M"), `batch_rows` (how many it
      has) and `run_first_rows(i, rows)`: candidate i on only the first
      `rows` rows, and the same rows of a run on all of them, as a pair of
      short ASCII bytes named as `run_outputs` names bits (comparable across
      candidates of one call).

    An exception a runner raises is the candidate failing to run: the engine
    times it as infinite and says so once, as it does for the C++ launcher."""

    has_outputs = False
    capturing = False
    runs_candidates = True
    batch_dim = None
    batch_rows = 0

    def time(self, index):
        raise NotImplementedError

    def time_briefly(self, index):
        return self.time(index)

    def run_outputs(self, index):
        raise NotImplementedError

    def use_second_input(self):
        return False

    def put_back(self):
        pass


class NothingToRun(Runner):
    """A runner for a first call that runs nothing: one config, logged, or a
    choice made while a program compiles with no timings of its own."""

    runs_candidates = False

    def time(self, index):
        raise RuntimeError("nothing runs for this call")

    def run_outputs(self, index):
        raise RuntimeError("nothing runs for this call")


class Plan(str):
    """The engine's plan for a kernel's first calls (its name, as the engine
    names it: "untouched", "single", "single_logged", "pinned", "audited",
    "consensus", "timed_logged", "timed_recorded") and what it means:
    `engine_chooses` (the face's own autotuner never times), `intercepts`
    (the driver tells the first call) and `counts_calls` (audited: each call
    is counted against its entry)."""

    def __new__(cls, described):
        plan = super().__new__(cls, described["plan"])
        plan.engine_chooses = bool(described["engine_chooses"])
        plan.intercepts = bool(described["intercepts"])
        plan.counts_calls = bool(described["counts_calls"])
        return plan


FirstCall = namedtuple("FirstCall", ["plan", "launched", "reason", "audit_id", "timed",
                                     "provisional"])
FirstCall.__doc__ = """What the driver answers for one first call: the `Plan` it carried
out, `launched` (the candidate to launch for this key from now on),
`reason` (the rule that decided, for plans the engine chooses; else None),
`audit_id` (audited plans: the entry `count_audited_call` counts against),
`timed` (the launched candidate won on the clock) and `provisional` (ask
again at the next call: consensus inside a graph capture)."""


def call_plan(module, name, config_count):
    """The engine's `Plan` for the first call of kernel module.name with
    `config_count` declared configs, under the installed policy."""
    function = "call_plan"
    module = arguments.text(function, "module", module)
    name = arguments.kernel_name(function, "name", name)
    count = arguments.integer(function, "config_count", config_count, 0)
    return Plan(call_json("tunelock_call_plan", encode(module), encode(name), count,
                          where="tunelock.call_plan"))


def count_audited_call(entry, calls=1):
    """One more call (or `calls`) of an audited key, for the call-weighted regret."""
    check(lib.tunelock_count_audited_call(entry, calls))


def _write_text(address, size, text):
    data = text.encode("utf-8", "replace")[:max(size - 1, 0)]
    ctypes.memmove(address, data, len(data))
    ctypes.memset(address + len(data), 0, 1)


def _error_text(error):
    return f"{type(error).__name__}: {error}"


class _Callbacks:
    """The runner's members as the C callbacks of one tunelock_first_call;
    kept alive by this object for the call's duration."""

    def __init__(self, runner):
        self.runner = runner

        def timing(method):
            @RUNNER_TIME_FN
            def callback(_context, index, median_ms, error, error_size):
                try:
                    median_ms[0] = float(method(index))
                    return 0
                except BaseException as failure:  # never unwinds through the engine
                    _write_text(error, error_size, _error_text(failure))
                    return 1
            return callback

        time = timing(runner.time)
        # Runners without a shorter timing are timed in full there too.
        time_briefly = timing(getattr(runner, "time_briefly", runner.time))

        @RUNNER_RUN_FN
        def run_outputs(_context, index, outputs, outputs_size, error, error_size):
            try:
                # The runner names the run's bits by a short number (equal
                # numbers, equal bits), all the engine compares.
                bits = runner.run_outputs(index)
                if len(bits) >= outputs_size:
                    raise ValueError(f"the runner named a run's bits by {len(bits)} bytes; "
                                     f"at most {outputs_size - 1} fit")
                _write_text(outputs, outputs_size, bits.decode("ascii"))
                return 0
            except BaseException as failure:
                _write_text(error, error_size, _error_text(failure))
                return 1

        @RUNNER_STEP_FN
        def use_second_input(_context):
            try:
                return 1 if runner.use_second_input() else 0
            except BaseException:
                return 0

        @RUNNER_STEP_FN
        def put_back(_context):
            try:
                runner.put_back()
                return 0
            except BaseException:
                return 1

        @RUNNER_ROWS_FN
        def run_first_rows(_context, index, rows, alone, alone_size, inside, inside_size, error,
                           error_size):
            try:
                alone_bits, inside_bits = runner.run_first_rows(index, rows)
                for bits, size in ((alone_bits, alone_size), (inside_bits, inside_size)):
                    if len(bits) >= size:
                        raise ValueError(f"the runner named a run's rows by {len(bits)} bytes; "
                                         f"at most {size - 1} fit")
                _write_text(alone, alone_size, alone_bits.decode("ascii"))
                _write_text(inside, inside_size, inside_bits.decode("ascii"))
                return 0
            except BaseException as failure:
                _write_text(error, error_size, _error_text(failure))
                return 1

        batch_dim = getattr(runner, "batch_dim", None)
        rows = int(getattr(runner, "batch_rows", 0) or 0) if batch_dim else 0
        self.batch_dim = encode(batch_dim) if batch_dim else None
        self.functions = (time, run_outputs, use_second_input, put_back, time_briefly,
                          run_first_rows)
        self.struct = CallRunnerStruct(None, int(bool(runner.has_outputs)),
                                       int(bool(runner.capturing)),
                                       int(bool(getattr(runner, "runs_candidates", True))), time,
                                       run_outputs, use_second_input, put_back, time_briefly,
                                       self.batch_dim, rows,
                                       run_first_rows if rows > 0 else RUNNER_ROWS_FN())


def first_call(arch, module, name, key, candidates, config_count, runner, own_default=None,
               identity=None):
    """Runs the engine's first-call story for one new key and answers a
    `FirstCall`. `candidates` are the live configs in Megatron's form,
    `config_count` the kernel's declared ones (the plan's input),
    `own_default` the one the kernel's own untimed heuristic launches
    (on_miss min_cost takes it; chaos keeps it for a choice made while
    compiling), `identity` the kernel's code ("triton:<hash>"; None when
    unknown), recorded and compared with the table's."""
    function = "first_call"
    arch = arguments.arch(function, "arch", arch)
    module = arguments.text(function, "module", module)
    name = arguments.kernel_name(function, "name", name)
    key = arguments.key(function, "key", key)
    candidates = arguments.configs(function, "candidates", candidates)
    config_count = arguments.integer(function, "config_count", config_count, 0)
    if own_default is not None:
        own_default = arguments.integer(function, "own_default", own_default, 0,
                                        max(len(candidates) - 1, 0))
    identity = arguments.optional_text(function, "identity", identity)
    for member in ("time", "run_outputs", "use_second_input", "put_back"):
        if not callable(getattr(runner, member, None)):
            raise TypeError(f"tunelock.first_call: runner: {type(runner).__name__} has no "
                            f"{member}(); a runner has the members of tunelock.Runner")
    callbacks = _Callbacks(runner)
    answer = call_json("tunelock_first_call", encode(arch), encode(module), encode(name),
                       encode(key), encode(json.dumps(candidates)), config_count,
                       -1 if own_default is None else own_default, encode(identity or ""),
                       ctypes.byref(callbacks.struct), where="tunelock.first_call")
    return FirstCall(Plan(answer["plan"]), answer["launched"], answer.get("reason"),
                     answer["audit_id"], answer["timed"], answer["provisional"])
