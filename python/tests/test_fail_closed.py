"""Fail closed: install(**fields) keeps what the environment says, a
setting the mode ignores is named, a choice log that cannot be written is
refused at start, and tunelock.inductor says in one line that torch is
missing."""
import logging
import subprocess
import sys
import textwrap

import pytest

import tunelock


def said(caplog):
    return "\n".join(r.getMessage() for r in caplog.records)


def test_install_with_fields_layers_them_over_the_environment(monkeypatch, tmp_path):
    tables = tmp_path / "tables"
    tables.mkdir()
    monkeypatch.setenv("TUNELOCK_TABLE_PATH", str(tables))
    monkeypatch.setenv("TUNELOCK_VERIFY_EVERY", "1")
    installed = tunelock.install(mode="pinned")
    assert installed.mode == "pinned"
    assert installed.verify_every == 1 and installed.table_path == [str(tables)]
    # A field wins over its variable.
    assert tunelock.install(mode="pinned", verify_every=5).verify_every == 5
    # A Policy keeps its documented choice: over the defaults unless asked.
    assert tunelock.Policy(mode="pinned").table_path == []
    assert tunelock.Policy(mode="pinned", over_environment=True).table_path == [str(tables)]


def test_a_forgotten_mode_is_named_in_one_warning(monkeypatch, tmp_path, caplog):
    monkeypatch.setenv("TUNELOCK_TABLE_PATH", str(tmp_path))
    monkeypatch.setenv("TUNELOCK_CHOICE_LOG", str(tmp_path / "logs" / "forgot"))
    with caplog.at_level(logging.WARNING, logger="tunelock"):
        tunelock.install()
    lines = [r.getMessage() for r in caplog.records if "ignores" in r.getMessage()]
    assert len(lines) == 1, said(caplog)
    assert lines[0].startswith("mode 'auto' (no mode set) ignores table_path (TUNELOCK_TABLE_PATH)")
    assert "TUNELOCK_CHOICE_LOG: auto logs no choice" in lines[0]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="tunelock"):
        tunelock.install(mode="pinned")
    assert "ignores" not in said(caplog)


def test_a_choice_log_that_cannot_be_written_is_refused_at_install(monkeypatch, tmp_path):
    tunelock.install(mode="pinned")
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv("TUNELOCK_CHOICE_LOG", str(blocked / "logs" / "run"))
    with pytest.raises(tunelock.TunelockError, match="logs"):
        tunelock.install(mode="pinned", verify_every=3)
    assert tunelock.installed_policy().verify_every == 0  # the previous policy stands


def test_inductor_install_without_torch_says_so_in_one_line():
    # A fresh interpreter in which torch cannot be imported.
    program = textwrap.dedent("""
        import sys
        sys.modules["torch"] = None  # import torch raises ImportError
        import tunelock.inductor
        policy = tunelock.inductor.install(mode="pinned")
        print("installed", policy.mode)
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "installed pinned" in done.stdout
    assert "torch is not importable here: tunelock.inductor intercepts no torch.compile " \
           "kernel (the policy is installed)" in done.stderr
    assert "Traceback" not in done.stderr
