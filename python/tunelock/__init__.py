"""tunelock for Python trainers: the same engine as the C++ launcher and the
`tunelock` CLI (one table format, one set of rules, one choice log, digest
and verify), loaded through a small C ABI.

    import tunelock; tunelock.install()   # the one line a trainer adds

`install()` installs the policy and switches on every adapter whose library
is present: Triton's autotuner (`tunelock.triton`) and torch.compile's
Inductor (`tunelock.inductor`). Policy comes from the environment
(TUNELOCK_*, Megatron's MCORE_AUTOTUNE_*) or keyword arguments, validated by
the engine with the same messages.

The package's rooms, each importing only those before it
(scripts/check_layers.py checks it): the engine's C ABI (`_native`) and
argument checks (`_arguments`, `_introspection`); the engine's texts
(`_hooks`); the driver, the one way in for a
face (`_driver`: `first_call`, `Runner`, `Plan`); bits and runs (`_bits`);
verification over a process group (`distributed`, `_roll_call`); the user
API (`_api`: policy, verify, outputs); the offline tools (`_offline`); the
adapter registry (`_adapters`); the adapters, which never import each
other (`triton`, `inductor`, with `_inductor_describe`); the launch watch
(`watch`).
"""
from . import watch
from ._adapters import install
from ._api import (Policy, choice_digest, choice_log, flush, installed_policy, maybe_verify,
                   observes, verify, version)
from ._hooks import Choice, Config, autotune_configs, set_device, signature, tuning_key
from ._native import TunelockError
from ._offline import (FileKind, audit, choose, convert_table, coverage, export_files, file_kind,
                       import_files, invariance, merge, report, table)
from ._driver import FirstCall, NothingToRun, Plan, Runner, call_plan, count_audited_call, first_call
from . import inductor, triton  # noqa: E402 - every adapter registers as it is imported


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
    # the driver: the one way in for a face
    "first_call", "Runner", "NothingToRun", "Plan", "FirstCall", "call_plan", "count_audited_call",
    "Config", "tuning_key", "signature", "set_device", "autotune_configs",
    # the offline tools
    "Choice", "FileKind", "choose", "merge", "report", "audit", "coverage", "file_kind", "table",
    "convert_table", "import_files", "export_files", "invariance",
    # the launch watch
    "watch",
]
