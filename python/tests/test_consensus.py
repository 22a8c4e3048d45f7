"""Consensus mode with the stand-in Triton, over UCX (`tunelock launch`)
and over torch.distributed (gloo, where torch is installed): both ranks
launch the same config from step 0, switch after the first check to the
winner of both ranks' timings, and rank 0 writes the table merge writes; a
pinned run with it repeats the post-switch bits."""
import os
import re
import socket
import subprocess
import sys

import pytest

import tunelock
import tunelock.__main__ as cli_module

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "consensus_worker.py")
LINE = re.compile(r"rank (\d): step (\d) out (\S+) BLOCK (\d+)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def consensus_env(tmp_path):
    return {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "TUNELOCK_VERIFY_TIMEOUT": "120",
            "TUNELOCK_MODE": "consensus", "TUNELOCK_RECORD": str(tmp_path / "rec" / "run")}


def run_over_ucx(tmp_path):
    """Each rank's lines, from `tunelock launch -n 2` (its `[rank N] ` prefixes dropped)."""
    if cli_module.find_cli() is None:
        pytest.skip("no tunelock program beside this package (build the tunelock target)")
    done = subprocess.run([sys.executable, "-m", "tunelock", "launch", "-n", "2", "--", sys.executable,
                           WORKER], env=consensus_env(tmp_path), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=300)
    if "has no UCX" in done.stdout:
        pytest.skip("this build of tunelock has no UCX")
    assert done.returncode == 0, done.stdout
    return ["\n".join(line.split("] ", 1)[1] for line in done.stdout.splitlines()
                      if line.startswith(f"[rank {r}] ")) for r in (0, 1)]


def run_over_torch(tmp_path):
    pytest.importorskip("torch.distributed", reason="torch is not installed here")
    env = {**consensus_env(tmp_path), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()),
           "WORLD_SIZE": "2", "CONSENSUS_OVER": "torch", "TUNELOCK_VERIFY_TRANSPORT": "group"}
    ranks = [subprocess.Popen([sys.executable, WORKER], env={**env, "RANK": str(r)},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(2)]
    return [rank.communicate(timeout=300)[0] for rank in ranks]


def steps(out):
    return {int(m[2]): (m[3], int(m[4])) for m in LINE.finditer(out)}


@pytest.mark.parametrize("run_ranks", [run_over_ucx, run_over_torch], ids=["ucx", "torch"])
def test_both_ranks_launch_alike_from_step_0_and_switch_to_the_winner(tmp_path, run_ranks):
    outputs = run_ranks(tmp_path)
    for out in outputs:
        assert "step 0 verify -> True" in out, out
        assert "timed 4" in out, out  # every candidate once, never again
    rank0, rank1 = (steps(out) for out in outputs)
    assert rank0 == rank1, outputs  # the same bits on both ranks at every step
    assert rank0[0][1] == 64       # the deterministic choice: the cheapest
    assert rank0[1][1] == rank0[2][1] == 256  # the aggregated timing's winner
    assert rank0[0][0] != rank0[1][0]  # the switch changed the bits

    # The table is merge's over the ranks' record files.
    tables = list((tmp_path / "rec" / "run.tables").iterdir())
    assert len(tables) == 1, tables
    table = tables[0]
    merged = tmp_path / "merged" / table.name
    merged.parent.mkdir()
    tunelock.merge([str(tmp_path / "rec" / "run.rank0.json"), str(tmp_path / "rec" / "run.rank1.json")],
                   str(merged))
    assert table.read_bytes() == merged.read_bytes()


def test_a_pinned_run_with_the_table_repeats_the_switched_bits(tmp_path):
    consensus = steps(run_over_ucx(tmp_path)[0])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path),
           "TUNELOCK_MODE": "pinned", "TUNELOCK_ON_MISS": "error",
           "TUNELOCK_TABLE_PATH": str(tmp_path / "rec" / "run.tables")}
    out = subprocess.run([sys.executable, WORKER], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=300).stdout
    pinned = steps(out)
    assert pinned[0] == consensus[1], out


def test_chaos_is_refused_with_consensus():
    with pytest.raises(tunelock.TunelockError, match="chaos cannot be combined with mode 'consensus'"):
        tunelock.install(mode="consensus", record_path="/tmp/tunelock-consensus-refused/run", chaos=True)
