"""The engine's messages reach Python's logging under one logger name, so a
trainer's handlers, filters and pytest's caplog see and can silence them;
with logging not set up at all they still reach stderr (enumerate too)."""
import logging
import os
import subprocess
import sys

import tunelock.triton as tt
from kernels import Tensor, make_autotuner, mixed_values

HERE = os.path.dirname(os.path.abspath(__file__))


def run_once(tuner):
    tuner.run(Tensor(mixed_values(64)), Tensor([0.0]), 64)


def test_engine_warnings_are_records_of_the_tunelock_logger(caplog):
    tt.install(mode="pinned")
    with caplog.at_level(logging.WARNING, logger="tunelock"):
        run_once(make_autotuner()[0])
    (record,) = [r for r in caplog.records if "no tuned config" in r.getMessage()]
    assert record.name == "tunelock" and record.levelno == logging.WARNING
    assert not record.getMessage().startswith("tunelock:")  # the prefix is the handler's business


def test_a_level_on_the_tunelock_logger_silences_the_engine(caplog, capfd):
    logging.getLogger("tunelock").setLevel(logging.ERROR)
    try:
        tt.install(mode="pinned")
        run_once(make_autotuner()[0])
    finally:
        logging.getLogger("tunelock").setLevel(logging.NOTSET)
    assert "no tuned config" not in caplog.text
    assert "no tuned config" not in capfd.readouterr().err


def test_without_logging_set_up_warnings_and_enumerate_reach_stderr():
    code = ("import sys; sys.path[:0] = [%r, %r]; import tunelock.triton as tt; "
            "from kernels import Tensor, make_autotuner, mixed_values; "
            "tt.install(mode='pinned', enumerate=True); "
            "make_autotuner()[0].run(Tensor(mixed_values(64)), Tensor([0.0]), 64)"
            % (os.path.join(HERE, "standin"), HERE))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TUNELOCK_")}
    if "TUNELOCK_LIBRARY" in os.environ:
        env["TUNELOCK_LIBRARY"] = os.environ["TUNELOCK_LIBRARY"]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "tunelock: info: PINNED demo.kernels.row_sum (4 configs)" in out.stderr
    assert "tunelock: warning: no tuned config for kernel 'demo.kernels.row_sum'" in out.stderr
