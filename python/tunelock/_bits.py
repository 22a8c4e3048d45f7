"""Running one Triton config on identical inputs, for its bits.

A config is pinned for its bits: one whose outputs differ between two runs
of itself (`tl.atomic_add` partial sums, races) gives different results on
every run however firmly its name is pinned. The engine's first-call driver
decides which runs to make and compares what they give (the record-mode
audit runs every config twice, the first pinned call per key its pinned
config twice); this module runs them, through `TritonRunner`.

Every tensor argument is snapshot before the check and put back before each
run, so each run starts from the call's own inputs; each run goes through
the autotuner's hooks as Triton's benchmarker runs a config (the config's
pre_hook, the autotuner's pre_hook, which zeroes `reset_to_zero` and saves
`restore_value`, the launch, then the post_hook that puts `restore_value`
back) and every tensor argument is read after the launch, before post_hook.
Tensors are torch tensors (compared as raw bytes on their device) or
anything with clone/copy_/tolist (the test stand-in).
"""
import functools
import math
import sys

from tunelock._introspection import call_args, launch_kwargs


# Milliseconds of warm-up and of repeats of a brief timing; Triton's
# autotuner uses 25 and 100.
BRIEF_WARMUP_MS, BRIEF_REPEAT_MS = 1, 5
_UNSET = object()


def _brief_benchmark():
    """triton.testing.do_bench with a brief budget, or None without Triton."""
    try:
        from triton.testing import do_bench
    except ImportError:
        return None
    return functools.partial(do_bench, warmup=BRIEF_WARMUP_MS, rep=BRIEF_REPEAT_MS)


def tensor_arguments(autotuner, args, kwargs):
    """{name: tensor} for every tensor argument of the call."""
    named = dict(zip(autotuner.arg_names, args))
    named.update((k, v) for k, v in kwargs.items() if k in autotuner.arg_names)
    return {name: value for name, value in named.items()
            if hasattr(value, "dtype") and hasattr(value, "clone") and hasattr(value, "copy_")}


def _as_bytes(torch, tensor):
    flat = tensor.detach().contiguous().reshape(-1)
    return flat.view(torch.uint8)


def same_bits(a, b):
    """Whether two tensors hold the same bits: compared on their device
    as raw bytes (so -0.0 differs from 0.0 and NaNs compare by payload)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(a, torch.Tensor):
        return (a.shape == b.shape and a.dtype == b.dtype
                and torch.equal(_as_bytes(torch, a), _as_bytes(torch, b)))
    # repr tells -0.0 from 0.0 and prints every float exactly.
    return repr(a.tolist()) == repr(b.tolist())


def capturing():
    """True inside a CUDA graph capture, where nothing may run twice."""
    torch = sys.modules.get("torch")
    try:
        return bool(torch is not None and torch.cuda.is_available()
                    and torch.cuda.is_current_stream_capturing())
    except Exception:  # an old torch without the query: assume not capturing
        return False


def is_floating(tensor):
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(tensor, torch.Tensor):
        return tensor.is_floating_point()
    return "float" in str(tensor.dtype)


# A second input's floats: signs and exponents spread over 2^-12..2^12, a
# range every float type holds, so sums in another order show in the bits.
_EXPONENTS = 12


def fill_second_input(tensor, seed):
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(tensor, torch.Tensor):
        g = torch.Generator(device=tensor.device).manual_seed(seed)
        magnitude = torch.empty(tensor.shape, device=tensor.device).uniform_(
            -_EXPONENTS, _EXPONENTS, generator=g).exp2_()
        sign = torch.randint(0, 2, tensor.shape, device=tensor.device, generator=g) * 2 - 1
        tensor.copy_((magnitude * sign).to(tensor.dtype))
        return
    import random
    rng = random.Random(seed)
    tensor.copy_(type(tensor)([rng.choice((-1, 1)) * 2.0 ** rng.uniform(-_EXPONENTS, _EXPONENTS)
                               for _ in tensor.tolist()], str(tensor.dtype)))


class IdenticalInputs:
    """Snapshots a call's tensor arguments; each run starts from them (or,
    after `use_second_input`, from a second input); `put_back` leaves the
    arguments as the call passed them."""

    def __init__(self, autotuner, args, kwargs, filled_in=None):
        self.autotuner, self.args, self.kwargs = autotuner, args, kwargs
        self.filled_in = filled_in or {}  # launched as the hot path launches (launch_kwargs)
        self.tensors = tensor_arguments(autotuner, args, kwargs)
        self.saved = {name: t.clone() for name, t in self.tensors.items()}
        self.base = self.saved

    def put_back(self):
        """The arguments as the call passed them, and later runs start from
        them again (not from a second input)."""
        for name, tensor in self.tensors.items():
            tensor.copy_(self.saved[name])
        self.base = self.saved

    def use_second_input(self, seed=20261201):
        """Floating-point tensors get seeded values over a wide exponent
        range; integer and boolean ones (which may index memory) are kept."""
        for index, (name, tensor) in enumerate(sorted(self.tensors.items())):
            if is_floating(tensor):
                fill_second_input(tensor, seed + index)
        self.base = {name: t.clone() for name, t in self.tensors.items()}

    def _run(self, config):
        for name, tensor in self.tensors.items():
            tensor.copy_(self.base[name])
        current = dict(self.kwargs, **launch_kwargs(config, self.filled_in))
        full_nargs = {**dict(zip(self.autotuner.arg_names, self.args)), **self.kwargs,
                      **config.all_kwargs()}
        if config.pre_hook:
            config.pre_hook(full_nargs)
        self.autotuner.pre_hook(full_nargs)
        try:
            self.autotuner.fn.run(*self.args, **current)
        except Exception as error:
            self.autotuner.post_hook(full_nargs, exception=error)
            raise
        after = {name: t.clone() for name, t in self.tensors.items()}
        self.autotuner.post_hook(full_nargs, exception=None)
        return after

    def run_once(self, config):
        """Every tensor argument after one run of `config`."""
        return self._run(config)

    def run_first_rows(self, config, dim, rows, row_tensors):
        """Every tensor argument after one run of `config` on only the first
        `rows` rows: the key argument `dim` set to `rows`, each tensor of
        `row_tensors` ({name: axis}) narrowed to its first `rows` along
        `axis` (a view of the same memory, so the rows land in place)."""
        names = list(self.autotuner.arg_names)
        args, kwargs = list(self.args), dict(self.kwargs)

        def put(name, value):
            position = names.index(name) if name in names else len(args)
            if position < len(args):
                args[position] = value
            else:
                kwargs[name] = value
        put(dim, rows)
        for name, axis in row_tensors.items():
            put(name, self.tensors[name].narrow(axis, 0, rows))
        saved = self.args, self.kwargs
        self.args, self.kwargs = tuple(args), kwargs
        try:
            return self._run(config)
        finally:
            self.args, self.kwargs = saved


class DistinctBits:
    """The distinct sets of output bits a call's runs gave, in order: a
    run's number among them is what a runner hands the driver for its bits
    (equal numbers, equal bits). Compared on the device, so no output is
    copied to the host; a racy config's runs each add one, a bit class adds
    one. A run is a mapping or a sequence of tensors, compared pairwise."""

    def __init__(self):
        self._seen = []

    def number(self, run):
        pairs = (lambda a, b: ((a[k], b[k]) for k in a)) if isinstance(run, dict) else zip
        for number, seen in enumerate(self._seen):
            if all(same_bits(x, y) for x, y in pairs(run, seen)):
                return b"%d" % number
        self._seen.append(run)
        return b"%d" % (len(self._seen) - 1)


class TritonRunner:
    """One call of a Triton autotuner as the engine's first-call driver runs
    it (tunelock.first_call, the Runner protocol): candidate i timed by Triton's own
    benchmarker, hooks and all, or run once from the call's own inputs for
    its bits. The call's tensors are snapshot before its first run, so
    every bits run and `put_back` start from what the call passed."""

    def __init__(self, autotuner, candidates, args, kwargs, filled_in=None, rows=None):
        self.autotuner, self.candidates, self.args, self.kwargs = autotuner, candidates, args, kwargs
        self.filled_in = filled_in
        self.has_outputs = bool(tensor_arguments(autotuner, args, kwargs))
        self.capturing = capturing()
        self._inputs = None
        self._distinct = DistinctBits()
        # Batch invariance: (dim, {tensor name: axis}) as declared with
        # tunelock.triton.batch_rows, and the call's rows along `dim`.
        self.batch_dim, self.batch_rows, self._row_tensors = None, 0, {}
        if rows is not None:
            dim, self._row_tensors = rows
            _, call = call_args(autotuner, args, kwargs)
            value = call.get(dim)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                self.batch_dim, self.batch_rows = dim, value
        self._rows_distinct = DistinctBits()

    def _identical(self):
        if self._inputs is None:
            self._inputs = IdenticalInputs(self.autotuner, self.args, self.kwargs,
                                           self.filled_in)
        return self._inputs

    def time(self, index):
        if self.has_outputs:
            self._identical()  # before Triton's benchmark writes into the outputs
        self.autotuner.nargs = dict(zip(self.autotuner.arg_names, self.args))
        try:
            timing = self.autotuner._bench(*self.args, config=self.candidates[index], **self.kwargs)
        finally:
            self.autotuner.nargs = None
        median = float(timing[0] if isinstance(timing, (list, tuple)) else timing)
        if not math.isfinite(median):  # Triton's benchmarker times a config that cannot run so
            raise RuntimeError("Triton's benchmarker timed it as infinite")
        return median

    def time_briefly(self, index):
        """Candidate i timed with a few milliseconds of repeats, for choosing
        among configs that give the same bits (TUNELOCK_EQUIVALENT=timed):
        Triton's own benchmarker spends about 125 ms per config, most of a
        first step's cost, where a close call costs only a little speed.
        Where the autotuner times with its own do_bench, or Triton's
        benchmarker cannot be swapped, it times as Triton does."""
        brief = _brief_benchmark()
        tuner = self.autotuner
        swappable = (brief is not None and getattr(tuner, "_do_bench", None) is None
                     and isinstance(getattr(type(tuner), "do_bench", None),
                                    functools.cached_property))
        if not swappable:
            return self.time(index)
        saved = tuner.__dict__.pop("do_bench", _UNSET)
        tuner.__dict__["do_bench"] = brief  # an instance value shadows the cached property
        try:
            return self.time(index)
        finally:
            del tuner.__dict__["do_bench"]
            if saved is not _UNSET:
                tuner.__dict__["do_bench"] = saved

    def run_outputs(self, index):
        """The number of this run's bits among the distinct bits this call's
        runs gave so far (DistinctBits)."""
        return self._distinct.number(self._identical().run_once(self.candidates[index]))

    def run_first_rows(self, index, rows):
        """Candidate i on the first `rows` rows alone, and the same rows of
        a run on all of them: each numbered among the rows this call's runs
        gave (DistinctBits; rows of other sizes never compare equal)."""
        inputs = self._identical()
        config = self.candidates[index]
        inside = inputs.run_once(config)
        alone = inputs.run_first_rows(config, self.batch_dim, rows, self._row_tensors)

        def first(run):
            return {name: run[name].narrow(axis, 0, rows) for name, axis in self._row_tensors.items()}
        return self._rows_distinct.number(first(alone)), self._rows_distinct.number(first(inside))

    def use_second_input(self):
        inputs = self._identical()
        if not any(is_floating(t) for t in inputs.tensors.values()):
            return False
        inputs.use_second_input()
        return True

    def put_back(self):
        if self._inputs is not None:
            self._inputs.put_back()
