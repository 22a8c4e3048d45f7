"""A kernel's first call for a new key, told by the engine.

The engine's driver (tunelock/first_call.hpp, through tunelock_first_call)
owns the story: the call plan, the decision, the fastest equivalent, the
bits check, the audit entry, the choice log, the record and every message.
A face hands it a runner that knows how to run one candidate of this call:

- `time(i)`: the median milliseconds of candidate i, as the autotuner times;
- `outputs(i)`: one run of candidate i from the call's inputs, as short
  ASCII bytes (at most 255) equal for two runs exactly when every output
  bit is: the number of the run's bits among those seen so far;
- `second_input()`: a second input for the bit classes, True when given;
- `put_back()`: every argument as the call passed it;
- `has_outputs`, `capturing`: what the call offers and where it runs;
- `runs_candidates` (optional, True): False for a choice made while a
  program compiles, where `time(i)` hands back the autotuner's own figure.

An exception a runner raises is the candidate failing to run: the engine
times it as infinite and says so once, as it does for the C++ launcher.
"""
import ctypes
import json

from tunelock._native import (RUNNER_RUN_FN, RUNNER_STEP_FN, RUNNER_TIME_FN, CallRunnerStruct,
                              call_json, encode)


def _write_text(address, size, text):
    data = text.encode("utf-8", "replace")[:max(size - 1, 0)]
    ctypes.memmove(address, data, len(data))
    ctypes.memset(address + len(data), 0, 1)


def _error_text(error):
    return f"{type(error).__name__}: {error}"


class _Callbacks:
    """The runner's methods as the C callbacks of one tunelock_first_call;
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
        def run(_context, index, outputs, outputs_size, error, error_size):
            try:
                # The runner names the run's bits by a short number (equal
                # numbers, equal bits), all the engine compares.
                bits = runner.outputs(index)
                if len(bits) >= outputs_size:
                    raise ValueError(f"the runner named a run's bits by {len(bits)} bytes; "
                                     f"at most {outputs_size - 1} fit")
                _write_text(outputs, outputs_size, bits.decode("ascii"))
                return 0
            except BaseException as failure:
                _write_text(error, error_size, _error_text(failure))
                return 1

        @RUNNER_STEP_FN
        def second_input(_context):
            try:
                return 1 if runner.second_input() else 0
            except BaseException:
                return 0

        @RUNNER_STEP_FN
        def put_back(_context):
            try:
                runner.put_back()
                return 0
            except BaseException:
                return 1

        self.functions = (time, run, second_input, put_back, time_briefly)
        self.struct = CallRunnerStruct(None, int(bool(runner.has_outputs)),
                                       int(bool(runner.capturing)),
                                       int(bool(getattr(runner, "runs_candidates", True))), time,
                                       run, second_input, put_back, time_briefly)


def first_call(arch, module, name, key, candidates, config_count, runner, own_default=None,
               identity=None):
    """Runs the engine's first-call story for one new key; `candidates` are
    the live configs in Megatron's form, `own_default` the one the kernel's
    own untimed heuristic launches (on_miss min_cost takes it), `identity`
    the kernel's code ("triton:<hash>"; None when unknown), recorded and
    compared with the table's. Returns {"plan", "launched", "reason"
    (pinned plans), "audit_id" (audited, else None), "timed", "provisional"}."""
    callbacks = _Callbacks(runner)
    return call_json("tunelock_first_call", encode(arch), encode(module), encode(name),
                     encode(key), encode(json.dumps(candidates)), int(config_count),
                     -1 if own_default is None else int(own_default), encode(identity or ""),
                     ctypes.byref(callbacks.struct), where="tunelock first call")
