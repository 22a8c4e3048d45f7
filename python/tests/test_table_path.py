"""A table path that names nothing is said at install, as every face says
it (the engine's words): a warning, or an error under on_miss=error; the
fallback's warning then says where the table was looked for."""
import logging

import pytest

import tunelock
import tunelock.triton as tt
from kernels import Tensor, make_autotuner, mixed_values


def said(caplog):
    return "\n".join(r.getMessage() for r in caplog.records)


def test_a_missing_table_directory_is_named_at_install(tmp_path, caplog):
    missing = str(tmp_path / "no-such-dir")
    with caplog.at_level(logging.WARNING, logger="tunelock"):
        tt.install(mode="pinned", table_path=[missing])
        assert f"table path entry {missing} does not exist: no table is read from it" in said(caplog)
        tuner, kernel, _ = make_autotuner()
        tuner.run(Tensor(mixed_values(4096)), Tensor([0.0]), 4096)
        assert f"no unknown table in {missing} (does not exist)" in said(caplog)
    assert kernel.launches[-1]["BLOCK"] == 64  # the cheapest, as before


def test_under_on_miss_error_a_missing_table_directory_refuses_the_run(tmp_path):
    missing = str(tmp_path / "no-such-dir")
    tt.install(mode="pinned")
    with pytest.raises(tunelock.TunelockError, match="TUNELOCK_ON_MISS=error refuses a run"):
        tt.install(mode="pinned", table_path=[missing], on_miss="error")
    assert tunelock.installed_policy().on_miss == "min_cost"  # the previous policy stands
