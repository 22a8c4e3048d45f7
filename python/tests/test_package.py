"""The package's shape: one complete front (`__all__`), and modules that
import each other at the top only, so no import hides inside a function to
break a circle."""
import ast
import os
import subprocess
import sys

import tunelock

PACKAGE = os.path.dirname(tunelock.__file__)


def test_all_names_every_public_name_and_only_those():
    public = {name for name in dir(tunelock) if not name.startswith("_")}
    public -= {"triton", "inductor", "distributed"}  # submodules a user imports by name
    assert sorted(public) == sorted(tunelock.__all__)
    for name in ("audit", "autotune_configs", "call_plan", "first_call", "count_audited_call"):
        assert name in tunelock.__all__


def test_no_module_of_the_package_is_imported_inside_a_function():
    found = []
    for name in sorted(os.listdir(PACKAGE)):
        if not name.endswith(".py"):
            continue
        tree = ast.parse(open(os.path.join(PACKAGE, name)).read(), name)
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.ImportFrom) and (node.level or
                                                         (node.module or "").startswith("tunelock")):
                    found.append(f"{name}:{node.lineno} (in {function.name})")
                if isinstance(node, ast.Import) and any(a.name.startswith("tunelock")
                                                        for a in node.names):
                    found.append(f"{name}:{node.lineno} (in {function.name})")
    assert found == []


def test_importing_the_interception_loads_no_triton_and_no_torch():
    # Without Triton installed the package still imports; nothing heavy is
    # pulled in at import time (Triton and torch are read when called).
    code = ("import sys, tunelock.triton; "
            "print(sorted(m for m in ('torch', 'triton') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": os.path.dirname(PACKAGE)}, check=True)
    assert out.stdout.strip() == "[]"
