"""torch.compile under the lockfile: Inductor's two autotuners carried
through the engine's first-call story, as every other face's are.

- **Templates, at compile time.** `mode="max-autotune"` times GEMM
  templates against ATen (`AlgorithmSelectorCache.__call__`). Its calls go
  to the engine's driver with a runner that runs nothing itself
  (`runs_candidates` false): pinned, the table's choice is the only one
  Inductor is handed, so it compiles and benchmarks nothing else; a miss
  takes Inductor's own untimed default (the ATen call, as its
  deterministic mode does) or refuses under `on_miss=error`. Recording,
  Inductor benchmarks as usual (epilogue fusion decided at once, so what
  is recorded is what is launched) and the runner hands the driver
  Inductor's own timings, from its feedback savers. Under chaos a template
  keeps Inductor's untimed default (a random tile may not compile: Inductor
  drops tiles too big for the device only by compiling every one).
- **Generated kernels, at their first launch.** Pointwise, reduction and
  persistent kernels time their configs in `CachingAutotuner`'s
  `autotune_to_one_config`. The driver gets a runner over Inductor's own
  `bench` and the call's arguments: pinned, the table's config launches,
  its bits checked once; recording, every config is timed with the bits
  audit. Coordinate descent, which makes configs no list holds, is off for
  every kernel tunelock intercepts.

Keys and candidates are `tunelock._inductor_describe`'s. Entries sit in
the same tables as Triton's and C++'s, under `inductor.<op>` and
`inductor.<kernel>`; the choice log, verify, merge and audit are the
engine's. Supported: torch 2.9 to 2.11 (`SUPPORTED`); others are refused.
"""
import inspect
import math
import re
import sys
import threading

from tunelock import _adapters as adapters
from tunelock import _api as api
from tunelock import _hooks as hooks
from tunelock import _inductor_describe as describe
from tunelock import _driver as driver
from tunelock._bits import DistinctBits, capturing
from tunelock._introspection import arch_tag
from tunelock._native import TunelockError, logger

SUPPORTED = ((2, 9), (2, 10), (2, 11))


def _torch_version():
    """torch's version, or None where torch cannot be imported."""
    try:
        import torch
    except ImportError:
        return None
    return str(torch.__version__)


def supported(version):
    """Whether tunelock intercepts the Inductor of torch `version`."""
    found = re.match(r"(\d+)\.(\d+)", str(version))
    return bool(found) and (int(found.group(1)), int(found.group(2))) in SUPPORTED


def _supported_text():
    return ", ".join(f"{major}.{minor}" for major, minor in SUPPORTED)


class _Interception:
    """What the patch holds: Inductor's own methods, the feedback saver's
    catch for the decision being recorded, and the lock every decision
    takes (Inductor compiles one graph per thread, but kernels may launch
    from several)."""

    def __init__(self):
        self.lock = threading.RLock()
        self.selector_class = None
        self.original_call = None
        self.autotuner_class = None
        self.original_autotune = None
        self.original_descent = None
        self.saver_added = False
        self.said_no_torch = False  # the missing-torch line, said once
        self.catching = None  # the choices of the decision whose timings are awaited
        self.caught = None
        self.said_unsupported = False


_interception = _Interception()


def install(policy=None, **fields):
    """Installs `policy` (default: the environment's) and intercepts
    Inductor's template selection and its generated kernels' autotuning.
    Raises TunelockError where torch has no Inductor or is not a supported
    version. Repeated calls replace the policy; the patch is applied once."""
    with _interception.lock:
        installed = api._install("inductor.install", policy, fields)
        if _torch_version() is None:
            # As tunelock.triton.install says of a missing Triton: one line, policy kept.
            if not _interception.said_no_torch:
                _interception.said_no_torch = True
                logger.warning("torch is not importable here: tunelock.inductor intercepts no "
                               "torch.compile kernel (the policy is installed)")
            return installed
        _patch()
        return installed


def _switch_on():
    """The registry's switch (tunelock.install, and tunelock.triton.install
    where torch has been imported): intercepts Inductor when torch is
    supported; says why not, once, when it is not. Returns whether it did."""
    try:
        _patch()
        return True
    except TunelockError as why:
        if not _interception.said_unsupported:
            _interception.said_unsupported = True
            logger.warning("torch.compile is not locked: %s", why)
        return False


def uninstall():
    """Puts Inductor's own methods back."""
    held = _interception
    with held.lock:
        if held.original_call is not None:
            held.selector_class.__call__ = held.original_call
            held.autotuner_class.autotune_to_one_config = held.original_autotune
            held.autotuner_class.coordinate_descent_tuning = held.original_descent
        held.original_call = held.original_autotune = held.original_descent = None


def _inductor_modules():
    version = _torch_version()
    if not supported(version):
        raise TunelockError(f"tunelock.inductor supports torch {_supported_text()}; this is "
                            f"torch {version}. Pin one of those, or run torch.compile unlocked")
    try:
        from torch._inductor import select_algorithm
        from torch._inductor.runtime import triton_heuristics
    except ImportError as missing:
        raise TunelockError(f"torch {version} has no Inductor to intercept ({missing})") from None
    for module, names in ((select_algorithm, ("AlgorithmSelectorCache", "add_feedback_saver")),
                          (triton_heuristics, ("CachingAutotuner",))):
        absent = [name for name in names if not hasattr(module, name)]
        if absent:
            raise TunelockError(f"torch {version}'s {module.__name__} has no "
                                f"{', '.join(absent)} to intercept")
    return select_algorithm, triton_heuristics


def _patch():
    held = _interception
    with held.lock:
        if held.original_call is not None:
            return
        select_algorithm, triton_heuristics = _inductor_modules()
        selector = select_algorithm.AlgorithmSelectorCache
        autotuner = triton_heuristics.CachingAutotuner
        for owner, method in ((selector, "__call__"), (autotuner, "autotune_to_one_config"),
                              (autotuner, "coordinate_descent_tuning")):
            if not callable(getattr(owner, method, None)):
                raise TunelockError(f"this Inductor's {owner.__name__} has no {method} to "
                                    f"intercept")
        if not held.saver_added:  # Inductor keeps its savers for the process's life
            select_algorithm.add_feedback_saver(_feedback_saver)
            held.saver_added = True
        held.selector_class, held.original_call = selector, selector.__call__
        held.autotuner_class = autotuner
        held.original_autotune = autotuner.autotune_to_one_config
        held.original_descent = autotuner.coordinate_descent_tuning
        selector.__call__ = _select_algorithm
        autotuner.autotune_to_one_config = _autotune_to_one_config
        autotuner.coordinate_descent_tuning = _coordinate_descent_tuning


# ---- Templates: AlgorithmSelectorCache.__call__ -------------------------

def _feedback_saver(timings, name, input_nodes, choices, *rest):
    """Inductor's timings of one decision's choices, caught for the one
    this module is recording (every other call passes by)."""
    held = _interception
    if held.catching is not None and any(c in held.catching for c in timings):
        held.caught = dict(timings)


def _size_hints():
    """Inductor's sizes are symbols; their hints are the integers the key
    holds (as Inductor's own autotune cache keys them)."""
    try:
        from torch._inductor.virtualized import V
        sizevars = V.graph.sizevars
        return lambda values: sizevars.size_hints(values)
    except Exception:  # outside a graph (a stand-in): the sizes are integers already
        return lambda values: [int(v) for v in values]


class _TemplateRunner(driver.Runner):
    """A compile-time decision's runner: nothing runs here; Inductor's own
    benchmark of every choice, run once when the driver first asks for a
    time (a record or an audit), hands over its figures."""

    runs_candidates = False

    def __init__(self, benchmark):
        self._benchmark = benchmark
        self._times = None

    def time(self, index):
        if self._times is None:
            self._times = self._benchmark()
        return self._times[index]

    def run_outputs(self, index):
        raise TunelockError("a template choice is not run by tunelock")


def _bound(original, selector, args, kwargs):
    """The call's arguments by name, as Inductor's own signature binds them."""
    return inspect.signature(original).bind(selector, *args, **kwargs)


def _call_with(original, bound, **changes):
    """Inductor's own call with some arguments changed."""
    changed = bound.signature.bind(*bound.args, **bound.kwargs)
    changed.arguments.update(changes)
    return original(*changed.args, **changed.kwargs)


def _select_algorithm(self, *args, **kwargs):
    held = _interception
    original = held.original_call
    bound = _bound(original, self, args, kwargs)
    name, choices = bound.arguments["name"], list(bound.arguments["choices"])
    op = describe.algorithm_name(name)
    if len(choices) < 2 or not driver.call_plan(describe.MODULE, op, len(choices)).intercepts:
        return original(self, *args, **kwargs)
    with held.lock:
        key = hooks.tuning_key(describe.template_key_args(bound.arguments["input_nodes"],
                                                          bound.arguments["layout"], _size_hints()))
        candidates = describe.template_candidates(choices)
        # Decided at once, so the record holds what launches: Inductor's
        # epilogue-fusion benchmark would choose again later, on its clock.
        at_once = ({"return_multi_template": False}
                   if "return_multi_template" in bound.signature.parameters else {})

        def benchmark():
            held.catching, held.caught = set(choices), None
            try:
                _call_with(original, bound, **at_once)
                caught = held.caught
            finally:
                held.catching, held.caught = None, None
            if not caught:
                raise TunelockError(
                    f"Inductor chose among {len(choices)} '{name}' choices without handing its "
                    f"timings to its feedback savers (its pipelined or subprocess autotuning?); "
                    f"turn those off to record or audit under tunelock")
            return [float(caught.get(choice, math.inf)) for choice in choices]

        # Under chaos the driver keeps Inductor's own untimed default here: a
        # tile drawn at random may not compile (first_call.cpp).
        outcome = driver.first_call(arch_tag(), describe.MODULE, op, key, candidates,
                                    len(choices), _TemplateRunner(benchmark),
                                    own_default=describe.own_template_default(choices))
        # One choice: Inductor compiles it and benchmarks nothing.
        return _call_with(original, bound, choices=[choices[outcome.launched]], **at_once)


# ---- Generated kernels: CachingAutotuner ---------------------------------

def _kernel_plan(autotuner, count):
    return driver.call_plan(describe.MODULE, describe.kernel_name(autotuner), count)


def _coordinate_descent_tuning(self, launcher, *args, **kwargs):
    """Off wherever tunelock intercepts the kernel: it makes configs no
    list holds, timed on this process's clock."""
    if _kernel_plan(self, 2).intercepts:
        # Marked as Inductor marks a descent's result, so its run() does not
        # ask again on every launch (the cached launch stays a launch).
        launcher.config.found_by_coordesc = True
        return launcher
    return _interception.original_descent(self, launcher, *args, **kwargs)


class _KernelRunner(driver.Runner):
    """A generated kernel's first launch: each config timed by Inductor's
    own `bench`, and run on copies of every buffer it writes for its bits."""

    runs_candidates = True
    has_outputs = True

    def __init__(self, autotuner, launchers, args, kwargs):
        self.autotuner, self.launchers = autotuner, launchers
        self.args, self.kwargs = args, kwargs
        self.capturing = capturing()
        names = list(getattr(autotuner.fn, "arg_names", ()))
        mutated = set(getattr(autotuner, "mutated_arg_names", ()) or ())
        self.written = [i for i, name in enumerate(names[:len(args)])
                        if (name in mutated or name.startswith(("out_ptr", "in_out_ptr")))
                        and hasattr(args[i], "clone")]
        self.distinct = DistinctBits()

    def time(self, index):
        return float(self.autotuner.bench(self.launchers[index], *self.args, **self.kwargs))

    def run_outputs(self, index):
        args = list(self.args)
        for i in self.written:
            args[i] = args[i].clone()
        reset = getattr(self.autotuner, "reset_to_zero_args", None)
        if reset is not None:
            reset(*args, **self.kwargs)
        self.launchers[index](*args, **self.kwargs, stream=_stream())
        return self.distinct.number(tuple(args[i] for i in self.written))

    def use_second_input(self):
        return False

    def put_back(self):
        pass  # runs write into copies; Inductor's bench clones what it mutates


def _stream():
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_available():
            return torch.cuda.current_stream().cuda_stream
    except Exception:
        pass
    return 0


def _autotune_to_one_config(self, *args, **kwargs):
    held = _interception
    launchers = list(self.launchers)
    name = describe.kernel_name(self)
    if not _kernel_plan(self, len(launchers)).intercepts:
        return held.original_autotune(self, *args, **kwargs)
    with held.lock:
        key = hooks.tuning_key(describe.kernel_key_args(self))
        outcome = driver.first_call(arch_tag(), describe.MODULE, name, key,
                                    describe.kernel_candidates(launchers), len(launchers),
                                    _KernelRunner(self, launchers, args, kwargs), own_default=0)
        self.launchers = [launchers[outcome.launched]]


adapters.register(adapters.Adapter("inductor", "torch", _switch_on, uninstall))
