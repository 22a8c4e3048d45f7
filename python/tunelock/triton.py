"""Carrying out the installed policy inside Triton's autotuner.

The only module that touches Triton: `install()` replaces `Autotuner.run`
with the story of one call as Megatron's interception tells it —

- a kernel the policy does not observe (out of scope, config-invariant, or
  a policy that intercepts nothing): Triton's own run, untouched;
- a single-config autotuner: Triton's run, logged once under key `*`;
- `pinned`: the engine's choice among the autotuner's (pruned) configs,
  never timed, cached per key, launched as Triton launches its winner; its
  first call per key runs the pinned config twice and compares the bits;
- `audit`: as pinned, and the first call per key also times every live
  config (the call's inputs put back) and runs record mode's bits audit;
  the engine files the entry and each call is counted;
- `record` / `auto`: Triton times as usual; the winner is logged as timed
  and, in record mode, every config's timing goes into the record, after
  an audit that runs every config twice on identical inputs: a config whose
  bits change between two runs of itself is flagged and never wins.

Which of these a kernel gets is the engine's call plan (`tunelock.call_plan`);
everything else (rules, tables, the log, digest, verify, audit files) is
the engine's too.
"""
import ctypes
import logging
import math
import threading

import tunelock as engine
from tunelock import _arguments as arguments
from tunelock import _native as engine_native
from tunelock._bits import IdenticalInputs, bit_classes, capturing

logger = logging.getLogger("tunelock")

_lock = threading.RLock()
_original_run = None
_autotuner_class = None
_generation = 0  # bumped by every install: choices belong to the policy they were made under
_policy = None  # the installed policy, as the engine resolved it
_enumerated = set()


class _TunerState:
    """What the interception keeps per autotuner (as an attribute of it),
    decided once per policy so the hot path reads one flag."""

    def __init__(self, autotuner):
        self.module = kernel_module(autotuner)
        self.name = kernel_name(autotuner)
        self.qualified = f"{self.module}.{self.name}" if self.module else self.name
        self.generation = _generation
        # The engine's plan for this kernel's first calls (call_plan.hpp).
        self.plan = engine.call_plan(self.module, self.name, len(autotuner.configs))
        # Pinned (or audited) and more than one config: the engine chooses, never timed.
        self.pinned = self.plan in ("pinned", "audited")
        self.audited = self.plan == "audited"
        self.intercepted = self.plan not in ("untouched", "single")
        self.audit_ids = {}  # Triton's key tuple -> the engine's audit entry
        self.arg_names = frozenset(autotuner.arg_names)
        self.chosen = {}  # Triton's key tuple -> (Config, its launch kwargs) or True (timed)
        self.singleton_logged = False


def autotuner_class():
    """Triton's `Autotuner`, or None when Triton is not installed."""
    try:
        from triton.runtime.autotuner import Autotuner
    except ImportError:
        return None
    return Autotuner


def install(policy=None, **fields):
    """Installs `policy` (default: the environment's) and intercepts Triton's
    autotuner. Repeated calls replace the policy; the patch is applied once.
    Without Triton there is nothing to patch, and the policy is still installed."""
    global _original_run, _autotuner_class, _generation, _policy
    with _lock:
        installed = engine._install("triton.install", policy, fields)
        _policy = installed.as_dict()
        _generation += 1
        _enumerated.clear()
        _seen.clear()
        _describe_device()
        autotuner = autotuner_class()
        if autotuner is None or _original_run is not None:
            return installed
        if not callable(getattr(autotuner, "run", None)) or not hasattr(autotuner, "prune_configs"):
            raise engine.TunelockError("this Triton's Autotuner has no run/prune_configs to intercept")
        _autotuner_class, _original_run = autotuner, autotuner.run
        autotuner.run = _run
        return installed


def uninstall():
    """Puts Triton's own `Autotuner.run` back."""
    global _original_run, _autotuner_class
    with _lock:
        if _original_run is not None:
            _autotuner_class.run = _original_run
        _original_run, _autotuner_class = None, None


def arch_tag():
    """sm<major><minor> for the current device, or unknown off-GPU."""
    try:
        import torch
        if torch.cuda.is_available():
            major, minor = torch.cuda.get_device_capability()
            return f"sm{major}{minor}"
    except ImportError:
        pass
    return "unknown"


def _driver_version():
    """The CUDA driver's version as the C++ backend writes it ("13.0"), from
    the driver library itself; empty where there is none."""
    try:
        driver = ctypes.CDLL("libcuda.so.1")
        version = ctypes.c_int(0)
        if driver.cuDriverGetVersion(ctypes.byref(version)) != 0:
            return ""
        return f"{version.value // 1000}.{version.value % 1000 // 10}"
    except OSError:
        return ""


def _describe_device():
    """Provenance for record sidecars: the GPU (where CUDA is), the driver,
    and the versions of Triton and PyTorch that timed the configs."""
    fields = {"driver_version": _driver_version()}
    packages = {}
    try:
        import triton
        fields["triton"] = packages["triton"] = str(getattr(triton, "__version__", ""))
    except ImportError:
        pass
    try:
        import torch
        packages["torch"] = str(torch.__version__)
        fields["cuda_version"] = str(torch.version.cuda or "")
        if torch.cuda.is_available():
            props = torch.cuda.get_device_properties(torch.cuda.current_device())
            fields["device_name"], fields["sm_count"] = props.name, props.multi_processor_count
    except ImportError:
        pass
    engine.set_device(packages={k: v for k, v in packages.items() if v}, **fields)


def kernel_name(autotuner):
    """The underlying kernel function's name, unwrapping JIT and decorator layers."""
    return _base_function(autotuner).__name__


def kernel_module(autotuner):
    """The module the kernel is defined in: scopes which kernels are pinned."""
    return getattr(_base_function(autotuner), "__module__", "") or ""


def _base_function(autotuner):
    fn = getattr(autotuner, "base_fn", None) or autotuner.fn
    while hasattr(fn, "fn") and not hasattr(fn, "__code__"):
        fn = fn.fn
    return fn


def config_data(config):
    """A Triton Config in Megatron's config form; hooks stay on the live Config."""
    data = {
        "kwargs": {name: int(value) if isinstance(value, bool) else value
                   for name, value in config.kwargs.items()},
        "num_warps": config.num_warps,
        "num_stages": config.num_stages,
        "num_ctas": getattr(config, "num_ctas", 1),
    }
    if getattr(config, "maxnreg", None) is not None:
        data["maxnreg"] = config.maxnreg
    if getattr(config, "ir_override", None) is not None:
        data["ir_override"] = config.ir_override
    return data


def _call_args(autotuner, args, kwargs):
    named = dict(zip(autotuner.arg_names, args))
    return named, {k: v for k, v in {**named, **kwargs}.items() if k in autotuner.arg_names}


def tuning_key(autotuner, args, kwargs):
    """The autotuner's key arguments as name=value, then the dtype of every tensor argument."""
    _, call = _call_args(autotuner, args, kwargs)
    key_args = [(name, call[name]) for name in autotuner.keys if name in call]
    dtypes = [str(value.dtype) for value in call.values() if hasattr(value, "dtype")]
    return engine.tuning_key(key_args, dtypes)


def _key_tuple(autotuner, args, kwargs):
    """Triton's own cache key: cheap to build on every call."""
    _, call = _call_args(autotuner, args, kwargs)
    key = [call[name] for name in autotuner.keys if name in call]
    key.extend(str(value.dtype) for value in call.values() if hasattr(value, "dtype"))
    return tuple(key)


def _state(autotuner):
    state = autotuner.__dict__.get("_tunelock_state")
    if state is None or state.generation != _generation:
        state = autotuner._tunelock_state = _TunerState(autotuner)
        _seen[state.qualified] = autotuner
    return state


_seen = {}  # qualified name -> the autotuner last seen under it (for write_manifest)


def write_manifest(path):
    """Writes the candidate manifest of every autotuned kernel this process
    has called since install(): {"kernels": {qualified: {"key": [...],
    "configs": [config, ...]}}}, the form `tunelock choose --candidates`,
    `tunelock preview`, `table validate` and the page read. Atomic."""
    import json
    import os
    path = arguments.path("triton.write_manifest", "path", path)
    kernels = {name: {"key": list(tuner.keys), "configs": [config_data(c) for c in tuner.configs]}
               for name, tuner in sorted(_seen.items())}
    temp = f"{path}.tmp.{os.getpid()}"
    with open(temp, "w") as f:
        json.dump({"kernels": kernels}, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(temp, path)
    return len(kernels)


def _enumerate(state, count, what):
    if _policy.get("enumerate") and state.qualified not in _enumerated:
        _enumerated.add(state.qualified)
        engine_native.say(logging.INFO, f"{what} {state.qualified} ({count} configs)")


def _run(self, *args, **kwargs):
    state = self.__dict__.get("_tunelock_state")
    if state is None or state.generation != _generation:
        state = _state(self)
    if not state.pinned:
        return _run_unpinned(self, state, args, kwargs)
    # The hot path: Triton's own key (named key arguments, then every dtype),
    # one dict lookup, the launch. Built as Triton's run builds it.
    call = dict(zip(self.arg_names, args))
    if kwargs:
        call.update((k, v) for k, v in kwargs.items() if k in state.arg_names)
    key = [call[name] for name in self.keys if name in call]
    key.extend(str(value.dtype) for value in call.values() if hasattr(value, "dtype"))
    key = tuple(key)
    chosen = state.chosen.get(key)
    if chosen is None:
        chosen = _choose_pinned(self, state, key, args, kwargs)
    if state.audited and key in state.audit_ids:
        engine.count_audited_call(state.audit_ids[key])
    config, launch_kwargs = chosen
    self.best_config = config
    if config.pre_hook is not None:
        config.pre_hook({**call, **kwargs, **launch_kwargs})
    return self.fn.run(*args, **kwargs, **launch_kwargs)


def _run_unpinned(self, state, args, kwargs):
    if not state.intercepted:
        if _policy.get("enumerate"):
            _enumerate(state, len(self.configs), "UNPINNED")
        return _original_run(self, *args, **kwargs)
    if state.plan == "single_logged":
        if not state.singleton_logged:
            engine.log_choice(arch_tag(), state.module, state.name, "*",
                              config_data(self.configs[0]), _policy["mode"] in ("pinned", "audit"))
            state.singleton_logged = True
        return _original_run(self, *args, **kwargs)
    key = _key_tuple(self, args, kwargs)
    if key in state.chosen:
        return _original_run(self, *args, **kwargs)
    return _run_timed(self, state, key, args, kwargs)


def _pruned(autotuner, args, kwargs):
    """The configs Triton would benchmark for this call (its pruning hooks see
    the call's named arguments, as in Triton's run)."""
    autotuner.nargs = dict(zip(autotuner.arg_names, args))
    try:
        return autotuner.prune_configs(kwargs)
    finally:
        autotuner.nargs = None


def _choose_pinned(autotuner, state, key, args, kwargs):
    with _lock:
        if key in state.chosen:
            return state.chosen[key]
        _enumerate(state, len(autotuner.configs), "PINNED")
        candidates = _pruned(autotuner, args, kwargs)
        text_key = tuning_key(autotuner, args, kwargs)
        choice = engine.pinned_choice(arch_tag(), state.module, state.name, text_key,
                                      [config_data(c) for c in candidates])
        config = candidates[choice.index]
        repeated = None
        if choice.equivalent and not capturing():
            config = _fastest_equivalent(autotuner, state, text_key, config,
                                         [candidates[i] for i in choice.equivalent], args, kwargs)
        elif _policy.get("check_bits", True) and not capturing():
            repeated = _check_pinned_bits(autotuner, state, text_key, config, args, kwargs)
        if state.audited and not capturing():
            launched = next(i for i, c in enumerate(candidates) if c is config)
            state.audit_ids[key] = _audit_pinned(autotuner, state, text_key, candidates, launched,
                                                 repeated, args, kwargs)
        state.chosen[key] = (config, config.all_kwargs())
        return state.chosen[key]


def _audit_pinned(autotuner, state, text_key, candidates, launched, repeated, args, kwargs):
    """Audit mode's first call of a key, after the pinned choice: record
    mode's bits audit, then every live config timed by Triton's own
    benchmarker, the call's inputs put back after each; the engine files
    the entry (regret, stale, bits) and returns its id."""
    audit = _audit(autotuner, state, args, kwargs, candidates)
    autotuner.nargs = dict(zip(autotuner.arg_names, args))
    inputs = IdenticalInputs(autotuner, args, kwargs)
    timings = []
    try:
        for config in candidates:
            try:
                timing = autotuner._bench(*args, config=config, **kwargs)
                median = float(timing[0] if isinstance(timing, (list, tuple)) else timing)
            except Exception:  # fails to run: no timing, as record mode files it
                median = math.inf
            item = {"config": config_data(config),
                    "median_ms": median if math.isfinite(median) else None}
            if audit is not None and id(config) in audit.flagged:
                item["nondeterministic"] = True
            if audit is not None and id(config) in audit.classes:
                item["class"] = audit.classes[id(config)]
            timings.append(item)
    finally:
        autotuner.nargs = None
        inputs.put_back()  # the real launch follows on the call's own inputs
    return engine.audit_key(arch_tag(), state.module, state.name, text_key,
                            [config_data(c) for c in candidates], launched, timings, repeated)


def _fastest_equivalent(autotuner, state, text_key, entry, members, args, kwargs):
    """TUNELOCK_EQUIVALENT=timed: the entry's config and its equivalents
    (same bits by the record's audit) timed by Triton's own benchmarker,
    hooks and all; the fastest launches from then on. The log already names
    the entry's config, so digests and verification are those of plain
    pinned. A member that fails to run or fails the bits check is dropped."""
    autotuner.nargs = dict(zip(autotuner.arg_names, args))
    timed = []
    inputs = IdenticalInputs(autotuner, args, kwargs)
    try:
        for config in [entry] + members:
            try:
                timing = autotuner._bench(*args, config=config, **kwargs)
            except Exception:  # fails to run: dropped
                continue
            timed.append((timing[0] if isinstance(timing, (list, tuple)) else timing, config))
    finally:
        autotuner.nargs = None
        inputs.put_back()
    check = _policy.get("check_bits", True)
    for _, config in sorted(timed, key=lambda t: t[0]):
        if config is entry:
            break
        if not check or _repeats(autotuner, config, args, kwargs) is not False:
            return config
        engine_native.say(logging.WARNING,
                          f"equivalent config {engine.signature(config)} of {state.qualified} "
                          f"[{text_key}] gave different bits in two runs: dropped, never "
                          "launched in place of the entry's config")
    if check:
        _check_pinned_bits(autotuner, state, text_key, entry, args, kwargs)
    return entry


def _repeats(autotuner, config, args, kwargs):
    inputs = IdenticalInputs(autotuner, args, kwargs)
    try:
        return inputs.repeats_its_bits(config)
    finally:
        inputs.put_back()


def _check_pinned_bits(autotuner, state, text_key, config, args, kwargs):
    """The first pinned call's check: two runs of the pinned config from the
    call's own inputs, compared. It reports (warns, or raises under
    verify_strict) and never changes the choice, since a rank's own
    observation must not split the ranks."""
    inputs = IdenticalInputs(autotuner, args, kwargs)
    try:
        repeated = inputs.repeats_its_bits(config)
    finally:
        inputs.put_back()  # the real launch follows on the call's own inputs
    engine.note_bits_check(state.module, state.name, text_key, config_data(config), repeated)
    return repeated


def _run_timed(autotuner, state, key, args, kwargs):
    _enumerate(state, len(autotuner.configs), "TIMED")
    recording = state.plan == "timed_recorded"
    audit = _audit(autotuner, state, args, kwargs) if recording else None
    autotuner.configs_timings = None  # set again only if this call benchmarks
    result = _original_run(autotuner, *args, **kwargs)  # Triton benchmarks, then launches
    with _lock:
        if key in state.chosen:
            return result
        state.chosen[key] = True
        arch, text_key = arch_tag(), tuning_key(autotuner, args, kwargs)
        timings = _timings(getattr(autotuner, "configs_timings", None) or {}, audit)
        flagged_best = audit is not None and id(autotuner.best_config) in audit.flagged
        best = _fastest_repeating(timings) if flagged_best else None
        if best is not None:
            # Triton's fastest changes its own bits: the record's winner runs
            # instead, from this call's own inputs, and for the rest of the run.
            autotuner.cache[key] = best
            autotuner.best_config = best
            audit.inputs.put_back()
            result = _launch(autotuner, best, args, kwargs)
        winner = config_data(autotuner.best_config)
        engine.log_choice(arch, state.module, state.name, text_key, winner, False)
        if recording:
            engine.record(arch, state.qualified, text_key, winner,
                          [{k: v for k, v in t.items() if k != "live"} for t in timings])
    return result


class _Audit:
    def __init__(self, inputs, flagged, classes):
        self.inputs, self.flagged, self.classes = inputs, flagged, classes


def _audit(autotuner, state, args, kwargs, candidates=None):
    """Record mode's self-determinism audit (audit mode's too): every config
    Triton will benchmark for this key (or `candidates`) runs twice from the
    call's own inputs (the ids of those whose bits changed are flagged) and
    the others once more from a second input, to sort them into bit classes.
    Three extra runs per config per key."""
    if capturing():
        return None
    if candidates is None:
        candidates = _pruned(autotuner, args, kwargs)
    inputs = IdenticalInputs(autotuner, args, kwargs)
    flagged, outputs = set(), {}
    try:
        for config in candidates if len(candidates) > 1 and inputs.tensors else ():
            try:
                first = inputs.repeated_outputs(config)
            except Exception:  # fails to run: Triton times it as infinite
                continue
            if first is not None:
                outputs[id(config)] = [first]
            else:
                flagged.add(id(config))
                engine_native.say(logging.WARNING,
                                  f"config {engine.signature(config)} of {state.qualified} "
                                  f"[{tuning_key(autotuner, args, kwargs)}] gave different bits "
                                  "in two runs on identical inputs: flagged as nondeterministic, "
                                  "never pinned")
        if len(outputs) > 1:
            inputs.use_second_input()
            by_id = {id(c): c for c in candidates}
            for config_id, runs in outputs.items():
                runs.append(inputs.run_once(by_id[config_id]))
    finally:
        inputs.put_back()  # Triton's benchmark and launch start from the call's inputs
    return _Audit(inputs, flagged, bit_classes(outputs))


def _launch(autotuner, config, args, kwargs):
    launch_kwargs = config.all_kwargs()
    if config.pre_hook is not None:
        config.pre_hook({**dict(zip(autotuner.arg_names, args)), **kwargs, **launch_kwargs})
    return autotuner.fn.run(*args, **kwargs, **launch_kwargs)


def _fastest_repeating(timings):
    """The fastest timed config the audit did not flag; None when none."""
    ok = [t for t in timings if t["median_ms"] is not None and not t.get("nondeterministic")]
    return min(ok, key=lambda t: t["median_ms"])["live"] if ok else None


def _timings(configs_timings, audit):
    """Triton's {config: [median, p20, p80] or ms} as the record's timings,
    each with its live Config and what the audit found (flag, bit class)."""
    out = []
    for config, timing in configs_timings.items():
        median = timing[0] if isinstance(timing, (list, tuple)) else timing
        finite = median is not None and math.isfinite(float(median))
        item = {"config": config_data(config), "median_ms": float(median) if finite else None,
                "live": config}
        if audit and id(config) in audit.flagged:
            item["nondeterministic"] = True
        if audit and id(config) in audit.classes:
            item["class"] = audit.classes[id(config)]
        out.append(item)
    return out
