"""maybe_verify(step) when no check is due: nothing about the transport is
read or built, so a trainer under mpirun or torchrun that never asked for
verification runs on; the check itself still needs its rendezvous."""
import os
import subprocess
import sys

import pytest

CALL = "import sys, tunelock; tunelock.install(); print('verdict', tunelock.maybe_verify(int(sys.argv[1])))"


def maybe_verify(step, **env):
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("TUNELOCK_", "OMPI_", "PMI_", "SLURM_"))
             and k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
    if "TUNELOCK_LIBRARY" in os.environ:
        clean["TUNELOCK_LIBRARY"] = os.environ["TUNELOCK_LIBRARY"]
    clean.update(env, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-c", CALL, str(step)], env=clean, capture_output=True,
                          text=True, timeout=120)


MPIRUN = {"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2"}
TORCHRUN_NO_TOKEN = {"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1",
                     "MASTER_PORT": "29511"}


@pytest.mark.parametrize("ranks", [MPIRUN, TORCHRUN_NO_TOKEN], ids=["mpirun", "torchrun"])
@pytest.mark.parametrize("every,step", [("0", 1), ("0", 0), ("5", 3)])
def test_no_check_due_reads_no_rendezvous(ranks, every, step):
    done = maybe_verify(step, TUNELOCK_VERIFY_EVERY=every, **ranks)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "verdict None"


@pytest.mark.parametrize("ranks", [MPIRUN, TORCHRUN_NO_TOKEN], ids=["mpirun", "torchrun"])
def test_a_check_that_is_due_still_needs_its_rendezvous(ranks):
    done = maybe_verify(5, TUNELOCK_VERIFY_EVERY="5", TUNELOCK_VERIFY_TIMEOUT="5", **ranks)
    assert done.returncode != 0
    assert "verdict" not in done.stdout
    assert any(word in done.stderr for word in ("rendezvous", "job token", "no UCX")), done.stderr
