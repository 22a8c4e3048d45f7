"""Running one Triton config on identical inputs and comparing its bits.

A config is pinned for its bits: one whose outputs differ between two runs
of itself (`tl.atomic_add` partial sums, races) gives different results on
every run however firmly its name is pinned. The record-mode audit runs
every config twice this way, and the first pinned call per key runs its
pinned config twice.

Every tensor argument is snapshot before the check and put back before each
run, so each run starts from the call's own inputs; each run goes through
the autotuner's hooks as Triton's benchmarker runs a config (the config's
pre_hook, the autotuner's pre_hook, which zeroes `reset_to_zero` and saves
`restore_value`, the launch, then the post_hook that puts `restore_value`
back) and every tensor argument is read after the launch, before post_hook.
Tensors are torch tensors (compared as raw bytes on their device) or
anything with clone/copy_/tolist (the test stand-in).
"""
import sys


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

    def __init__(self, autotuner, args, kwargs):
        self.autotuner, self.args, self.kwargs = autotuner, args, kwargs
        self.tensors = tensor_arguments(autotuner, args, kwargs)
        self.saved = {name: t.clone() for name, t in self.tensors.items()}
        self.base = self.saved

    def put_back(self):
        for name, tensor in self.tensors.items():
            tensor.copy_(self.saved[name])

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
        current = dict(self.kwargs, **config.all_kwargs())
        full_nargs = {**dict(zip(self.autotuner.arg_names, self.args)), **current}
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

    def repeated_outputs(self, config):
        """The outputs of two runs when every bit repeated, else None."""
        first = self._run(config)
        second = self._run(config)
        return first if all(same_bits(first[n], second[n]) for n in first) else None

    def repeats_its_bits(self, config):
        """True when two runs gave the same bits in every tensor argument;
        None when the call has no tensor argument to compare."""
        if not self.tensors:
            return None
        return self.repeated_outputs(config) is not None


def bit_classes(outputs):
    """{key: [outputs per input, ...]} -> {key: class number}: the same
    number, the same bits in every tensor on every input."""
    classes, representatives = {}, []
    for key, runs in outputs.items():
        for number, other in representatives:
            if all(same_bits(a[n], b[n]) for a, b in zip(runs, other) for n in a):
                classes[key] = number
                break
        else:
            classes[key] = len(representatives)
            representatives.append((classes[key], runs))
    return classes
