"""tunelock.inductor against the stand-in Inductor (tests/standin_inductor):
each run is a fresh process (inductor_worker.py) compiling one mm decision
and one generated reduction, with its own noisy clock (NOISE_SEED)."""
import json
import os
import subprocess
import sys

import pytest

import tunelock
import tunelock.inductor as ti

HERE = os.path.dirname(os.path.abspath(__file__))
MM = "inductor.mm"
KERNEL = "inductor.triton_red_fused_sum"


def run(tmp_path, *options, noise=0, rank=0, **policy):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TUNELOCK_")}
    env.update({"NOISE_SEED": str(noise), "RANK": str(rank), "WORLD_SIZE": "8"})
    if "TUNELOCK_LIBRARY" in os.environ:
        env["TUNELOCK_LIBRARY"] = os.environ["TUNELOCK_LIBRARY"]
    env.update({f"TUNELOCK_{name.upper()}": str(value) for name, value in policy.items()})
    done = subprocess.run([sys.executable, os.path.join(HERE, "inductor_worker.py"), *options],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    out["stderr"] = done.stderr
    return out


def entry(log, kernel):
    (value,) = [v for k, v in log.items() if f"|{kernel}|" in k]
    return value


def record_and_merge(tmp_path, ranks=2):
    for rank in range(ranks):
        run(tmp_path, noise=rank + 1, rank=rank, mode="record", record=tmp_path / "rec")
    tables = tmp_path / "tables"
    tunelock.merge([str(tmp_path / f"rec.rank{r}.json") for r in range(ranks)],
                   str(tables / "unknown.json"))
    return tables


def test_without_tunelock_each_process_clock_picks_its_own_kernels(tmp_path):
    runs = [run(tmp_path, "--no-install", noise=seed) for seed in range(6)]
    assert all(r["benchmarked"] and r["bench_calls"] == 4 and r["descent_calls"] == 1
               for r in runs)
    assert len({(r["mm"], json.dumps(r["kernel"]), r["bits"]) for r in runs}) > 1


def test_keys_and_candidates_are_the_same_in_every_process_whatever_inductor_numbered(tmp_path):
    first = run(tmp_path, "--counter", "0", noise=1, mode="pinned")
    second = run(tmp_path, "--counter", "17", noise=2, mode="pinned")
    assert first["log"] == second["log"] and len(first["log"]) == 2
    (mm_key,) = [k for k in first["log"] if f"|{MM}|" in k]
    assert mm_key == ("unknown|inductor.mm|in0=bfloat16[2048x768]/[768x1]+0|"
                      "in1=bfloat16[768x3072]/[1x768]+0|out=bfloat16[2048x3072]/[3072x1]+0")
    (kernel_key,) = [k for k in first["log"] if f"|{KERNEL}|" in k]
    assert kernel_key.startswith("unknown|inductor.triton_red_fused_sum|source=")
    assert kernel_key.endswith("|size_hints=x:1,r0_:4096")
    # Other sizes: another key for the template decision.
    other = run(tmp_path, "--rows", "4096", mode="pinned")
    assert mm_key not in other["log"]


def test_record_merge_then_pinned_hands_inductor_exactly_the_tables_choice(tmp_path):
    tables = record_and_merge(tmp_path)
    table = tunelock.table(str(tables / "unknown.json"))
    (mm_entry,) = table["kernels"][MM].values()
    (kernel_entry,) = table["kernels"][KERNEL].values()
    assert mm_entry["algorithm"] in ("aten_mm", "triton_mm")
    pinned = [run(tmp_path, noise=seed, mode="pinned", table_path=tables, on_miss="error")
              for seed in (5, 6, 7, 8)]
    for r in pinned:
        assert r["benchmarked"] == [] and r["bench_calls"] == 0 and r["descent_calls"] == 0
        assert len(r["compiled"]) == 1  # the one choice handed over, compiled once
        assert r["kernel"] == kernel_entry["kwargs"]
        assert entry(r["log"], MM).endswith(f"algorithm={mm_entry['algorithm']};pinned")
    assert len({r["bits"] for r in pinned}) == 1
    assert len({json.dumps(r["log"], sort_keys=True) for r in pinned}) == 1
    # The record's timings are Inductor's own, one per choice.
    sidecar = json.loads((tmp_path / "rec.rank0.timings.json").read_text())
    (timed,) = sidecar["timings"]["unknown"][MM].values()
    assert len(timed) == 3 and all(t["median_ms"] > 0 for t in timed)


def test_a_miss_takes_inductors_own_default_or_refuses_under_on_miss_error(tmp_path):
    missed = run(tmp_path, noise=3, mode="pinned")
    assert missed["mm"] == "aten" and missed["benchmarked"] == []
    assert missed["kernel"] == {"XBLOCK": 8, "R0_BLOCK": 64}  # the heuristic's first config
    assert "no tuned config for kernel 'inductor.mm' on unknown; using its own untimed " \
           "default" in missed["stderr"]
    refused = run(tmp_path, mode="pinned", on_miss="error")
    assert "no tuned config for kernel 'inductor.mm' key 'in0=bfloat16" in refused["error"]
    assert "on_miss is 'error'" in refused["error"]
    assert refused["compiled"] == [] and refused["benchmarked"] == []


def test_chaos_makes_ranks_choose_differently_and_verify_can_tell(tmp_path):
    chosen = {json.dumps(run(tmp_path, rank=rank, mode="pinned", chaos=1)["log"], sort_keys=True)
              for rank in range(4)}
    assert len(chosen) > 1


def test_a_corrupt_entry_is_refused_by_file_and_field(tmp_path):
    tables = tmp_path / "tables"
    tables.mkdir()
    (tables / "unknown.json").write_text(json.dumps({
        "arch": "unknown", "format_version": 1,
        "kernels": {MM: {"*": {"kwargs": {}, "num_warps": 0, "num_stages": 0,
                               "algorithm": "aten mm"}}}}))
    out = run(tmp_path, mode="pinned", table_path=tables)
    assert "unknown.json" in out["error"] and "algorithm" in out["error"]
    assert "'aten mm' is not an algorithm name" in out["error"]


def test_a_foreign_entry_is_skipped_by_name_and_never_launched(tmp_path):
    """An entry recorded for a Triton kernel (no algorithm) under the mm's
    name matches none of Inductor's choices: skipped, named, and the miss
    policy decides."""
    tables = tmp_path / "tables"
    tables.mkdir()
    (tables / "unknown.json").write_text(json.dumps({
        "arch": "unknown", "format_version": 1,
        "kernels": {MM: {"*": {"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 3}}}}))
    out = run(tmp_path, mode="pinned", table_path=tables)
    assert "table entry for kernel 'inductor.mm' key '*' on unknown matches none of the 3 live " \
           "candidates; skipped" in out["stderr"]
    assert out["mm"] == "aten"
    refused = run(tmp_path, mode="pinned", table_path=tables, on_miss="error")
    assert "on_miss is 'error'" in refused["error"]


def test_audit_mode_launches_the_pinned_choice_and_times_every_one(tmp_path):
    tables = record_and_merge(tmp_path)
    table = tunelock.table(str(tables / "unknown.json"))
    (mm_entry,) = table["kernels"][MM].values()
    out = run(tmp_path, noise=9, mode="audit", table_path=tables, record=tmp_path / "aud")
    assert len(out["benchmarked"]) == 1  # Inductor's timings, for the regret report
    assert entry(out["log"], MM).endswith(f"algorithm={mm_entry['algorithm']};pinned")
    report = tunelock.audit([str(tmp_path / "aud.rank0.audit.json")])
    rows = {row["kernel"]: row for row in report["rows"]}
    assert set(rows) == {MM, KERNEL}
    assert rows[MM]["pinned_ms"] > 0 and rows[MM]["regret_pct"] >= 0


def test_triton_install_covers_torch_compile_where_torch_is_imported(tmp_path):
    out = run(tmp_path, "--via-triton", mode="pinned")
    assert out["benchmarked"] == [] and len(out["log"]) == 2


@pytest.mark.parametrize("version, ok", [("2.11.0", True), ("2.9.1+cu126", True),
                                         ("2.10.0a0", True), ("2.8.0", False), ("1.13.1", False),
                                         ("3.0.0", False)])
def test_supported_torch_versions(version, ok):
    assert ti.supported(version) is ok


def test_an_unsupported_torch_is_refused_with_the_versions_that_are(monkeypatch):
    monkeypatch.setattr(ti, "_torch_version", lambda: "1.13.1")
    with pytest.raises(tunelock.TunelockError, match=r"supports torch 2\.9, 2\.10, 2\.11; this "
                                                     r"is torch 1\.13\.1"):
        ti.install(mode="pinned")
