"""Other tools' tuning files through Python: fused-MoE config files into a
table and back, byte for byte, and every refusal named."""
import os

import pytest

import tunelock

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                        "moe-configs")
PLAIN = "E=8,N=1792,device_name=NVIDIA_H100_80GB_HBM3.json"


def test_a_folder_of_config_files_round_trips_through_a_table(tmp_path):
    table = tmp_path / "sm90.tlb"
    assert tunelock.import_files(FIXTURES, "sm90", table) == 14
    assert tunelock.file_kind(os.path.join(FIXTURES, PLAIN)).kind == "moe_configs"
    entries = tunelock.table(table)["kernels"]["fused_moe.fused_moe_kernel"]
    assert "E=8|N=1792|device=NVIDIA_H100_80GB_HBM3|M=4096" in entries
    assert tunelock.export_files(table, tmp_path / "out") == 2
    for name in os.listdir(tmp_path / "out"):
        with open(tmp_path / "out" / name, "rb") as got, open(os.path.join(FIXTURES, name), "rb") as want:
            assert got.read() == want.read()


def test_export_never_overwrites_a_file_that_differs(tmp_path):
    table = tmp_path / "sm90.json"
    tunelock.import_files([os.path.join(FIXTURES, PLAIN)], "sm90", table)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / PLAIN).write_text("{}\n")
    with pytest.raises(tunelock.TunelockError, match="exists and differs from what"):
        tunelock.export_files(table, tmp_path / "out")
    assert (tmp_path / "out" / PLAIN).read_text() == "{}\n"


def test_bad_inputs_are_refused_by_name(tmp_path):
    with pytest.raises(tunelock.TunelockError, match="no such file or folder"):
        tunelock.import_files(tmp_path / "missing", "sm90", tmp_path / "t.json")
    notes = tmp_path / "notes.json"
    notes.write_text("{}")
    with pytest.raises(tunelock.TunelockError, match="notes.json: not a file tunelock imports"):
        tunelock.import_files(notes, "sm90", tmp_path / "t.json")
    bad = tmp_path / "E=8,N=64,device_name=X.json"
    bad.write_text('{"1": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32}}')
    with pytest.raises(tunelock.TunelockError, match=r'"1": no BLOCK_SIZE_K'):
        tunelock.import_files(bad, "sm90", tmp_path / "t.json")
    with pytest.raises(ValueError, match="import_files: arch"):
        tunelock.import_files(FIXTURES, "", tmp_path / "t.json")
    assert not (tmp_path / "t.json").exists()
