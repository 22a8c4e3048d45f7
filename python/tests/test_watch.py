"""tunelock.watch without a GPU: every call is safe with no watch running;
with the watch library present, a watch that cannot observe says so and
writes a log that compare never calls identical; `python -m tunelock watch
compare` reads logs; TUNELOCK_WATCH_VERIFY warns once when nothing watches."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

import tunelock
from tunelock import watch

LIBRARY = os.path.join(os.path.dirname(tunelock.__file__), "libtunelock_watch.so")


def test_calls_are_safe_without_a_watch(monkeypatch):
    monkeypatch.delenv("CUDA_INJECTION64_PATH", raising=False)
    assert watch.active() is False
    watch.step()  # nothing to mark, nothing raised
    assert watch.flush() is False


def run_python(code, tmp_path, **env):
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(tunelock.__file__)))
    environment = dict(os.environ, PYTHONPATH=package_root, **env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path,
                          env=environment, capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(not os.path.isfile(LIBRARY),
                    reason="libtunelock_watch.so not built here (no CUPTI in this CUDA toolkit)")
def test_an_unobserved_run_says_so_and_never_compares_identical(tmp_path):
    code = """
        import sys, tunelock
        watching = tunelock.watch.start(sys.argv[1] if len(sys.argv) > 1 else "cpu")
        print("watching", watching, tunelock.watch.active())
        tunelock.watch.step()
        print("flushed", tunelock.watch.flush())
    """
    for rank in ("0", "1"):
        result = run_python(code, tmp_path, RANK=rank, WORLD_SIZE="2")
        assert result.returncode == 0, result.stderr
        assert "watching False False" in result.stdout
        assert "flushed True" in result.stdout
        # One line on stderr says why; the program ran on.
        assert "tunelock watch:" in result.stderr and "unobserved" in result.stderr
    log = json.loads((tmp_path / "cpu.rank1.launches.json").read_text())
    assert log["rank"] == 1 and log["steps"] == [] and log["note"]
    assert tunelock.file_kind(tmp_path / "cpu.rank0.launches.json").kind == "launches"
    compare = subprocess.run(
        [sys.executable, "-m", "tunelock", "watch", "compare",
         str(tmp_path / "cpu.rank0.launches.json"), str(tmp_path / "cpu.rank1.launches.json")],
        capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=os.path.dirname(
            os.path.dirname(os.path.abspath(tunelock.__file__)))))
    assert compare.returncode == 1, compare.stderr
    assert "nothing was observed" in compare.stdout


def test_online_check_without_a_watch_warns_once_and_agrees(tmp_path):
    code = """
        import tunelock
        tunelock.install(mode="pinned")
        print(tunelock.verify(), tunelock.verify())
        print(sorted(k for k in tunelock.choice_log() if k.startswith("watch|")))
    """
    result = run_python(code, tmp_path, TUNELOCK_WATCH_VERIFY="1", WORLD_SIZE="1", RANK="0")
    assert result.returncode == 0, result.stderr
    assert "True True" in result.stdout
    assert "watch|tunelock.watch.launches|check=0" in result.stdout
    assert "watch|tunelock.watch.launches|check=1" in result.stdout
    assert result.stderr.count("no launch watch runs in this process") == 1
