"""`pip install` on a Python without the 'wheel' package (a pyenv or conda
Python, with setuptools older than 70.1) is told what to install, instead
of setuptools' "invalid command 'bdist_wheel'"."""
import os
import subprocess
import sys
import venv

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_a_python_without_wheel_is_told_what_to_install(tmp_path):
    try:  # a venv of its own: this interpreter's site packages (and wheel) left out
        venv.EnvBuilder(with_pip=True, system_site_packages=False).create(tmp_path / "v")
    except (OSError, subprocess.CalledProcessError) as error:
        pytest.skip(f"cannot make a venv with pip here: {error}")
    python = str(tmp_path / "v" / "bin" / "python")
    probe = subprocess.run([python, "-c", "import setuptools, importlib.util as u; "
                            "print(u.find_spec('wheel') is None, "
                            "u.find_spec('setuptools.command.bdist_wheel') is None)"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"the venv has no setuptools: {probe.stderr.strip()}")
    if probe.stdout.split() != ["True", "True"]:
        pytest.skip("this venv's setuptools or wheel can build wheels: nothing to refuse")
    done = subprocess.run([python, os.path.join(ROOT, "setup.py"), "bdist_wheel"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, TUNELOCK_PYTHON_BUILD_DIR=str(tmp_path / "b")))
    assert done.returncode != 0
    assert "needs the 'wheel' package" in done.stderr
    assert "python3-wheel on Debian" in done.stderr
    assert "invalid command" not in done.stderr
