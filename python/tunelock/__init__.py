"""tunelock for Python trainers: the same engine as the C++ launcher and the
`tunelock` CLI (one table format, one set of rules, one choice log, digest
and verify), loaded through a small C ABI.

    import tunelock.triton; tunelock.triton.install()   # the one line a trainer adds

Policy comes from the environment (TUNELOCK_*, Megatron's MCORE_AUTOTUNE_*)
or keyword arguments, validated by the engine with the same messages.
"""
import ctypes
import json
from collections import namedtuple

from . import _native
from ._native import TunelockError, call_json, call_text, check, encode, lib

__all__ = [
    "TunelockError", "Policy", "Choice", "install", "installed_policy", "observes", "tuning_key",
    "pinned_choice", "log_choice", "record", "set_device", "choice_log", "choice_digest", "flush",
    "verify", "maybe_verify", "choose", "merge", "report", "FileKind", "file_kind", "table",
    "convert_table", "version", "signature", "note_bits_check",
]

Choice = namedtuple("Choice", ["index", "signature", "reason", "explanation", "equivalent"],
                    defaults=[None, ()])
FileKind = namedtuple("FileKind", ["kind", "encoding", "problem"], defaults=[None])


def version():
    return lib.tunelock_version().decode()


def _config_form(config):
    """A config as Megatron's dict form: a dict as given, or a Triton Config."""
    if isinstance(config, dict):
        return config
    if hasattr(config, "kwargs") and hasattr(config, "num_warps"):
        from .triton import config_data
        return config_data(config)
    raise TypeError(f"expected a config dict, a triton.Config or a signature, got {config!r}")


def _declared_text(value):
    """`nondeterministic=` as TUNELOCK_NONDETERMINISTIC spells it: a
    {kernel: [config or signature, ...]} dict, or that text itself."""
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        raise TypeError("nondeterministic: expected {kernel: [config, ...]} or "
                        f"'KERNEL@SIGNATURE|...', got {type(value).__name__}")
    items = []
    for kernel, configs in value.items():
        if isinstance(configs, (str, dict)) or hasattr(configs, "kwargs"):
            configs = [configs]
        for config in configs:
            items.append(f"{kernel}@{config if isinstance(config, str) else signature(config)}")
    return "|".join(items)


def _as_text(key, value):
    """A keyword argument as the engine's key/value text."""
    if key == "nondeterministic":
        return _declared_text(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return ",".join(f"{name}={size}" for name, size in value.items())
    if isinstance(value, (list, tuple)):
        return (":" if key == "table_path" else ",").join(str(item) for item in value)
    return str(value)


def _pairs_json(fields):
    return json.dumps({key: _as_text(key, value) for key, value in fields.items()
                       if value is not None})


class Policy:
    """A resolved, validated policy: `Policy(mode="pinned", block_sizes={"BLOCK_M": 64})`,
    or `Policy.from_environment()`. Fields read as attributes (mode, modules,
    config_invariant, table_path, record_path, on_miss, block_sizes, verify_every,
    verify_strict, enumerate, chaos, deterministic, verify_timeout_s, nondeterministic,
    check_bits, intercepts). `nondeterministic` declares configs that change their own
    bits: {"pkg.kernel": [config or triton.Config or signature, ...]}."""

    def __init__(self, over_environment=False, **fields):
        self._fields = fields
        self._over_environment = over_environment
        self._resolved = call_json("tunelock_policy_resolve", encode(_pairs_json(fields)),
                                   int(over_environment))

    @classmethod
    def from_environment(cls):
        policy = cls.__new__(cls)
        policy._fields, policy._over_environment = None, True
        policy._resolved = call_json("tunelock_policy_resolve", None, 1)
        return policy

    @classmethod
    def _from_resolved(cls, resolved):
        policy = cls.__new__(cls)
        policy._fields, policy._over_environment, policy._resolved = None, False, resolved
        return policy

    def __getattr__(self, name):
        resolved = self.__dict__.get("_resolved", {})
        if name in resolved:
            return resolved[name]
        raise AttributeError(name)

    def as_dict(self):
        return dict(self._resolved)

    def __eq__(self, other):
        return isinstance(other, Policy) and self._resolved == other._resolved

    def __repr__(self):
        return f"Policy({self._resolved})"


def install(policy=None, **fields):
    """Installs a policy process-wide (the environment's when none is given).
    A policy that cannot be carried out raises and keeps the previous one."""
    if policy is not None and fields:
        raise TypeError("install() takes a Policy or keyword fields, not both")
    if policy is None and not fields:
        return Policy._from_resolved(call_json("tunelock_install", None, 1))
    if policy is not None:
        if policy._fields is None:  # from the environment
            return Policy._from_resolved(call_json("tunelock_install", None, 1))
        fields, over = policy._fields, policy._over_environment
    else:
        over = False
    return Policy._from_resolved(call_json("tunelock_install", encode(_pairs_json(fields)), int(over)))


def installed_policy():
    return Policy._from_resolved(call_json("tunelock_installed_policy"))


def observes(module, name):
    """Whether the installed policy pins, logs and verifies module.name."""
    observed = ctypes.c_int()
    check(lib.tunelock_observes(encode(module), encode(name), ctypes.byref(observed)))
    return bool(observed.value)


def _key_value(value):
    if isinstance(value, (bool, int, str)):
        return value
    return str(value)


def tuning_key(key_args, dtypes=()):
    """`name=value` for each (name, value) key argument, then each dtype, joined by `|`."""
    return call_text("tunelock_tuning_key",
                     encode(json.dumps([[name, _key_value(value)] for name, value in key_args])),
                     encode(json.dumps([str(dtype) for dtype in dtypes])))


def pinned_choice(arch, module, name, key, candidates):
    """The timing-free choice under the installed policy, logged as pinned."""
    result = call_json("tunelock_pinned_choice", encode(arch), encode(module), encode(name),
                       encode(key), encode(json.dumps(list(candidates))))
    return Choice(result["index"], result["signature"], result["reason"],
                  equivalent=tuple(result.get("equivalent", ())))


def log_choice(arch, module, name, key, config, pinned):
    is_new = ctypes.c_int()
    check(lib.tunelock_log_choice(encode(arch), encode(module), encode(name), encode(key),
                                  encode(json.dumps(config)), int(bool(pinned)),
                                  ctypes.byref(is_new)))
    return bool(is_new.value)


def record(arch, qualified, key, winner, timings):
    """Record mode: `timings` is [{"config": ..., "median_ms": float or None}, ...]."""
    check(lib.tunelock_record(encode(arch), encode(qualified), encode(key),
                              encode(json.dumps(winner)), encode(json.dumps(timings))))


def signature(config):
    """The engine's text for a config (dict or triton.Config), as tables,
    records and TUNELOCK_NONDETERMINISTIC name it."""
    return call_text("tunelock_signature", encode(json.dumps(_config_form(config))))


def note_bits_check(module, name, key, config, repeated):
    """Reports the first pinned call's bits check: `repeated` True (same
    bits), False (changed: warns once, or raises under verify_strict) or None
    (nothing to compare)."""
    flag = -1 if repeated is None else int(bool(repeated))
    check(lib.tunelock_note_bits_check(encode(module), encode(name), encode(key),
                                       encode(json.dumps(_config_form(config))), flag))


def set_device(device_name="", sm_count=0, driver_version="", cuda_version=""):
    check(lib.tunelock_set_device(encode(json.dumps({
        "device_name": device_name, "sm_count": int(sm_count),
        "driver_version": driver_version, "cuda_version": cuda_version}))))


def choice_log():
    return call_json("tunelock_choice_log")


def choice_digest():
    return call_text("tunelock_choice_digest")


def flush(choice_log_prefix=None):
    """Writes records and (with a prefix, or TUNELOCK_CHOICE_LOG) the choice log now."""
    check(lib.tunelock_flush(encode(choice_log_prefix)))


def verify(group=None):
    """One check across the ranks of `group`: True when every rank chose alike."""
    return _verify(-1, group)


def maybe_verify(iteration, group=None):
    """verify() when the policy's verify_every divides `iteration`; None when no check ran.
    Over torch.distributed when a process group is initialised, else over UCX."""
    return _verify(int(iteration), group)


def _verify(iteration, group):
    from . import distributed
    verdict = distributed.run_verify(iteration, group)
    return None if verdict < 0 else bool(verdict)


def choose(kernel, key, candidates=None, candidates_file=None, tables=(), arch=None,
           on_miss="min_cost", block_sizes=None, chaos=False, rank=0):
    """One decision offline, with the rules' own explanation (`tunelock choose --explain`)."""
    request = {"kernel": kernel, "key": key, "tables": [str(t) for t in tables], "arch": arch,
               "on_miss": on_miss, "chaos": bool(chaos), "rank": int(rank),
               "block_sizes": _as_text("block_sizes", block_sizes) if block_sizes else ""}
    if candidates_file is not None:
        request["candidates_file"] = str(candidates_file)
    else:
        request["candidates"] = list(candidates or [])
    result = call_json("tunelock_choose", encode(json.dumps(request)))
    return Choice(result["index"], result["signature"], result["reason"], result["explanation"])


def merge(records, output, arch=None, source=None):
    """Record files -> a table at `output` (.tlb binary, else JSON), as `tunelock merge`."""
    return call_json("tunelock_merge", encode(json.dumps({
        "records": [str(r) for r in records], "output": str(output), "arch": arch,
        "source": source})))


def report(records):
    """Where ranks' record files disagree, and nondeterministic candidates."""
    return call_json("tunelock_report", encode(json.dumps({"records": [str(r) for r in records]})))


def file_kind(path):
    """What a tunelock file is, told from its name and bytes as the CLI and the page tell it:
    FileKind(kind, encoding, problem). kind is "table", "manifest", "record", "timings",
    "choice_log", or "unknown" (problem then says why); encoding is "json" or "binary"
    (None when unknown). Raises TunelockError when the file cannot be read."""
    result = call_json("tunelock_file_kind", encode(path))
    return FileKind(result["kind"], result["encoding"], result.get("problem"))


def table(path):
    """A table file (JSON or binary) as a dict, in canonical form."""
    return json.loads(call_text("tunelock_table_json", encode(path)))


def convert_table(input_path, output_path):
    check(lib.tunelock_table_convert(encode(input_path), encode(output_path)))
