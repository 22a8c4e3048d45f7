"""The user API: the policy (install, Policy), verification across ranks
(verify, maybe_verify) and the run's outputs (choice_log, choice_digest,
flush), through the engine's C ABI."""
import ctypes
import json
import os
from collections.abc import Mapping
from typing import Any, Dict, Optional

from . import _arguments as arguments
from . import distributed
from ._arguments import PathArgument
from ._hooks import _signature
from ._native import call_json, call_text, check, encode, lib


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
    or `Policy.from_environment()`. The fields go over the defaults, not over the
    environment: `Policy(over_environment=True, ...)` layers them over the TUNELOCK_*
    variables, as `install(**fields)` does. Fields read as attributes (mode, modules,
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


def _install(function: str, policy: Optional[Policy], fields: Dict[str, Any]) -> Policy:
    """Installs a policy process-wide: the environment's when none is given;
    keyword fields layer over the environment (a field wins over its
    TUNELOCK_* variable); a Policy is installed as it was resolved. A policy
    that cannot be carried out raises and keeps the previous one. For
    tunelock.install and each adapter's install (`function` names the one
    called in messages)."""
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
        over = True  # keyword fields go over the environment, never silently replace it
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
    verdict = distributed.run_verify(iteration, group)
    if verdict >= 0:
        for listener in after_check_listeners:  # a consensus check may have switched choices
            listener()
    return None if verdict < 0 else bool(verdict)


# Called after every check that ran: the interceptions that cache choices
# (tunelock.triton) drop them when the engine's choices changed.
after_check_listeners = []
