"""Puts the stand-in Triton (tests/standin) and the built package on the path,
and gives each test a fresh policy: the engine's process runtime is
process-wide, and installing a different policy resets its state."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "standin"))  # the package itself: on PYTHONPATH

for variable in [v for v in os.environ if v.startswith(("TUNELOCK_", "MCORE_AUTOTUNE_"))]:
    if variable != "TUNELOCK_LIBRARY":
        del os.environ[variable]

import tunelock  # noqa: E402
import tunelock.triton  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_runtime(tmp_path_factory, monkeypatch):
    # Each test its own equivalents cache: one test's timed picks must not
    # answer another's first calls.
    cache = tmp_path_factory.mktemp("cache") / "equivalents.json"
    monkeypatch.setenv("TUNELOCK_EQUIVALENT_CACHE", str(cache))
    tunelock.install(mode="auto", verify_every=0)
    tunelock.install(mode="auto")
    yield
    tunelock.triton.uninstall()
