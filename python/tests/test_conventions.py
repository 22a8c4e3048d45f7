"""What Python users expect of a package: `tunelock.__version__`, the CLI
through `python -m tunelock` with every command (`launch` included), the
console script's loop guard, and one word when Triton is missing."""
import logging
import os
import subprocess
import sys

import tunelock
import tunelock.__main__ as cli_module
import tunelock.triton as tt


def package_env():
    return dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(
        os.path.abspath(tunelock.__file__))))


def test_the_package_has_a_version_and_it_is_the_engines():
    assert tunelock.__version__ == tunelock.version()
    assert tunelock.__version__.count(".") >= 1


def test_python_m_tunelock_runs_launch_too():
    if cli_module.find_cli() is None:
        import pytest
        pytest.skip("no tunelock program beside this package (build the tunelock target)")
    done = subprocess.run([sys.executable, "-m", "tunelock", "launch", "-n", "2", "--", sys.executable,
                           "-c", "import os; print('rank', os.environ['RANK'])"],
                          capture_output=True, text=True, timeout=120, env=package_env())
    assert done.returncode == 0, done.stderr
    # The launcher prefixes each rank's lines with its rank.
    assert sorted(done.stdout.splitlines()) == ["[rank 0] rank 0", "[rank 1] rank 1"]


def test_the_console_script_never_runs_itself(tmp_path, monkeypatch):
    # pip's `tunelock` wrapper on PATH is not the program: found first, it
    # would exec itself for ever.
    wrapper = tmp_path / "tunelock"
    wrapper.write_text("#!/bin/sh\nexit 0\n")
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("TUNELOCK_CLI", raising=False)
    monkeypatch.setattr(sys, "argv", [str(wrapper)])
    monkeypatch.setattr(cli_module, "_HERE", str(tmp_path / "nowhere" / "tunelock"))
    assert cli_module.find_cli() is None
    monkeypatch.setattr(sys, "argv", ["python -m tunelock"])
    assert cli_module.find_cli() == str(wrapper)


def test_install_without_triton_says_once_that_nothing_is_intercepted(monkeypatch, caplog):
    monkeypatch.setattr(tt, "autotuner_class", lambda: None)
    monkeypatch.setattr(tt._interception, "said_no_triton", False)
    with caplog.at_level(logging.WARNING, logger="tunelock"):
        tt.install(mode="pinned")
        tt.install(mode="pinned")
    said = [r.getMessage() for r in caplog.records if "Triton is not importable" in r.getMessage()]
    assert len(said) == 1 and "intercepts no @triton.autotune kernel" in said[0]
    assert tunelock.installed_policy().mode == "pinned"  # the policy is installed all the same


def test_a_choice_log_given_to_merge_is_named_as_a_choice_log(tmp_path):
    log = tmp_path / "run.rank0.json"
    log.write_text('{"rank": 0, "entries": {"sm90|pkg.mm|M=1": "BLOCK_M=64;pinned"}}')
    import pytest
    with pytest.raises(tunelock.TunelockError,
                       match="is a JSON choice log, not a record file: merge and report read"):
        tunelock.merge([str(log)], str(tmp_path / "table.json"))
