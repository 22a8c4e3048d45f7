"""Carrying out the installed policy inside Triton's autotuner.

The only module that touches Triton: `install()` replaces `Autotuner.run`
with the story of one call as Megatron's interception tells it. Which story
a kernel gets is the engine's call plan (`tunelock.call_plan`, a `Plan`):

- a kernel the policy does not observe (out of scope, config-invariant, or
  a policy that intercepts nothing): Triton's own run, untouched;
- a single-config autotuner: Triton's run, logged once under key `*` by
  the driver;
- otherwise the first call of each key is the engine's first-call driver
  (`tunelock._driver`, `tunelock.first_call`): pinned, audited, timed or recorded, with its
  bits checks, audit entries, log, record and messages. This module only
  hands it a runner (`tunelock._bits.TritonRunner`: Triton's benchmarker
  and the call's own arguments) and launches what it answers;
- pinned keys then take the hot path: Triton's key, one dict lookup, the
  launch; timed keys go into Triton's own cache.
"""
import ctypes
import threading

from tunelock import _adapters as adapters
from tunelock import _api as api
from tunelock import _hooks as hooks
from tunelock import _arguments as arguments
from tunelock import _native as engine_native
from tunelock import _driver as driver
from tunelock._bits import TritonRunner
from tunelock._introspection import (arch_tag, autotuner_class, call_args, code_identity,
                                     config_data,
                                     driver_version, key_tuple, kernel_module, kernel_name,
                                     launch_kwargs, launch_options_filled_in, pruned)

class _Interception:
    """All the interception holds: the patch (Triton's own `Autotuner.run`
    and its class), the installed policy as the engine resolved it, the
    generation (bumped by every install: choices belong to the policy they
    were made under) and the autotuners seen since (for write_manifest)."""

    def __init__(self):
        self.lock = threading.RLock()
        self.original_run = None
        self.autotuner_class = None
        self.generation = 0
        self.policy = None
        self.seen = {}  # qualified name -> the autotuner last seen under it
        # qualified name -> (dim, {tensor argument: axis}), from batch_rows
        self.batch_rows = {}
        self.filled_in = None  # the backend's own launch options, read at the first pinned call
        self.said_no_triton = False
        self.engine_generation = None  # the engine's, when this generation began


def _engine_generation():
    generation = ctypes.c_uint64(0)
    engine_native.check(engine_native.lib.tunelock_choice_generation(ctypes.byref(generation)))
    return generation.value


def after_check():
    """After a verify: a consensus check that switched keys changed the
    engine's generation, so every cached choice is asked again and the
    agreed winners launch from the next call on."""
    held = _interception
    with held.lock:
        current = _engine_generation()
        if held.engine_generation is not None and current != held.engine_generation:
            held.generation += 1
        held.engine_generation = current


api.after_check_listeners.append(after_check)


_interception = _Interception()


class _TunerState:
    """What the interception keeps per autotuner (as an attribute of it),
    decided once per policy so the hot path reads one flag."""

    def __init__(self, autotuner):
        self.module = kernel_module(autotuner)
        self.name = kernel_name(autotuner)
        self.qualified = f"{self.module}.{self.name}" if self.module else self.name
        self.generation = _interception.generation
        # The engine's plan for this kernel's first calls (call_plan.hpp).
        self.plan = driver.call_plan(self.module, self.name, len(autotuner.configs))
        # The engine chooses (pinned, audited, consensus): the call's own
        # autotuner never times.
        self.pinned = self.plan.engine_chooses
        self.audited = self.plan.counts_calls
        self.intercepted = self.plan.intercepts
        self.audit_ids = {}  # the call's key -> the engine's audit entry
        self.identity = None  # the kernel's code (code_identity), found at its first call
        self.arg_names = frozenset(autotuner.arg_names)
        # The hot path's key, when every key argument comes positionally:
        # their positions, how many positional arguments that takes, and a
        # key reader per number of positional arguments (_key_reader).
        names = list(autotuner.arg_names)
        self.key_positions = [names.index(k) for k in autotuner.keys if k in names]
        self.key_reach = max(self.key_positions, default=-1) + 1
        self.key_readers = {}
        # The call's key -> (Config, its launch kwargs, its pre_hook's kwargs
        # or None) pinned, or True (timed).
        self.chosen = {}
        self.singleton_logged = False
        self.enumerated = False  # the UNPINNED line said


def install(policy=None, **fields):
    """Installs `policy` (default: the environment's) and intercepts Triton's
    autotuner, and every other adapter whose library is already imported
    (torch.compile's, where torch is: `tunelock.install` switches on every
    present adapter). Repeated calls replace the policy; the patch is
    applied once. Without Triton there is nothing to patch, and the policy
    is still installed."""
    installed = api._install("triton.install", policy, fields)
    others = adapters.switch_on(besides="triton", imported_only=True)
    _patch(inductor_locked="inductor" in others)
    return installed


def _switch_on():
    """The registry's switch: intercepts Triton's autotuner under the
    installed policy; whether it did."""
    _patch()
    return _interception.original_run is not None


def _patch(inductor_locked=False):
    """Intercepts Triton's autotuner under the installed policy (which
    `install` installed first). Says once when Triton is not importable."""
    held = _interception
    with held.lock:
        installed = api.installed_policy()
        held.policy = installed.as_dict()
        held.generation += 1
        held.engine_generation = _engine_generation()
        held.seen.clear()
        held.filled_in = None
        _describe_device()
        autotuner = autotuner_class()
        if autotuner is None and not held.said_no_triton:
            held.said_no_triton = True
            engine_native.logger.warning(
                "Triton is not importable here: tunelock.triton intercepts no @triton.autotune "
                "kernel (the policy is installed%s)",
                "; torch.compile's choices are locked" if inductor_locked else "")
        if autotuner is None or held.original_run is not None:
            return installed
        if not callable(getattr(autotuner, "run", None)) or not hasattr(autotuner, "prune_configs"):
            raise engine_native.TunelockError("this Triton's Autotuner has no run/prune_configs to intercept")
        held.autotuner_class, held.original_run = autotuner, autotuner.run
        autotuner.run = _run
        return installed


def uninstall():
    """Puts Triton's own `Autotuner.run` back, and every other adapter's
    methods (as install switched them on)."""
    _restore()
    adapters.uninstall(besides="triton")


def _restore():
    held = _interception
    with held.lock:
        if held.original_run is not None:
            held.autotuner_class.run = held.original_run
        held.original_run, held.autotuner_class = None, None


# Names of this module's own, for tests to stand in.
_driver_version = driver_version
_launch_options_filled_in = launch_options_filled_in


def _describe_device():
    """Provenance for timing sidecars: the GPU (where CUDA is), the driver,
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
    hooks.set_device(packages={k: v for k, v in packages.items() if v}, **fields)


def tuning_key(autotuner, args, kwargs):
    """The autotuner's key arguments as name=value, then the dtype of every tensor argument."""
    _, call = call_args(autotuner, args, kwargs)
    key_args = [(name, call[name]) for name in autotuner.keys if name in call]
    dtypes = [str(value.dtype) for value in call.values() if hasattr(value, "dtype")]
    return hooks.tuning_key(key_args, dtypes)


def _state(autotuner):
    state = autotuner.__dict__.get("_tunelock_state")
    if state is None or state.generation != _interception.generation:
        state = autotuner._tunelock_state = _TunerState(autotuner)
        _interception.seen[state.qualified] = autotuner
    return state


def batch_rows(kernel, dim, tensors):
    """Declares a kernel's batch dim, for batch invariance
    (TUNELOCK_BATCH_INVARIANT, `install(batch_invariant=True)`): `dim` is
    the key argument that counts its independent rows ("M": row i of every
    output depends on row i of the inputs only), `tensors` maps each tensor
    argument with rows along `dim` to the axis they lie on
    ({"a": 0, "c": 0}). A call on the first rows is the same kernel with
    `dim` set to that count and those tensors narrowed to their first rows.
    Record then proves each config's rows at a ladder of batch sizes, and
    merge pins, per shape, one class of configs whose rows keep their bits
    at every size. `kernel` is the autotuned kernel or its qualified name
    ("module.name", as tables file it). Declare before its first call."""
    function = "triton.batch_rows"
    if isinstance(kernel, str):
        qualified = arguments.kernel_name(function, "kernel", kernel)
    elif hasattr(kernel, "arg_names") and hasattr(kernel, "configs"):
        module, name = kernel_module(kernel), kernel_name(kernel)
        qualified = f"{module}.{name}" if module else name
        if dim not in kernel.keys:
            raise ValueError(f"tunelock.{function}: dim: {dim!r} is not one of the kernel's key "
                             f"arguments {list(kernel.keys)}")
        for name in tensors if isinstance(tensors, dict) else ():
            if name not in kernel.arg_names:
                raise ValueError(f"tunelock.{function}: tensors: {name!r} is not an argument of "
                                 f"the kernel {list(kernel.arg_names)}")
    else:
        raise TypeError(f"tunelock.{function}: kernel: expected an autotuned kernel or its "
                        f"qualified name, got {type(kernel).__name__}")
    dim = arguments.text(function, "dim", dim, empty=False)
    if not isinstance(tensors, dict) or not tensors:
        raise TypeError(f"tunelock.{function}: tensors: expected {{tensor argument: axis}} with "
                        f"at least one entry, got {tensors!r}")
    axes = {arguments.text(function, "tensors", name, empty=False):
            arguments.integer(function, f"tensors[{name!r}]", axis, 0, 64)
            for name, axis in tensors.items()}
    with _interception.lock:
        _interception.batch_rows[qualified] = (dim, axes)


def write_manifest(path):
    """Writes the candidate manifest of every autotuned kernel this process
    has called since install(): {"kernels": {qualified: {"key": [...],
    "configs": [config, ...]}}}, the form `tunelock choose --candidates`,
    `tunelock preview`, `table validate` and the page read. Atomic."""
    import json
    import os
    path = arguments.path("triton.write_manifest", "path", path)
    kernels = {name: {"key": list(tuner.keys), "configs": [config_data(c) for c in tuner.configs]}
               for name, tuner in sorted(_interception.seen.items())}
    temp = f"{path}.tmp.{os.getpid()}"
    with open(temp, "w") as f:
        json.dump({"kernels": kernels}, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(temp, path)
    return len(kernels)


def _enumerate_untouched(state, count):
    """The UNPINNED line of `enumerate`, once per kernel and policy (the
    engine words and dedupes it; the driver says PINNED and TIMED)."""
    if not state.enumerated:
        state.enumerated = True
        engine_native.check(engine_native.lib.tunelock_enumerate(
            engine_native.encode(state.module), engine_native.encode(state.name), count))


def _run(self, *args, **kwargs):
    state = self.__dict__.get("_tunelock_state")
    if state is None or state.generation != _interception.generation:
        state = _state(self)
    if not state.pinned:
        return _run_unpinned(self, state, args, kwargs)
    # The hot path: a key, one dict lookup, the launch.
    read_key = state.key_readers.get(len(args))
    if read_key is not None and state.arg_names.isdisjoint(kwargs):
        key = read_key(args)
    else:
        key = _key_off_the_hot_path(self, state, args, kwargs)
    chosen = state.chosen.get(key)
    if chosen is None:
        chosen = _choose_pinned(self, state, key, args, kwargs)
    if state.audited and key in state.audit_ids:
        driver.count_audited_call(state.audit_ids[key])
    config, options, hook_kwargs = chosen
    self.best_config = config
    if hook_kwargs is not None:
        config.pre_hook({**dict(zip(self.arg_names, args)), **kwargs, **hook_kwargs})
    return self.fn.run(*args, **kwargs, **options)


def _key_reader(positions, arity):
    """The hot path's key of a call with `arity` positional arguments: the
    key arguments' values, then every argument's dtype object (a tensor's
    is interned; None for others). Generated as one tuple expression, from
    integers only, because the loop that builds the same tuple costs twice
    as much on every launch."""
    items = [f"a[{i}]" for i in positions] + [f"g(a[{i}], 'dtype', None)" for i in range(arity)]
    return eval(f"lambda a, g=getattr: ({', '.join(items)},)", {})  # noqa: S307 - integers only


def _key_off_the_hot_path(autotuner, state, args, kwargs):
    """The key of a call the hot path has no reader for: with every key
    argument positional, a reader for this many arguments is made and used
    from then on; otherwise the key is built as Triton's run builds its own."""
    if len(args) >= state.key_reach and state.arg_names.isdisjoint(kwargs):
        reader = state.key_readers[len(args)] = _key_reader(state.key_positions, len(args))
        return reader(args)
    return key_tuple(autotuner, args, kwargs)


def _run_unpinned(self, state, args, kwargs):
    if not state.intercepted:
        if _interception.policy.get("enumerate"):
            _enumerate_untouched(state, len(self.configs))
        return _interception.original_run(self, *args, **kwargs)
    if len(self.configs) == 1:
        if not state.singleton_logged:  # one config, observed: the driver logs it under "*"
            driver.first_call(arch_tag(), state.module, state.name, "*",
                              [config_data(self.configs[0])], 1, driver.NothingToRun())
            state.singleton_logged = True
        return _interception.original_run(self, *args, **kwargs)
        return _interception.original_run(self, *args, **kwargs)
    key = key_tuple(self, args, kwargs)
    if key in state.chosen:
        return _interception.original_run(self, *args, **kwargs)
    return _run_timed(self, state, key, args, kwargs)


def _choose_pinned(autotuner, state, key, args, kwargs):
    """A pinned (or audited) key's first call: the engine's story, run on
    this call's arguments; the config it launches is cached for the key."""
    with _interception.lock:
        if key in state.chosen:
            return state.chosen[key]
        if _interception.filled_in is None:
            _interception.filled_in = _launch_options_filled_in()
        candidates = pruned(autotuner, args, kwargs)
        outcome = _first_call(autotuner, state, candidates, args, kwargs, _interception.filled_in)
        config = candidates[outcome.launched]
        if outcome.audit_id is not None:
            state.audit_ids[key] = outcome.audit_id
        hook_kwargs = config.all_kwargs() if config.pre_hook is not None else None
        chosen = (config, launch_kwargs(config, _interception.filled_in), hook_kwargs)
        if not outcome.provisional:  # consensus inside a graph capture: asked again
            state.chosen[key] = chosen
        return chosen


def _run_timed(autotuner, state, key, args, kwargs):
    """A timed key's first call (record, auto): the engine's story, with the
    candidates timed by Triton's own benchmarker; the winner goes into
    Triton's cache, so later calls are Triton's own run."""
    with _interception.lock:
        if key in state.chosen:
            return _interception.original_run(autotuner, *args, **kwargs)
        candidates = pruned(autotuner, args, kwargs)
        outcome = _first_call(autotuner, state, candidates, args, kwargs)
        winner = candidates[outcome.launched]
        autotuner.cache[key] = winner
        state.chosen[key] = True
    autotuner.best_config = winner
    full_nargs = {**dict(zip(autotuner.arg_names, args)), **kwargs, **winner.all_kwargs()}
    autotuner.pre_hook(full_nargs, reset_only=True)  # as Triton's run does after benchmarking
    return _launch(autotuner, winner, args, kwargs)


def _first_call(autotuner, state, candidates, args, kwargs, filled_in=None):
    runner = TritonRunner(autotuner, candidates, args, kwargs, filled_in,
                          rows=_interception.batch_rows.get(state.qualified))
    if state.identity is None:  # once per autotuner and policy: Triton hashes the source
        state.identity = code_identity(autotuner) or ""
    return driver.first_call(arch_tag(), state.module, state.name,
                             tuning_key(autotuner, args, kwargs),
                             [config_data(c) for c in candidates], len(autotuner.configs), runner,
                             identity=state.identity)


def _launch(autotuner, config, args, kwargs):
    launch_kwargs = config.all_kwargs()
    if config.pre_hook is not None:
        config.pre_hook({**dict(zip(autotuner.arg_names, args)), **kwargs, **launch_kwargs})
    return autotuner.fn.run(*args, **kwargs, **launch_kwargs)


adapters.register(adapters.Adapter("triton", "triton", _switch_on, _restore))
