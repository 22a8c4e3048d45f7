"""tunelock for Python trainers: the same engine as the C++ launcher and the
`tunelock` CLI (one table format, one set of rules, one choice log, digest
and verify), loaded through a small C ABI.

    import tunelock.triton; tunelock.triton.install()   # the one line a trainer adds

Policy comes from the environment (TUNELOCK_*, Megatron's MCORE_AUTOTUNE_*)
or keyword arguments, validated by the engine with the same messages.

The package's rooms: the user API (`_api`: policy, verify, outputs), the
runtime hooks an interception calls (`_hooks`), the offline tools
(`_offline`), the Triton interception (`triton`, with `_introspection`,
`_bits` and `_first_call`), verification over a process group
(`distributed`) and the launch watch (`watch`).
"""
from . import watch
from ._api import (Policy, choice_digest, choice_log, flush, install, installed_policy,
                   maybe_verify, observes, verify, version)
from ._hooks import (Choice, Config, audit_key, autotune_configs, call_plan, count_audited_call,
                     log_choice, note_bits_check, pinned_choice, record, set_device, signature,
                     tuning_key)
from ._native import TunelockError
from ._offline import (FileKind, audit, choose, convert_table, coverage, file_kind, merge, report,
                       table)



def __getattr__(name):
    """`tunelock.__version__`: the engine's version, read when asked (the
    engine library loads then, not at import)."""
    if name == "__version__":
        return version()
    raise AttributeError(f"module 'tunelock' has no attribute {name!r}")


__all__ = [
    # the user API
    "TunelockError", "Policy", "install", "installed_policy", "observes", "verify", "maybe_verify",
    "choice_log", "choice_digest", "flush", "version",
    # the runtime hooks an interception calls
    "Choice", "Config", "tuning_key", "pinned_choice", "log_choice", "record", "signature",
    "call_plan", "audit_key", "autotune_configs", "count_audited_call", "note_bits_check",
    "set_device",
    # the offline tools
    "FileKind", "choose", "merge", "report", "audit", "coverage", "file_kind", "table",
    "convert_table",
    # the launch watch
    "watch",
]
