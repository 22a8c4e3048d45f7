"""The engine's texts for keys and configs, the device, and Megatron's
`autotune_configs`. Every rule behind them is the engine's (through the C
ABI); these check their arguments and name them. (A first call goes to
the driver, `tunelock.first_call`: the step hooks that told it in parts
are retired.)"""
import json
from collections import namedtuple
from collections.abc import Iterable, Mapping
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _arguments as arguments
from ._native import call_json, call_text, check, encode, lib

Choice = namedtuple("Choice", ["index", "signature", "reason", "explanation"])

Config = Union[Dict[str, Any], Any]  # a config dict (Megatron's form) or a triton.Config


def tuning_key(key_args: Union[Iterable[Tuple[str, Any]], Mapping[str, Any]],
               dtypes: Union[str, Iterable[Any]] = ()) -> str:
    """`name=value` for each (name, value) key argument, then each dtype, joined by `|`.
    Values are integers (int64), booleans or text (anything else as str(value))."""
    pairs = arguments.key_arguments("tuning_key", "key_args", key_args)
    dtype_texts = arguments.texts("tuning_key", "dtypes", dtypes)
    return call_text("tunelock_tuning_key", encode(json.dumps([list(pair) for pair in pairs])),
                     encode(json.dumps(dtype_texts)), where="tunelock.tuning_key: key_args or dtypes")


def signature(config: Config) -> str:
    """The engine's text for a config (dict or triton.Config), as tables,
    records and TUNELOCK_NONDETERMINISTIC name it."""
    return _signature("signature", "config", config)


def _signature(function: str, argument: str, config: Config) -> str:
    return call_text("tunelock_signature",
                     encode(json.dumps(arguments.config(function, argument, config))),
                     where=f"tunelock.{function}: {argument}")


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
