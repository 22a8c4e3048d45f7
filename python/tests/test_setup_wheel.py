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
    for command in (["bdist_wheel"], ["dist_info", "--output-dir", str(tmp_path)]):
        # No system wheel either (TUNELOCK_SYSTEM_WHEEL names an empty folder).
        done = subprocess.run([python, os.path.join(ROOT, "setup.py"), *command], cwd=ROOT,
                              capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, TUNELOCK_PYTHON_BUILD_DIR=str(tmp_path / "b"),
                                       TUNELOCK_SYSTEM_WHEEL=str(tmp_path)))
        assert done.returncode != 0
        assert "needs the 'wheel' package" in done.stderr
        # Advice that works inside a venv, pip's metadata step included.
        assert "`python -m pip install wheel` (online)" in done.stderr
        assert "/usr/share/python-wheels/wheel-*.whl` (offline" in done.stderr
        assert "invalid command" not in done.stderr


def test_a_fresh_venv_builds_with_the_systems_wheel(tmp_path):
    """`python3 -m venv v && v/bin/pip install --no-build-isolation .`: the venv
    has no wheel; setup.py takes the system's python3-wheel (that package
    alone), so pip's metadata step, where the install used to stop, passes."""
    system = "/usr/lib/python3/dist-packages"
    if not os.path.isfile(os.path.join(system, "wheel", "__init__.py")):
        pytest.skip("no system python3-wheel here")
    try:
        venv.EnvBuilder(with_pip=True, system_site_packages=False).create(tmp_path / "v")
    except (OSError, subprocess.CalledProcessError) as error:
        pytest.skip(f"cannot make a venv with pip here: {error}")
    python = str(tmp_path / "v" / "bin" / "python")
    out = tmp_path / "meta"
    out.mkdir()
    done = subprocess.run([python, os.path.join(ROOT, "setup.py"), "dist_info", "--output-dir",
                           str(out)], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, TUNELOCK_PYTHON_BUILD_DIR=str(tmp_path / "b"),
                                   TUNELOCK_SYSTEM_WHEEL=system))
    assert done.returncode == 0, done.stderr
    assert any(p.name.endswith(".dist-info") for p in out.iterdir()), done.stderr
    # The venv itself still has no wheel: nothing was installed into it.
    assert subprocess.run([python, "-c", "import wheel"], capture_output=True).returncode != 0
