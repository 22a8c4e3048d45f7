"""Checks on every argument before it crosses into the engine's C ABI.

ctypes hands strings to C as NUL-terminated bytes and integers as fixed-width
C types, and the engine reads structure as JSON; without these checks a NUL
byte cuts a name short, 2**64 - 1 wraps to -1, a string given for a list is
read a character at a time, and a wrongly typed value surfaces as the JSON
library's own words. Each check raises TypeError (the wrong kind of value)
or ValueError (the right kind, a refused value) worded
"tunelock.<function>: <argument>: <problem>", and returns the value in the
form the C ABI takes.
"""
from __future__ import annotations

import math
import operator
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any, List, Optional, Tuple, Union

from ._introspection import config_data

PathArgument = Union[str, "os.PathLike[str]"]

INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1
MAX_RANK = 2 ** 30  # the engine's bound on every rank field
_MAX_JSON_DEPTH = 64  # the engine refuses deeper nesting

# What check_arch_name accepts: arch tags name files (`sm90.json`).
_ARCH = re.compile(r"[A-Za-z0-9_-]{1,64}")



def where(function: str, argument: str) -> str:
    return f"tunelock.{function}: {argument}"


def type_name(value: Any) -> str:
    return "None" if value is None else type(value).__name__


def _wrong_type(function: str, argument: str, expected: str, value: Any) -> TypeError:
    return TypeError(f"{where(function, argument)}: expected {expected}, got {type_name(value)}")


def _checked_text(function: str, argument: str, value: str) -> str:
    """NUL bytes and lone surrogates: what cannot reach C as the same text."""
    if "\0" in value:
        raise ValueError(f"{where(function, argument)}: contains a NUL byte (at character "
                         f"{value.index(chr(0))}); C strings end there, so the rest would be lost")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(f"{where(function, argument)}: is not valid UTF-8 text (a lone "
                         f"surrogate at character {error.start})") from None
    return value


def text(function: str, argument: str, value: Any, *, empty: bool = True) -> str:
    """A str with no NUL byte; `empty=False` refuses ""."""
    if not isinstance(value, str):
        raise _wrong_type(function, argument, "a string", value)
    if not empty and not value:
        raise ValueError(f"{where(function, argument)}: is empty")
    return _checked_text(function, argument, value)


def optional_text(function: str, argument: str, value: Any, *, empty: bool = True) -> Optional[str]:
    return None if value is None else text(function, argument, value, empty=empty)


def kernel_name(function: str, argument: str, value: Any) -> str:
    """A kernel name, as check_kernel_name reads it: non-empty text."""
    name = text(function, argument, value)
    if not name:
        raise ValueError(f"{where(function, argument)}: empty kernel name")
    return name


def key(function: str, argument: str, value: Any) -> str:
    """A tuning key as check_key reads it: non-empty text."""
    name = text(function, argument, value)
    if not name:
        raise ValueError(f"{where(function, argument)}: empty key; a key is `name=value|...` or \"*\"")
    return name


def arch(function: str, argument: str, value: Any) -> str:
    """An architecture tag, as check_arch_name reads it (it names table files)."""
    tag = text(function, argument, value)
    if not _ARCH.fullmatch(tag):
        raise ValueError(f"{where(function, argument)}: {tag!r} is not an architecture tag; "
                         "expected 1 to 64 letters, digits, '_' or '-' (e.g. sm90)")
    return tag


def path(function: str, argument: str, value: Any, *, empty: bool = False) -> str:
    """A file path: str or os.PathLike (never None, bytes or a number)."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise _wrong_type(function, argument, "a path (str or os.PathLike)", value)
    if not empty and not value:
        raise ValueError(f"{where(function, argument)}: is empty; expected a file path")
    return _checked_text(function, argument, value)


def optional_path(function: str, argument: str, value: Any, *, empty: bool = False) -> Optional[str]:
    return None if value is None else path(function, argument, value, empty=empty)


def list_items(function: str, argument: str, value: Any, expected: str) -> List[Any]:
    """The items of a list-like argument; a mapping, bytes or a non-iterable is refused."""
    if isinstance(value, (str, bytes, bytearray, Mapping)) or not isinstance(value, Iterable):
        raise _wrong_type(function, argument, expected, value)
    return list(value)


def paths(function: str, argument: str, value: Any) -> List[str]:
    """A list of paths; one str or os.PathLike is a list of one, None an empty list."""
    if value is None:
        return []
    if isinstance(value, (str, os.PathLike)):
        return [path(function, argument, value)]
    return [path(function, f"{argument}[{index}]", item) for index, item in
            enumerate(list_items(function, argument, value, "a path or a list of paths"))]


def integer(function: str, argument: str, value: Any, low: int = INT64_MIN,
            high: int = INT64_MAX) -> int:
    """An integer (an int or anything with __index__, never a bool) in [low, high]."""
    if isinstance(value, bool):
        raise _wrong_type(function, argument, "an integer", value)
    try:
        number = operator.index(value)
    except TypeError:
        raise _wrong_type(function, argument, "an integer", value) from None
    if not low <= number <= high:
        raise ValueError(f"{where(function, argument)}: {number} is out of range; "
                         f"allowed {low} to {high}")
    return number


def number(function: str, argument: str, value: Any, low: float) -> float:
    """A finite real number (int or float, never a bool) of at least `low`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _wrong_type(function, argument, "a number", value)
    if not math.isfinite(value) or value < low:
        raise ValueError(f"{where(function, argument)}: {value} is out of range; "
                         f"allowed {low} and up")
    return float(value)


def flag(function: str, argument: str, value: Any) -> bool:
    """True or False (0 and 1 read as such); anything else is refused, since
    bool("no") is True."""
    if isinstance(value, bool):
        return value
    if not isinstance(value, (str, bytes)) and hasattr(value, "__index__"):
        try:
            number = operator.index(value)
        except TypeError:
            number = None
        if number in (0, 1):
            return bool(number)
    raise _wrong_type(function, argument, "True or False", value)


def optional_flag(function: str, argument: str, value: Any) -> Optional[bool]:
    if value is None:
        return None
    try:
        return flag(function, argument, value)
    except TypeError:
        raise _wrong_type(function, argument, "True, False or None", value) from None


def json_data(function: str, argument: str, value: Any, _depth: int = 0) -> Any:
    """Data the engine reads as JSON: dicts with str keys, lists, str, int
    (int64), finite floats, bools and None, checked all the way down; the
    problem is named by its path (`candidates[0].kwargs.BLOCK_M`)."""
    if _depth > _MAX_JSON_DEPTH:
        raise ValueError(f"{where(function, argument)}: nested deeper than {_MAX_JSON_DEPTH} levels")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return integer(function, argument, value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where(function, argument)}: {value} is not a finite number")
        return value
    if isinstance(value, str):
        return _checked_text(function, argument, value)
    if isinstance(value, Mapping):
        out = {}
        for name, item in value.items():
            if not isinstance(name, str):
                raise TypeError(f"{where(function, argument)}: expected string keys, got "
                                f"{type_name(name)} {name!r}")
            _checked_text(function, f"{argument}.{name!r}", name)
            out[name] = json_data(function, f"{argument}.{name}", item, _depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [json_data(function, f"{argument}[{index}]", item, _depth + 1)
                for index, item in enumerate(value)]
    raise _wrong_type(function, argument, "JSON data (dict, list, str, int, float, bool or None)",
                      value)


def is_triton_config(value: Any) -> bool:
    return hasattr(value, "kwargs") and hasattr(value, "num_warps")


def config(function: str, argument: str, value: Any) -> dict:
    """A config in Megatron's dict form: a dict as given, or a triton.Config."""
    if is_triton_config(value) and not isinstance(value, Mapping):
        value = config_data(value)
    if not isinstance(value, Mapping):
        raise _wrong_type(function, argument, "a config dict or a triton.Config", value)
    return json_data(function, argument, value)


def configs(function: str, argument: str, value: Any) -> List[dict]:
    """A list of configs (dicts or triton.Configs)."""
    items = list_items(function, argument, value, "a list of configs (dicts or triton.Configs)")
    return [config(function, f"{argument}[{index}]", item) for index, item in enumerate(items)]


def key_arguments(function: str, argument: str, value: Any) -> List[Tuple[str, Union[bool, int, str]]]:
    """[(name, value), ...] (or a mapping): values are bools, int64 integers or
    text (anything else as str(value), as the key has always spelled it)."""
    if isinstance(value, Mapping):
        value = list(value.items())
    out = []
    for index, pair in enumerate(list_items(function, argument, value, "a list of (name, value) pairs")):
        at = f"{argument}[{index}]"
        if isinstance(pair, (str, bytes, Mapping)) or not isinstance(pair, Iterable):
            raise _wrong_type(function, at, "a (name, value) pair", pair)
        pair = list(pair)
        if len(pair) != 2:
            raise ValueError(f"{where(function, at)}: expected a (name, value) pair, got "
                             f"{len(pair)} items")
        name = text(function, f"{at}[0]", pair[0], empty=False)
        item = pair[1]
        if isinstance(item, bool):
            pass
        elif isinstance(item, int):
            item = integer(function, f"{at} ({name})", item)
        else:
            item = _checked_text(function, f"{at} ({name})",
                                 item if isinstance(item, str) else str(item))
        out.append((name, item))
    return out


def texts(function: str, argument: str, value: Any) -> List[str]:
    """A list of texts, each str(item) (torch dtypes); one str is a list of one."""
    if isinstance(value, str):
        return [text(function, argument, value)]
    return [_checked_text(function, f"{argument}[{index}]", str(item)) for index, item in
            enumerate(list_items(function, argument, value, "a list of strings"))]


def one_of(function: str, argument: str, value: Any, expected: str, *types: type) -> Any:
    if not isinstance(value, types):
        raise _wrong_type(function, argument, expected, value)
    return value
