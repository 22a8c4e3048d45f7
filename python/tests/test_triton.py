"""tunelock.triton against the stand-in Triton: what the interception does
in each mode, with Triton's hooks, pruning and cache."""
import json
import re
import logging

import pytest

import triton
import tunelock
import tunelock.triton as tt
from kernels import BLOCKS, Tensor, make_autotuner, mixed_values

N = 4096


def run_once(tuner, values=None):
    x, out = Tensor(values or mixed_values(N)), Tensor([0.0])
    tuner.run(x, out, N)
    return out.values[0]


def test_the_tuning_key_is_the_named_keys_then_every_tensor_dtype():
    tuner, _, _ = make_autotuner()
    assert tt.tuning_key(tuner, (Tensor([1.0]), Tensor([0.0], "torch.bfloat16"), N), {}) == \
        "n=4096|torch.float32|torch.bfloat16"


def test_configs_cross_over_in_megatrons_form():
    config = triton.Config({"BLOCK": 64, "EVEN": True}, num_warps=2, num_stages=3, num_ctas=2,
                           maxnreg=128)
    assert tt.config_data(config) == {"kwargs": {"BLOCK": 64, "EVEN": 1}, "num_warps": 2,
                                      "num_stages": 3, "num_ctas": 2, "maxnreg": 128}


def test_pinned_never_times_and_every_process_gets_the_same_bits():
    results = set()
    for seed in range(6):  # six fresh "processes"
        tt.install(mode="pinned")
        tuner, kernel, bench = make_autotuner(seed)
        results.add(run_once(tuner))
        assert bench.calls == 0
        assert kernel.launches[-1]["BLOCK"] == 64  # the cheapest
        tt.uninstall()
    assert len(results) == 1


def test_auto_mode_times_and_fresh_processes_can_disagree():
    winners, results = set(), set()
    for seed in range(8):
        tt.install(mode="auto", verify_every=1000)  # auto, observed and logged
        tuner, _, bench = make_autotuner(seed)
        results.add(run_once(tuner))
        assert bench.calls == len(BLOCKS)
        winners.add(tuner.best_config.kwargs["BLOCK"])
        (entry, value), = tunelock.choice_log().items()
        assert entry == "unknown|demo.kernels.row_sum|n=4096|torch.float32|torch.float32"
        assert value.endswith(";timed")
        tt.uninstall()
    assert len(winners) > 1 and len(results) > 1  # the problem tunelock exists for


def test_reset_to_zero_keeps_an_accumulating_output_right_through_timing():
    tt.install(mode="auto")
    tuner, _, _ = make_autotuner(1)
    values = mixed_values(N)
    got = run_once(tuner, values)
    expected = Tensor([0.0])
    tuner.fn.fn(Tensor(values), expected, N, tuner.best_config.kwargs["BLOCK"])
    assert got == expected.values[0]


def test_record_then_merge_then_pinned_uses_the_recorded_winner(tmp_path, monkeypatch):
    monkeypatch.setattr(tt, "arch_tag", lambda: "sm90")
    tt.install(mode="record", record_path=str(tmp_path / "rec"))
    tuner, _, _ = make_autotuner(3)
    run_once(tuner)
    winner = tuner.best_config.kwargs["BLOCK"]
    tunelock.flush()
    record = json.loads((tmp_path / "rec.rank0.json").read_text())
    assert list(record["sm90"]["demo.kernels.row_sum"]) == ["n=4096|torch.float32|torch.float32"]
    sidecar = json.loads((tmp_path / "rec.rank0.timings.json").read_text())
    timed = sidecar["timings"]["sm90"]["demo.kernels.row_sum"]["n=4096|torch.float32|torch.float32"]
    assert len(timed) == len(BLOCKS) and all(t["median_ms"] > 0 for t in timed)
    tunelock.merge([str(tmp_path / "rec.rank0.json")], str(tmp_path / "tables" / "sm90.json"))

    tt.install(mode="pinned", table_path=[str(tmp_path / "tables")], on_miss="error")
    pinned, kernel, bench = make_autotuner(99)
    run_once(pinned)
    assert bench.calls == 0 and kernel.launches[-1]["BLOCK"] == winner
    (value,) = tunelock.choice_log().values()
    assert value.startswith(f"BLOCK={winner};")


def test_a_table_merged_from_python_records_says_what_recorded_it(tmp_path, monkeypatch):
    """Triton's and PyTorch's versions, the driver (where there is one) and
    the time of recording reach the sidecar and the merged table."""
    monkeypatch.setattr(tt, "arch_tag", lambda: "sm90")
    monkeypatch.setattr(tt, "_driver_version", lambda: "13.0")
    tt.install(mode="record", record_path=str(tmp_path / "rec"))
    run_once(make_autotuner(3)[0])
    tunelock.flush()
    device = json.loads((tmp_path / "rec.rank0.timings.json").read_text())["device"]
    assert device["triton"] == triton.__version__ == "3.6.0-standin"
    assert device["packages"]["triton"] == "3.6.0-standin"
    assert device["driver_version"] == "13.0"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", device["recorded_at"])
    tunelock.merge([str(tmp_path / "rec.rank0.json")], str(tmp_path / "sm90.json"))
    table = json.loads((tmp_path / "sm90.json").read_text())
    assert table["triton"] == "3.6.0-standin"
    assert table["packages"]["triton"] == "3.6.0-standin"
    assert table["provenance"]["driver_version"] == "13.0"
    assert table["provenance"]["recorded_at"] == device["recorded_at"]
    try:
        import torch
        assert table["packages"]["torch"] == torch.__version__
    except ImportError:
        assert "torch" not in table["packages"]
    # The binary forms keep the same.
    tunelock.convert_table(str(tmp_path / "sm90.json"), str(tmp_path / "sm90.tlb"))
    assert tunelock.table(str(tmp_path / "sm90.tlb"))["triton"] == "3.6.0-standin"


def test_chaos_picks_per_rank_without_timing():
    tt.install(mode="pinned", chaos=True)
    tuner, _, bench = make_autotuner()
    run_once(tuner)
    assert bench.calls == 0
    assert tunelock.choice_log()  # logged as pinned, for verify to catch


def test_pinned_chooses_among_the_pruned_configs_and_runs_the_config_pre_hook():
    seen = []
    configs = [triton.Config({"BLOCK": b}, num_warps=1, num_stages=1,
                             pre_hook=lambda nargs, b=b: seen.append(nargs["BLOCK"]))
               for b in BLOCKS]
    tt.install(mode="pinned")
    tuner, kernel, _ = make_autotuner(
        configs=configs, prune_configs_by={"early_config_prune": lambda cs, nargs, **kw: cs[2:]})
    run_once(tuner)
    assert kernel.launches[-1]["BLOCK"] == 256  # cheapest of the pruned pair
    assert seen == [256, 256, 256]  # the first call's bits check (two runs), then the launch


def test_pinned_launches_pass_only_the_options_the_backend_would_not_fill_in(monkeypatch):
    # On CUDA the backend fills in num_warps=4, num_ctas=1, num_stages=3 itself;
    # passing them again compiles the same kernel but costs every launch.
    monkeypatch.setattr(tt, "_launch_options_filled_in",
                        lambda: {"num_warps": 4, "num_ctas": 1, "num_stages": 3})
    hooked = []
    configs = [triton.Config({"BLOCK": 64}, num_warps=4, num_stages=3,
                             pre_hook=lambda nargs: hooked.append(dict(nargs))),
               triton.Config({"BLOCK": 128}, num_warps=8, num_stages=3)]
    tt.install(mode="pinned")
    tuner, kernel, _ = make_autotuner(configs=configs)
    run_once(tuner)
    run_once(tuner)
    # The first call's two bits runs and both launches: the same options.
    assert [sorted(k for k in launch if k not in ("grid", "warmup"))
            for launch in kernel.launches] == [["BLOCK"]] * 4
    # The config's pre_hook still sees every option, as under Triton's own run.
    assert all(h["num_warps"] == 4 and h["num_stages"] == 3 and h["num_ctas"] == 1
               for h in hooked) and len(hooked) == 4
    tt.install(mode="pinned", block_sizes={"BLOCK": 128})
    tuner, kernel, _ = make_autotuner(configs=configs)
    run_once(tuner)
    assert {k: v for k, v in kernel.launches[-1].items()} == {"BLOCK": 128, "num_warps": 8}


def test_without_the_backends_defaults_every_option_is_passed():
    assert tt.launch_options_filled_in() == {}  # the stand-in has no triton.compiler
    tt.install(mode="pinned")
    tuner, kernel, _ = make_autotuner()
    run_once(tuner)
    assert kernel.launches[-1] == {"BLOCK": 64, "num_warps": 1, "num_ctas": 1, "num_stages": 2}


def test_the_hot_path_keys_a_call_the_same_however_its_arguments_come():
    tt.install(mode="pinned")
    tuner, kernel, _ = make_autotuner()
    x, out = Tensor(mixed_values(N)), Tensor([0.0])
    tuner.run(x, out, N)
    tuner.run(x, out, n=N)  # the key argument by name: Triton's own key
    tuner.run(x, out, 2 * N)  # another key: another first call
    tuner.run(x, Tensor([0.0], "torch.bfloat16"), N)  # another dtype: another key
    tuner.run(x, out, N)
    log = tunelock.choice_log()
    assert sorted(log) == sorted([
        "unknown|demo.kernels.row_sum|n=4096|torch.float32|torch.float32",
        "unknown|demo.kernels.row_sum|n=8192|torch.float32|torch.float32",
        "unknown|demo.kernels.row_sum|n=4096|torch.float32|torch.bfloat16"])
    assert [launch["BLOCK"] for launch in kernel.launches[-3:]] == [64, 64, 64]
    assert len(tuner._tunelock_state.chosen) == 4  # the by-name call is its own hot-path entry


def test_out_of_scope_and_config_invariant_kernels_are_timed_and_not_logged():
    for fields in ({"modules": ["other.pkg"]}, {"config_invariant": ["demo.kernels.row_sum"]}):
        tt.install(mode="pinned", **fields)
        tuner, _, bench = make_autotuner()
        run_once(tuner)
        assert bench.calls == len(BLOCKS)
        assert tunelock.choice_log() == {}
        tt.uninstall()


def test_a_single_config_autotuner_is_logged_once_under_the_wildcard_key():
    tt.install(mode="pinned")
    tuner, _, bench = make_autotuner(configs=[triton.Config({"BLOCK": 128}, num_warps=2)])
    for _ in range(3):
        run_once(tuner)
    assert tunelock.choice_log() == {
        "unknown|demo.kernels.row_sum|*": "BLOCK=128;warps=2;stages=3;pinned"}
    assert bench.calls == 0


def test_enumerate_names_each_kernel_once_with_its_state(caplog):
    tt.install(mode="pinned", enumerate=True)
    tuner, _, _ = make_autotuner()
    with caplog.at_level(logging.INFO, logger="tunelock"):
        run_once(tuner)
        run_once(tuner, mixed_values(N, seed=2))
    # The engine's own warnings reach the same logger now; enumerate says its line once.
    states = [m for m in (r.getMessage() for r in caplog.records)
              if m.startswith(("PINNED", "TIMED", "UNPINNED"))]
    assert states == ["PINNED demo.kernels.row_sum (4 configs)"]


def test_a_new_policy_drops_earlier_choices_and_uninstall_restores_triton():
    tt.install(mode="pinned")
    tuner, kernel, bench = make_autotuner(5)
    run_once(tuner)
    tt.install(mode="pinned", block_sizes={"BLOCK": 512})
    run_once(tuner)
    assert kernel.launches[-1]["BLOCK"] == 512
    tt.uninstall()
    assert triton.Autotuner.run is not tt._run
    run_once(tuner)
    assert bench.calls == len(BLOCKS)  # Triton's own run: timed again


def test_restore_value_puts_an_in_place_output_back_after_timing(tmp_path):
    tt.install(mode="record", record_path=str(tmp_path / "rec"))
    tuner, _, bench = make_autotuner(2, reset_to_zero=None, restore_value=["out"])
    values = mixed_values(N)
    x, out = Tensor(values), Tensor([5.0])
    tuner.run(x, out, N)
    assert bench.calls == len(BLOCKS)
    expected = Tensor([5.0])
    tuner.fn.fn(Tensor(values), expected, N, tuner.best_config.kwargs["BLOCK"])
    assert out.values[0] == expected.values[0]  # timing runs left no trace


def test_write_manifest_lists_the_autotuners_called_in_the_engines_form(tmp_path):
    tt.install(mode="pinned")
    tuner, _, _ = make_autotuner()
    run_once(tuner)
    assert tt.write_manifest(tmp_path / "candidates.json") == 1
    manifest = json.loads((tmp_path / "candidates.json").read_text())
    entry = manifest["kernels"]["demo.kernels.row_sum"]
    assert entry["key"] == ["n"] and len(entry["configs"]) == len(BLOCKS)
    # The engine reads it as any manifest: the offline decision matches the run's.
    choice = tunelock.choose("demo.kernels.row_sum", "n=4096|torch.float32|torch.float32",
                             candidates_file=str(tmp_path / "candidates.json"), arch="sm90")
    assert choice.signature == tunelock.choice_log()[
        "unknown|demo.kernels.row_sum|n=4096|torch.float32|torch.float32"].rsplit(";", 1)[0]
