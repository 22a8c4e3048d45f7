"""tunelock for Python trainers: the same engine as the C++ launcher and the
`tunelock` CLI (one table format, one set of rules, one choice log, digest
and verify), loaded through a small C ABI.

    import tunelock.triton; tunelock.triton.install()   # the one line a trainer adds

Policy comes from the environment (TUNELOCK_*, Megatron's MCORE_AUTOTUNE_*)
or keyword arguments, validated by the engine with the same messages.
"""
import ctypes
import json
import os
from collections import namedtuple
from collections.abc import Iterable, Mapping
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _arguments as arguments
from . import _native
from . import watch
from ._arguments import PathArgument
from ._native import TunelockError, call_json, call_text, check, encode, lib

__all__ = [
    "TunelockError", "Policy", "Choice", "install", "installed_policy", "observes", "tuning_key",
    "pinned_choice", "log_choice", "record", "set_device", "choice_log", "choice_digest", "flush",
    "verify", "maybe_verify", "choose", "merge", "report", "FileKind", "file_kind", "table",
    "convert_table", "version", "signature", "note_bits_check", "watch",
]

Choice = namedtuple("Choice", ["index", "signature", "reason", "explanation", "equivalent"],
                    defaults=[None, ()])
FileKind = namedtuple("FileKind", ["kind", "encoding", "problem"], defaults=[None])

Config = Union[Dict[str, Any], Any]  # a config dict (Megatron's form) or a triton.Config


def version() -> str:
    return lib.tunelock_version().decode()


def _declared_text(function: str, value: Any) -> str:
    """`nondeterministic=` as TUNELOCK_NONDETERMINISTIC spells it: a
    {kernel: [config or signature, ...]} dict, or that text itself."""
    if isinstance(value, str):
        return value
    if not isinstance(value, Mapping):
        raise TypeError(f"tunelock.{function}: nondeterministic: expected {{kernel: [config, ...]}} "
                        f"or 'KERNEL@SIGNATURE|...', got {arguments.type_name(value)}")
    items = []
    for kernel, configs in value.items():
        kernel = arguments.kernel_name(function, "nondeterministic", kernel)
        if isinstance(configs, (str, Mapping)) or arguments.is_triton_config(configs):
            configs = [configs]
        at = f"nondeterministic[{kernel!r}]"
        for index, config in enumerate(arguments.list_items(
                function, at, configs, "a config, a signature or a list of them")):
            if isinstance(config, str):
                text = arguments.text(function, f"{at}[{index}]", config, empty=False)
            else:
                text = _signature(function, f"{at}[{index}]", config)
            items.append(f"{kernel}@{text}")
    return "|".join(items)


def _as_text(function: str, key: str, value: Any) -> str:
    """A keyword argument as the engine's key/value text."""
    if key == "nondeterministic":
        text = _declared_text(function, value)
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, Mapping):
        text = ",".join(f"{arguments.text(function, key, name)}={size}"
                        for name, size in value.items())
    elif isinstance(value, (list, tuple)):
        items = [arguments.text(function, f"{key}[{index}]",
                                os.fspath(item) if isinstance(item, os.PathLike) else item)
                 for index, item in enumerate(value)]
        text = (":" if key == "table_path" else ",").join(items)
    elif isinstance(value, os.PathLike):
        text = arguments.path(function, key, value)
    elif isinstance(value, (str, int, float)):
        text = str(value)
    elif hasattr(value, "__index__"):  # numpy's and torch's integers
        text = str(arguments.integer(function, key, value))
    else:
        raise TypeError(f"tunelock.{function}: {key}: expected a string, a number, a bool, a "
                        f"list or a dict, got {arguments.type_name(value)}")
    return arguments.text(function, key, text)


def _pairs_json(function: str, fields: Dict[str, Any]) -> str:
    return json.dumps({arguments.text(function, "field name", key): _as_text(function, key, value)
                       for key, value in fields.items() if value is not None})


class Policy:
    """A resolved, validated policy: `Policy(mode="pinned", block_sizes={"BLOCK_M": 64})`,
    or `Policy.from_environment()`. Fields read as attributes (mode, modules,
    config_invariant, table_path, record_path, on_miss, block_sizes, verify_every,
    verify_strict, enumerate, chaos, deterministic, verify_timeout_s, nondeterministic,
    check_bits, intercepts). `nondeterministic` declares configs that change their own
    bits: {"pkg.kernel": [config or triton.Config or signature, ...]}."""

    def __init__(self, over_environment: bool = False, **fields: Any) -> None:
        over_environment = arguments.flag("Policy", "over_environment", over_environment)
        self._fields = fields
        self._over_environment = over_environment
        self._resolved = call_json("tunelock_policy_resolve", encode(_pairs_json("Policy", fields)),
                                   int(over_environment), where="tunelock.Policy")

    @classmethod
    def from_environment(cls) -> "Policy":
        policy = cls.__new__(cls)
        policy._fields, policy._over_environment = None, True
        policy._resolved = call_json("tunelock_policy_resolve", None, 1)
        return policy

    @classmethod
    def _from_resolved(cls, resolved: Dict[str, Any]) -> "Policy":
        policy = cls.__new__(cls)
        policy._fields, policy._over_environment, policy._resolved = None, False, resolved
        return policy

    def __getattr__(self, name: str) -> Any:
        resolved = self.__dict__.get("_resolved", {})
        if name in resolved:
            return resolved[name]
        raise AttributeError(name)

    def as_dict(self) -> Dict[str, Any]:
        return dict(self._resolved)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Policy) and self._resolved == other._resolved

    def __repr__(self) -> str:
        return f"Policy({self._resolved})"


def install(policy: Optional[Policy] = None, **fields: Any) -> Policy:
    """Installs a policy process-wide (the environment's when none is given).
    A policy that cannot be carried out raises and keeps the previous one."""
    return _install("install", policy, fields)


def _install(function: str, policy: Optional[Policy], fields: Dict[str, Any]) -> Policy:
    """install() for tunelock.install and tunelock.triton.install (`function`
    names the one called in messages)."""
    if policy is not None and not isinstance(policy, Policy):
        raise TypeError(f"tunelock.{function}: policy: expected a tunelock.Policy or None, got "
                        f"{arguments.type_name(policy)} (policy fields go as keywords: "
                        "install(mode=\"pinned\"))")
    if policy is not None and fields:
        raise TypeError(f"tunelock.{function}: takes a Policy or keyword fields, not both")
    where = f"tunelock.{function}"
    if policy is None and not fields:
        return Policy._from_resolved(call_json("tunelock_install", None, 1, where=where))
    if policy is not None:
        if policy._fields is None:  # from the environment
            return Policy._from_resolved(call_json("tunelock_install", None, 1, where=where))
        fields, over = policy._fields, policy._over_environment
    else:
        over = False
    return Policy._from_resolved(call_json("tunelock_install",
                                           encode(_pairs_json(function, fields)), int(over),
                                           where=where))


def installed_policy() -> Policy:
    return Policy._from_resolved(call_json("tunelock_installed_policy"))


def observes(module: str, name: str) -> bool:
    """Whether the installed policy pins, logs and verifies module.name."""
    module = arguments.text("observes", "module", module)
    name = arguments.kernel_name("observes", "name", name)
    observed = ctypes.c_int()
    check(lib.tunelock_observes(encode(module), encode(name), ctypes.byref(observed)))
    return bool(observed.value)


def tuning_key(key_args: Union[Iterable[Tuple[str, Any]], Mapping[str, Any]],
               dtypes: Union[str, Iterable[Any]] = ()) -> str:
    """`name=value` for each (name, value) key argument, then each dtype, joined by `|`.
    Values are integers (int64), booleans or text (anything else as str(value))."""
    pairs = arguments.key_arguments("tuning_key", "key_args", key_args)
    dtype_texts = arguments.texts("tuning_key", "dtypes", dtypes)
    return call_text("tunelock_tuning_key", encode(json.dumps([list(pair) for pair in pairs])),
                     encode(json.dumps(dtype_texts)), where="tunelock.tuning_key: key_args or dtypes")


def _kernel_call(function: str, arch: str, module: str, name: str,
                 key: str) -> Tuple[bytes, bytes, bytes, bytes]:
    """The arch, module, kernel name and key of one call, checked and encoded
    for the C ABI, as pinned_choice and log_choice take them."""
    return (encode(arguments.arch(function, "arch", arch)),
            encode(arguments.text(function, "module", module)),
            encode(arguments.kernel_name(function, "name", name)),
            encode(arguments.text(function, "key", key)))


def pinned_choice(arch: str, module: str, name: str, key: str,
                  candidates: Sequence[Config]) -> Choice:
    """The timing-free choice under the installed policy, logged as pinned."""
    function = "pinned_choice"
    call = _kernel_call(function, arch, module, name, key)
    configs = arguments.configs(function, "candidates", candidates)
    result = call_json("tunelock_pinned_choice", *call, encode(json.dumps(configs)),
                       where="tunelock.pinned_choice: candidates")
    return Choice(result["index"], result["signature"], result["reason"],
                  equivalent=tuple(result.get("equivalent", ())))


def log_choice(arch: str, module: str, name: str, key: str, config: Config, pinned: bool) -> bool:
    function = "log_choice"
    call = _kernel_call(function, arch, module, name, key)
    config = arguments.config(function, "config", config)
    pinned = arguments.flag(function, "pinned", pinned)
    is_new = ctypes.c_int()
    check(lib.tunelock_log_choice(*call, encode(json.dumps(config)), int(pinned),
                                  ctypes.byref(is_new)),
          "tunelock.log_choice: config")
    return bool(is_new.value)


def record(arch: str, qualified: str, key: str, winner: Config,
           timings: Sequence[Dict[str, Any]]) -> None:
    """Record mode: `timings` is [{"config": ..., "median_ms": float or None,
    "nondeterministic": bool (optional), "class": int (optional)}, ...].
    What the record readers would refuse (a bad arch tag, an empty kernel
    name or key) is refused here, not at merge."""
    function = "record"
    arch = arguments.arch(function, "arch", arch)
    qualified = arguments.kernel_name(function, "qualified", qualified)
    key = arguments.key(function, "key", key)
    winner = arguments.config(function, "winner", winner)
    timings = arguments.timings(function, "timings", timings)
    check(lib.tunelock_record(encode(arch), encode(qualified), encode(key),
                              encode(json.dumps(winner)), encode(json.dumps(timings))),
          "tunelock.record: winner or timings")


def signature(config: Config) -> str:
    """The engine's text for a config (dict or triton.Config), as tables,
    records and TUNELOCK_NONDETERMINISTIC name it."""
    return _signature("signature", "config", config)


def _signature(function: str, argument: str, config: Config) -> str:
    return call_text("tunelock_signature",
                     encode(json.dumps(arguments.config(function, argument, config))),
                     where=f"tunelock.{function}: {argument}")


def call_plan(module: str, name: str, config_count: int) -> str:
    """What the first call of a kernel with `config_count` configs does under
    the installed policy, as the engine plans it: "untouched", "single",
    "single_logged", "pinned", "audited", "timed_logged" or "timed_recorded"."""
    function = "call_plan"
    module = arguments.text(function, "module", module)
    name = arguments.kernel_name(function, "name", name)
    count = arguments.integer(function, "config_count", config_count, 0)
    return call_text("tunelock_call_plan", encode(module), encode(name), count,
                     where="tunelock.call_plan")


def audit_key(arch: str, module: str, name: str, key: str, candidates: Sequence[Config],
              launched: int, timings: Sequence[Dict[str, Any]], repeated: Optional[bool]) -> int:
    """Audit mode's first call of a pinned key: `timings` per candidate, in
    order, as record() takes them; `launched` the index launched;
    `repeated` the pinned config's bits check. Returns the entry's id for
    count_audited_call."""
    function = "audit_key"
    call = _kernel_call(function, arch, module, name, key)
    configs = arguments.configs(function, "candidates", candidates)
    launched = arguments.integer(function, "launched", launched, 0, len(configs) - 1)
    timings = arguments.timings(function, "timings", timings)
    repeated = arguments.optional_flag(function, "repeated", repeated)
    entry = ctypes.c_int64(-1)
    check(lib.tunelock_audit_key(*call, encode(json.dumps(configs)), launched,
                                 encode(json.dumps(timings)),
                                 -1 if repeated is None else int(repeated), ctypes.byref(entry)))
    return entry.value


def autotune_configs(configs: Sequence[Any]) -> List[Any]:
    """Megatron's `selection.autotune_configs`: for a kernel with no
    autotuner to intercept, the configs to hand to `triton.autotune` under
    the installed policy — under pinned, the block-size match or the
    cheapest (a one-element list, so nothing is timed); otherwise every
    config. Takes Triton Configs or config dicts and returns the same objects."""
    function = "autotune_configs"
    items = arguments.list_items(function, "configs", configs, "a list of configs")
    data = [arguments.config(function, f"configs[{i}]", c) for i, c in enumerate(items)]
    if not data:
        return []
    kept = call_json("tunelock_autotune_configs", encode(json.dumps(data)),
                     where="tunelock.autotune_configs")
    return [items[i] for i in kept]


def count_audited_call(entry: int, calls: int = 1) -> None:
    """One more call (or `calls`) of an audited key, for the call-weighted regret."""
    check(lib.tunelock_count_audited_call(entry, calls))


def audit(audits: Union[PathArgument, Iterable[PathArgument]],
          max_regret: float = 5.0) -> Dict[str, Any]:
    """What a table costs today, from TUNELOCK_MODE=audit runs' files
    (`<prefix>.rank<N>.audit.json`), as `tunelock table audit` prints it:
    {"rows": [{kernel, key, pinned, pinned_ms, fastest, fastest_ms,
    regret_pct, stale, bits_changed, calls, ...}], "total_regret_pct",
    "exit_code" (1 over max_regret % or on changed bits), "text"}."""
    function = "audit"
    request = {"audits": arguments.paths(function, "audits", audits),
               "max_regret": arguments.number(function, "max_regret", max_regret, 0.0)}
    return call_json("tunelock_audit_report", encode(json.dumps(request)), where="tunelock.audit")


def note_bits_check(module: str, name: str, key: str, config: Config,
                    repeated: Optional[bool]) -> None:
    """Reports the first pinned call's bits check: `repeated` True (same
    bits), False (changed: warns once, or raises under verify_strict) or None
    (nothing to compare)."""
    function = "note_bits_check"
    module = arguments.text(function, "module", module)
    name = arguments.kernel_name(function, "name", name)
    key = arguments.text(function, "key", key)
    config = arguments.config(function, "config", config)
    repeated = arguments.optional_flag(function, "repeated", repeated)
    flag = -1 if repeated is None else int(repeated)
    check(lib.tunelock_note_bits_check(encode(module), encode(name), encode(key),
                                       encode(json.dumps(config)), flag),
          "tunelock.note_bits_check: config")


def set_device(device_name: str = "", sm_count: int = 0, driver_version: str = "",
               cuda_version: str = "", triton: str = "",
               packages: Optional[Mapping[str, str]] = None) -> None:
    """The device and software, for record sidecars (and so for the tables
    merged from them): sm_count 0 means unknown; `packages` maps a package to
    its version ({"torch": "2.11.0"}). The recording time is stamped now."""
    function = "set_device"
    device: Dict[str, Any] = {
        "device_name": arguments.text(function, "device_name", device_name),
        "sm_count": arguments.integer(function, "sm_count", sm_count, 0, arguments.INT64_MAX),
        "driver_version": arguments.text(function, "driver_version", driver_version),
        "cuda_version": arguments.text(function, "cuda_version", cuda_version),
        "triton": arguments.text(function, "triton", triton),
    }
    if packages is not None:
        if not isinstance(packages, Mapping):
            raise TypeError(f"tunelock.{function}: packages: expected a mapping of package "
                            f"to version, got {type(packages).__name__}")
        device["packages"] = {arguments.text(function, "packages", name):
                              arguments.text(function, f"packages[{name!r}]", version)
                              for name, version in packages.items()}
    check(lib.tunelock_set_device(encode(json.dumps(device))),
          "tunelock.set_device: device_name, sm_count, driver_version or cuda_version")


def choice_log() -> Dict[str, str]:
    return call_json("tunelock_choice_log")


def choice_digest() -> str:
    return call_text("tunelock_choice_digest")


def flush(choice_log_prefix: Optional[PathArgument] = None) -> None:
    """Writes records and (with a prefix, or TUNELOCK_CHOICE_LOG) the choice log now."""
    prefix = arguments.optional_path("flush", "choice_log_prefix", choice_log_prefix, empty=True)
    check(lib.tunelock_flush(encode(prefix)))


def verify(group: Any = None) -> bool:
    """One check across the ranks of `group`: True when every rank chose alike."""
    return _verify(-1, group)


def maybe_verify(iteration: int, group: Any = None) -> Optional[bool]:
    """verify() when the policy's verify_every divides `iteration`; None when no check ran.
    Over torch.distributed when a process group is initialised, else over UCX."""
    return _verify(arguments.integer("maybe_verify", "iteration", iteration, 0,
                                     arguments.INT64_MAX), group)


def _verify(iteration: int, group: Any) -> Optional[bool]:
    from . import distributed
    verdict = distributed.run_verify(iteration, group)
    return None if verdict < 0 else bool(verdict)


def choose(kernel: str, key: str, candidates: Optional[Sequence[Config]] = None,
           candidates_file: Optional[PathArgument] = None,
           tables: Union[PathArgument, Iterable[PathArgument], None] = (),
           arch: Optional[str] = None, on_miss: str = "min_cost",
           block_sizes: Union[Mapping[str, int], str, None] = None, chaos: bool = False,
           rank: int = 0) -> Choice:
    """One decision offline, with the rules' own explanation (`tunelock choose --explain`).
    `tables` is a list of table files or directories (one path is a list of one)."""
    function = "choose"
    if candidates is not None and candidates_file is not None:
        raise TypeError("tunelock.choose: candidates, candidates_file: give one, not both")
    if block_sizes is not None and not isinstance(block_sizes, (str, Mapping)):
        raise TypeError("tunelock.choose: block_sizes: expected {name: size} or 'NAME=SIZE,...', "
                        f"got {arguments.type_name(block_sizes)}")
    request = {
        "kernel": arguments.kernel_name(function, "kernel", kernel),
        "key": arguments.text(function, "key", key),
        "tables": arguments.paths(function, "tables", tables),
        "arch": None if arch is None else arguments.arch(function, "arch", arch),
        "on_miss": arguments.text(function, "on_miss", on_miss),
        "chaos": arguments.flag(function, "chaos", chaos),
        "rank": arguments.integer(function, "rank", rank, 0, arguments.MAX_RANK),
        "block_sizes": _as_text(function, "block_sizes", block_sizes) if block_sizes else "",
    }
    if candidates_file is not None:
        request["candidates_file"] = arguments.path(function, "candidates_file", candidates_file)
    else:
        request["candidates"] = ([] if candidates is None
                                 else arguments.configs(function, "candidates", candidates))
    result = call_json("tunelock_choose", encode(json.dumps(request)), where="tunelock.choose")
    return Choice(result["index"], result["signature"], result["reason"], result["explanation"])


def merge(records: Union[PathArgument, Iterable[PathArgument]], output: PathArgument,
          arch: Optional[str] = None, source: Optional[str] = None) -> Dict[str, Any]:
    """Record files -> a table at `output` (.tlb binary, else JSON), as `tunelock merge`.
    `records` is a list of record files or directories (one path is a list of one)."""
    function = "merge"
    request = {
        "records": arguments.paths(function, "records", records),
        "output": arguments.path(function, "output", output),
        "arch": None if arch is None else arguments.arch(function, "arch", arch),
        "source": arguments.optional_text(function, "source", source),
    }
    return call_json("tunelock_merge", encode(json.dumps(request)), where="tunelock.merge")


def report(records: Union[PathArgument, Iterable[PathArgument]]) -> Dict[str, Any]:
    """Where ranks' record files disagree, and nondeterministic candidates."""
    request = {"records": arguments.paths("report", "records", records)}
    return call_json("tunelock_report", encode(json.dumps(request)), where="tunelock.report")


def file_kind(path: PathArgument) -> FileKind:
    """What a tunelock file is, told from its name and bytes as the CLI and the page tell it:
    FileKind(kind, encoding, problem). kind is "table", "manifest", "record", "timings",
    "choice_log", or "unknown" (problem then says why); encoding is "json" or "binary"
    (None when unknown). Raises TunelockError when the file cannot be read."""
    result = call_json("tunelock_file_kind", encode(arguments.path("file_kind", "path", path)))
    return FileKind(result["kind"], result["encoding"], result.get("problem"))


def table(path: PathArgument) -> Dict[str, Any]:
    """A table file (JSON or binary) as a dict, in canonical form."""
    return json.loads(call_text("tunelock_table_json", encode(arguments.path("table", "path", path))))


def convert_table(input_path: PathArgument, output_path: PathArgument) -> None:
    check(lib.tunelock_table_convert(encode(arguments.path("convert_table", "input_path", input_path)),
                                     encode(arguments.path("convert_table", "output_path",
                                                           output_path))))
