"""The engine's texts for keys and configs, the device, Megatron's
`autotune_configs`, and the deprecated step hooks.

The step hooks (`pinned_choice`, `log_choice`, `record`, `audit_key`,
`note_bits_check`) are the parts of a first call, one by one, from before
the driver. A face hands its first call to `tunelock.first_call`, which
does each of them itself and tells them in one story; they stay for
callers of their own and say so once each (DeprecationWarning). Every rule
behind them is the engine's (through the C ABI); these check their
arguments and name them."""
import ctypes
import json
import warnings
from collections import namedtuple
from collections.abc import Iterable, Mapping
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _arguments as arguments
from ._native import call_json, call_text, check, encode, lib

Choice = namedtuple("Choice", ["index", "signature", "reason", "explanation", "equivalent"],
                    defaults=[None, ()])

Config = Union[Dict[str, Any], Any]  # a config dict (Megatron's form) or a triton.Config


def tuning_key(key_args: Union[Iterable[Tuple[str, Any]], Mapping[str, Any]],
               dtypes: Union[str, Iterable[Any]] = ()) -> str:
    """`name=value` for each (name, value) key argument, then each dtype, joined by `|`.
    Values are integers (int64), booleans or text (anything else as str(value))."""
    pairs = arguments.key_arguments("tuning_key", "key_args", key_args)
    dtype_texts = arguments.texts("tuning_key", "dtypes", dtypes)
    return call_text("tunelock_tuning_key", encode(json.dumps([list(pair) for pair in pairs])),
                     encode(json.dumps(dtype_texts)), where="tunelock.tuning_key: key_args or dtypes")


_said_deprecated = set()


def _deprecated(function: str) -> None:
    if function not in _said_deprecated:
        _said_deprecated.add(function)
        warnings.warn(f"tunelock.{function} is a deprecated step hook: hand the first call to "
                      "tunelock.first_call (the driver), which decides, checks bits, logs, "
                      "records and audits in one story", DeprecationWarning, stacklevel=3)


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
    _deprecated(function)
    call = _kernel_call(function, arch, module, name, key)
    configs = arguments.configs(function, "candidates", candidates)
    result = call_json("tunelock_pinned_choice", *call, encode(json.dumps(configs)),
                       where="tunelock.pinned_choice: candidates")
    return Choice(result["index"], result["signature"], result["reason"],
                  equivalent=tuple(result.get("equivalent", ())))


def log_choice(arch: str, module: str, name: str, key: str, config: Config, pinned: bool) -> bool:
    function = "log_choice"
    _deprecated(function)
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
    _deprecated(function)
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


def audit_key(arch: str, module: str, name: str, key: str, candidates: Sequence[Config],
              launched: int, timings: Sequence[Dict[str, Any]], repeated: Optional[bool]) -> int:
    """Audit mode's first call of a pinned key: `timings` per candidate, in
    order, as record() takes them; `launched` the index launched;
    `repeated` the pinned config's bits check. Returns the entry's id for
    count_audited_call."""
    function = "audit_key"
    _deprecated(function)
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


def note_bits_check(module: str, name: str, key: str, config: Config,
                    repeated: Optional[bool]) -> None:
    """Reports the first pinned call's bits check: `repeated` True (same
    bits), False (changed: warns once, or raises under verify_strict) or None
    (nothing to compare)."""
    function = "note_bits_check"
    _deprecated(function)
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
    """The device and software, for timing sidecars (and so for the tables
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
