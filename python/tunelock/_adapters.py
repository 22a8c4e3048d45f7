"""The adapter registry: every interception of another tool's autotuner
registers here, in one place, as it is imported, and `tunelock.install()`
switches on each one whose library is present. Adapters never import each
other: `tunelock.triton.install()` asks this registry to switch on the
others whose library the program has already imported.

An adapter is a name, the library it intercepts (a top-level module name),
`patch()` (switch the interception on under the installed policy; returns
whether it did, saying why not once) and `uninstall()`.
"""
import importlib.util
import sys
import threading
from collections import namedtuple

from tunelock import _api as api
from tunelock._native import logger

Adapter = namedtuple("Adapter", ["name", "library", "patch", "uninstall"])

_registered = {}  # name -> Adapter, in the order adapters registered
_lock = threading.RLock()
_said_none_present = False


def register(adapter):
    """Adds `adapter` (an Adapter); registering a name twice replaces it."""
    with _lock:
        _registered[adapter.name] = adapter


def adapters():
    """The registered adapters, in the order they registered."""
    with _lock:
        return list(_registered.values())


def _imported(library):
    return library in sys.modules


def _importable(library):
    if library in sys.modules:
        return True
    try:
        return importlib.util.find_spec(library) is not None
    except (ImportError, ValueError):
        return False


def switch_on(besides=None, imported_only=False):
    """Patches every registered adapter whose library is present (imported
    by the program already, with `imported_only`), except `besides`.
    Returns the names of those that are on."""
    present = _imported if imported_only else _importable
    on = []
    for adapter in adapters():
        if adapter.name != besides and present(adapter.library) and adapter.patch():
            on.append(adapter.name)
    return on


def install(policy=None, **fields):
    """Installs `policy` (default: the environment's; keyword fields layer
    over it, as `tunelock.Policy` takes them) and switches on every adapter
    whose library is present: Triton's autotuner, torch.compile's Inductor.
    Where none is, the policy still governs the C++ families and any face
    that calls the driver, and one line says so. Returns the installed Policy."""
    global _said_none_present
    installed = api._install("install", policy, fields)
    switch_on()
    if not any(_importable(a.library) for a in adapters()):
        with _lock:
            if not _said_none_present:
                _said_none_present = True
                names = ", ".join(f"{a.library} for tunelock.{a.name}" for a in adapters())
                logger.warning("no adapter's library is importable here (%s): the policy is "
                               "installed, and no autotuner is intercepted", names)
    return installed


def uninstall(besides=None):
    """Puts every intercepted autotuner's own methods back (except `besides`'s)."""
    for adapter in reversed(adapters()):
        if adapter.name != besides:
            adapter.uninstall()
