"""Arguments on their way into the engine's C ABI: every public function
refuses what C or the engine's JSON reader would misread (a str for a list,
a NUL byte, an integer past its C type, a wrong type), with a message
"tunelock.<function>: <argument>: <problem>", and refuses in the writer what
the record readers would refuse later. Valid arguments keep working."""
import json
import os
import pathlib

import pytest

import tunelock
import tunelock.triton as tt
from tunelock import _native
from triton.runtime.autotuner import Config

CANDIDATES = [
    {"kwargs": {"BLOCK_M": 128, "BLOCK_N": 128}, "num_warps": 8, "num_stages": 3},
    {"kwargs": {"BLOCK_M": 64, "BLOCK_N": 64}, "num_warps": 4, "num_stages": 2},
]
CHEAPEST, TABLED = 1, 0  # with no table the cheapest wins; the table below names the other
INT64_MAX = 2 ** 63 - 1


class Timed(tunelock.Runner):
    """A runner whose candidates take these milliseconds."""

    def __init__(self, *median_ms):
        self.median_ms = median_ms

    def time(self, index):
        return self.median_ms[index]


def first_call(arch="sm90", module="pkg", name="mm", key="M=1", candidates=CANDIDATES,
               runner=None, **options):
    """The driver's first call of one key, with these arguments."""
    return tunelock.first_call(arch, module, name, key, candidates,
                               len(candidates) if isinstance(candidates, list) else 2,
                               runner or Timed(0.5, 0.7), **options)


@pytest.fixture
def table_file(tmp_path):
    path = tmp_path / "sm90.json"
    path.write_text(json.dumps({"arch": "sm90", "kernels": {"mm": {"M=1": CANDIDATES[TABLED]}}}))
    return path


@pytest.fixture
def record_file(tmp_path):
    tunelock.install(mode="record", record_path=str(tmp_path / "rec"))
    first_call()
    tunelock.flush()
    tunelock.install(mode="auto")
    return tmp_path / "rec.rank0.json"


def refused(kind, call, *expected):
    """The call raises `kind`; its message holds every expected text and no
    JSON library exception tag."""
    with pytest.raises(kind) as error:
        call()
    message = str(error.value)
    for text in expected:
        assert text in message, message
    assert "json.exception" not in message, message
    return message


# 1. A path where a list of paths is expected.

@pytest.mark.parametrize("as_given", [str, pathlib.Path, lambda p: [str(p)], lambda p: (p,),
                                      lambda p: (x for x in [p])])
def test_choose_takes_one_table_path_as_a_list_of_one(table_file, as_given):
    choice = tunelock.choose("pkg.mm", "M=1", candidates=CANDIDATES, tables=as_given(table_file))
    assert (choice.index, choice.reason) == (TABLED, "table")


def test_choose_without_tables_still_takes_the_cheapest():
    for tables in ((), [], None):
        assert tunelock.choose("pkg.mm", "M=1", candidates=CANDIDATES, tables=tables).index == CHEAPEST


@pytest.mark.parametrize("tables, argument", [
    (5, "tables: expected a path or a list of paths, got int"),
    ({"sm90.json": 1}, "tables: expected a path or a list of paths, got dict"),
    (b"sm90.json", "tables: expected a path or a list of paths, got bytes"),
    ([5], "tables[0]: expected a path (str or os.PathLike), got int"),
    (["ok.json", None], "tables[1]: expected a path (str or os.PathLike), got None"),
])
def test_choose_refuses_tables_of_the_wrong_type(tables, argument):
    refused(TypeError, lambda: tunelock.choose("pkg.mm", "M=1", candidates=CANDIDATES,
                                               tables=tables), "tunelock.choose: " + argument)


def test_merge_and_report_take_one_record_path(tmp_path, record_file):
    for records in (str(record_file), record_file):
        assert tunelock.merge(records, tmp_path / "sm90.json")["entries"] == 1
        assert tunelock.report(records)["disagreements"] == []
    refused(TypeError, lambda: tunelock.report(7), "tunelock.report: records: expected a path")
    refused(TypeError, lambda: tunelock.merge([record_file, 7], tmp_path / "t.json"),
            "tunelock.merge: records[1]: expected a path")


def test_candidates_and_dtypes_of_the_wrong_shape_are_refused_or_taken_as_one():
    refused(TypeError, lambda: tunelock.choose("pkg.mm", "M=1", candidates="BLOCK_M=64"),
            "tunelock.choose: candidates: expected a list of configs")
    refused(TypeError, lambda: first_call(candidates=CANDIDATES[0]),
            "tunelock.first_call: candidates: expected a list of configs", "got dict")
    refused(TypeError, lambda: first_call(candidates=[CANDIDATES[0], 3]),
            "tunelock.first_call: candidates[1]: expected a config dict or a triton.Config")
    refused(TypeError, lambda: tunelock.choose("pkg.mm", "M=1", candidates=CANDIDATES,
                                               candidates_file="c.json"),
            "tunelock.choose: candidates, candidates_file: give one, not both")
    refused(TypeError, lambda: tunelock.tuning_key("M=1"),
            "tunelock.tuning_key: key_args: expected a list of (name, value) pairs, got str")
    refused(TypeError, lambda: tunelock.tuning_key([("M", 1), 5]),
            "tunelock.tuning_key: key_args[1]: expected a (name, value) pair")
    # One dtype is one dtype, not a dtype per character.
    assert tunelock.tuning_key([("M", 1)], "torch.float16") == "M=1|torch.float16"
    assert tunelock.tuning_key({"M": 1, "N": 2}) == "M=1|N=2"


# 2. NUL bytes.

NUL = "a\0b"


def _nul_calls(tmp_path):
    t = str(tmp_path / "sm90.json")
    return [
        (lambda: tunelock.tuning_key([(NUL, 1)]), "tuning_key", "key_args[0][0]"),
        (lambda: tunelock.tuning_key([("M", NUL)]), "tuning_key", "key_args[0] (M)"),
        (lambda: tunelock.tuning_key([("M", 1)], [NUL]), "tuning_key", "dtypes[0]"),
        (lambda: tunelock.observes(NUL, "mm"), "observes", "module"),
        (lambda: tunelock.observes("pkg", NUL), "observes", "name"),
        (lambda: first_call(module=NUL), "first_call", "module"),
        (lambda: first_call(name=NUL), "first_call", "name"),
        (lambda: first_call(key="M=1\0M=2"), "first_call", "key"),
        (lambda: first_call(candidates=[{"kwargs": {NUL: 1}}]), "first_call", "candidates[0].kwargs"),
        (lambda: first_call(identity=NUL), "first_call", "identity"),
        (lambda: tunelock.signature({"kwargs": {"A": 1}, "num_warps": 4, "num_stages": 2,
                                     "ir_override": NUL}), "signature", "config.ir_override"),
        (lambda: tunelock.set_device(device_name=NUL), "set_device", "device_name"),
        (lambda: tunelock.set_device(cuda_version=NUL), "set_device", "cuda_version"),
        (lambda: tunelock.choose(NUL, "M=1", candidates=CANDIDATES), "choose", "kernel"),
        (lambda: tunelock.choose("pkg.mm", NUL, candidates=CANDIDATES), "choose", "key"),
        (lambda: tunelock.choose("pkg.mm", "M=1", candidates=CANDIDATES, tables=t + "\0x"),
         "choose", "tables"),
        (lambda: tunelock.choose("pkg.mm", "M=1", candidates=CANDIDATES, on_miss="error\0"),
         "choose", "on_miss"),
        (lambda: tunelock.choose("pkg.mm", "M=1", candidates_file=NUL), "choose", "candidates_file"),
        (lambda: tunelock.merge([t], t + "\0.tlb"), "merge", "output"),
        (lambda: tunelock.merge([t], t, source=NUL), "merge", "source"),
        (lambda: tunelock.report([NUL]), "report", "records[0]"),
        (lambda: tunelock.file_kind(NUL), "file_kind", "path"),
        (lambda: tunelock.table(NUL), "table", "path"),
        (lambda: tunelock.convert_table(t, NUL), "convert_table", "output_path"),
        (lambda: tunelock.flush(NUL), "flush", "choice_log_prefix"),
        (lambda: tunelock.Policy(mode="pinned\0"), "Policy", "mode"),
        (lambda: tunelock.Policy(modules=["a", NUL]), "Policy", "modules[1]"),
        (lambda: tunelock.Policy(table_path=t + "\0"), "Policy", "table_path"),
        (lambda: tunelock.Policy(**{"mode\0x": "pinned"}), "Policy", "field name"),
        (lambda: tunelock.install(record_path=NUL), "install", "record_path"),
        (lambda: tunelock.install(nondeterministic={"pkg.mm": [NUL]}), "install",
         "nondeterministic['pkg.mm'][0]"),
        (lambda: tt.install(mode="pinned\0"), "triton.install", "mode"),
        (lambda: tt.write_manifest(NUL), "triton.write_manifest", "path"),
    ]


def test_a_nul_byte_in_any_string_argument_is_refused_naming_it(tmp_path):
    for call, function, argument in _nul_calls(tmp_path):
        refused(ValueError, call, f"tunelock.{function}: {argument}", "contains a NUL byte")
    assert not list(tmp_path.iterdir())  # nothing was written under a cut-short name


def test_two_keys_that_differ_after_a_nul_byte_never_become_one():
    tunelock.install(mode="pinned")
    first_call(runner=tunelock.NothingToRun())
    refused(ValueError, lambda: first_call(key="M=1\0|N=2", runner=tunelock.NothingToRun()),
            "tunelock.first_call: key: contains a NUL byte")
    assert list(tunelock.choice_log()) == ["sm90|pkg.mm|M=1"]


def test_the_last_line_refuses_a_nul_byte_even_without_a_name():
    with pytest.raises(ValueError, match="NUL byte"):
        _native.encode("a\0b")
    assert _native.encode("ab") == b"ab" and _native.encode(None) is None


def test_text_that_is_not_utf8_is_refused_naming_it():
    refused(ValueError, lambda: tunelock.observes("pkg\udc80", "mm"),
            "tunelock.observes: module: is not valid UTF-8 text")
    refused(ValueError, lambda: tunelock.signature({"kwargs": {"A": 1}, "num_warps": 4,
                                                    "num_stages": 2, "ir_override": "\ud800"}),
            "tunelock.signature: config.ir_override: is not valid UTF-8 text")


# 3. Integers and their C types.

@pytest.mark.parametrize("value", [2 ** 64 - 1, 2 ** 63, -(2 ** 63) - 1, 2 ** 100])
def test_key_values_past_int64_are_refused_not_wrapped(value):
    message = refused(ValueError, lambda: tunelock.tuning_key([("M", value)]),
                      f"tunelock.tuning_key: key_args[0] (M): {value} is out of range",
                      "allowed -9223372036854775808 to 9223372036854775807")
    assert "M=-1" not in message


def test_key_values_at_the_ends_of_int64_and_bools_keep_their_text():
    assert tunelock.tuning_key([("M", INT64_MAX)]) == f"M={INT64_MAX}"
    assert tunelock.tuning_key([("M", -(2 ** 63))]) == f"M={-(2 ** 63)}"
    assert tunelock.tuning_key([("CAUSAL", True), ("S", 1.5)]) == "CAUSAL=True|S=1.5"


class Index:
    """An integer type that is not int (numpy's, torch's): read through __index__."""

    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


@pytest.mark.parametrize("call, kind, expected", [
    (lambda: tunelock.set_device(sm_count=2 ** 63), ValueError,
     "tunelock.set_device: sm_count: 9223372036854775808 is out of range; allowed 0 to"),
    (lambda: tunelock.set_device(sm_count=2 ** 64 - 1), ValueError, "sm_count: 18446744073709551615"),
    (lambda: tunelock.set_device(sm_count=True), TypeError,
     "tunelock.set_device: sm_count: expected an integer, got bool"),
    (lambda: tunelock.set_device(sm_count=80.0), TypeError, "sm_count: expected an integer, got float"),
    (lambda: tunelock.set_device(sm_count="80"), TypeError, "sm_count: expected an integer, got str"),
    (lambda: tunelock.maybe_verify(-1), ValueError,
     "tunelock.maybe_verify: iteration: -1 is out of range; allowed 0 to 9223372036854775807"),
    (lambda: tunelock.maybe_verify(2 ** 64), ValueError, "tunelock.maybe_verify: iteration:"),
    (lambda: tunelock.maybe_verify(True), TypeError, "tunelock.maybe_verify: iteration: expected an integer"),
    (lambda: tunelock.choose("pkg.mm", "M=1", candidates=CANDIDATES, rank=-1), ValueError,
     "tunelock.choose: rank: -1 is out of range; allowed 0 to 1073741824"),
    (lambda: tunelock.choose("pkg.mm", "M=1", candidates=CANDIDATES, chaos=True, rank=2 ** 64),
     ValueError, "tunelock.choose: rank: 18446744073709551616 is out of range"),
    (lambda: tunelock.choose("pkg.mm", "M=1", candidates=CANDIDATES, rank=True), TypeError,
     "tunelock.choose: rank: expected an integer, got bool"),
    (lambda: tunelock.signature({"kwargs": {"A": 2 ** 64 - 1}, "num_warps": 4, "num_stages": 2}),
     ValueError, "tunelock.signature: config.kwargs.A: 18446744073709551615 is out of range"),
    (lambda: first_call(own_default=2), ValueError,
     "tunelock.first_call: own_default: 2 is out of range; allowed 0 to 1"),
    (lambda: first_call(own_default=True), TypeError,
     "tunelock.first_call: own_default: expected an integer, got bool"),
    (lambda: tunelock.first_call("sm90", "pkg", "mm", "M=1", CANDIDATES, -1, Timed(1, 2)), ValueError,
     "tunelock.first_call: config_count: -1 is out of range"),
    (lambda: tunelock.signature({"kwargs": {"A": float("nan")}, "num_warps": 4, "num_stages": 2}),
     ValueError, "tunelock.signature: config.kwargs.A: nan is not a finite number"),
    (lambda: tunelock.Policy(verify_every=2 ** 64), tunelock.TunelockError,
     "verify_every: invalid value '18446744073709551616'"),
    (lambda: tunelock.Policy(block_sizes={"BLOCK_M": 2 ** 64 - 1}), tunelock.TunelockError,
     "block_sizes: invalid value '18446744073709551615'"),
])
def test_integers_are_checked_against_their_c_type_and_meaning(call, kind, expected):
    refused(kind, call, expected)


def test_valid_integers_of_any_integer_type_cross():
    tunelock.set_device("H200", Index(132), "", "12.8")
    tunelock.set_device(sm_count=INT64_MAX)
    tunelock.set_device(sm_count=0)
    assert tunelock.maybe_verify(Index(3)) is None  # verify_every is 0: no check
    picks = {tunelock.choose("pkg.mm", "M=1", candidates=CANDIDATES, chaos=1, rank=Index(r)).index
             for r in range(2)}
    assert picks == {0, 1}
    assert tunelock.choose("pkg.mm", "M=1", candidates=CANDIDATES, chaos=0).index == CHEAPEST


# 4. What a reader would refuse is refused by the writer.

def test_set_device_refuses_a_negative_sm_count():
    refused(ValueError, lambda: tunelock.set_device(sm_count=-5),
            "tunelock.set_device: sm_count: -5 is out of range; allowed 0 to 9223372036854775807")


@pytest.mark.parametrize("arch, name, key, expected", [
    ("", "", "", "tunelock.first_call: arch: '' is not an architecture tag"),
    ("sm90", "", "M=1", "tunelock.first_call: name: empty kernel name"),
    ("sm90", "mm", "", "tunelock.first_call: key: empty key"),
    ("sm 90", "mm", "M=1", "tunelock.first_call: arch: 'sm 90' is not an architecture tag"),
    ("../sm90", "mm", "M=1", "tunelock.first_call: arch: '../sm90' is not an architecture tag"),
    ("s" * 65, "mm", "M=1", "is not an architecture tag"),
])
def test_record_refuses_what_merge_would_refuse_and_keeps_the_recording(tmp_path, arch, name,
                                                                         key, expected):
    tunelock.install(mode="record", record_path=str(tmp_path / "rec"))
    tunelock.set_device("H200", 132, "", "12.8")
    refused(ValueError, lambda: first_call(arch=arch, name=name, key=key), expected)
    first_call()
    tunelock.flush()
    merged = tunelock.merge([tmp_path / "rec.rank0.json"], tmp_path / "sm90.json")
    assert (merged["arch"], merged["entries"]) == ("sm90", 1)
    assert tunelock.table(tmp_path / "sm90.json")["provenance"]["sm_count"] == 132


@pytest.mark.parametrize("call, expected", [
    (lambda: first_call(arch=""), "tunelock.first_call: arch: '' is not an architecture tag"),
    (lambda: first_call(name=""), "tunelock.first_call: name: empty kernel name"),
    (lambda: first_call(arch="sm90|x"), "tunelock.first_call: arch: 'sm90|x' is not an architecture tag"),
    (lambda: tunelock.choose("", "M=1", candidates=CANDIDATES), "tunelock.choose: kernel: empty kernel name"),
    (lambda: tunelock.choose("pkg.mm", "M=1", candidates=CANDIDATES, arch="sm/90"),
     "tunelock.choose: arch: 'sm/90' is not an architecture tag"),
    (lambda: tunelock.merge(["r.json"], "t.json", arch="a b"), "tunelock.merge: arch: 'a b'"),
    (lambda: tunelock.merge(["r.json"], ""), "tunelock.merge: output: is empty"),
])
def test_names_and_tags_the_engine_files_by_are_checked(call, expected):
    refused(ValueError, call, expected)


# 5. Output paths.

@pytest.mark.parametrize("output, got", [(None, "None"), (5, "int"), (b"t.json", "bytes"),
                                         (["t.json"], "list")])
def test_merge_refuses_an_output_that_is_not_a_path(tmp_path, monkeypatch, record_file, output, got):
    monkeypatch.chdir(tmp_path)
    before = set(os.listdir(tmp_path))
    refused(TypeError, lambda: tunelock.merge([record_file], output),
            f"tunelock.merge: output: expected a path (str or os.PathLike), got {got}")
    assert set(os.listdir(tmp_path)) == before  # no file named None


@pytest.mark.parametrize("call, expected", [
    (lambda: tunelock.convert_table(None, "t.json"), "tunelock.convert_table: input_path"),
    (lambda: tunelock.convert_table("t.json", None), "tunelock.convert_table: output_path"),
    (lambda: tunelock.file_kind(None), "tunelock.file_kind: path"),
    (lambda: tunelock.table(3), "tunelock.table: path"),
    (lambda: tunelock.flush(5), "tunelock.flush: choice_log_prefix"),
    (lambda: tt.write_manifest(None), "tunelock.triton.write_manifest: path"),
])
def test_paths_are_str_or_pathlike(tmp_path, monkeypatch, call, expected):
    monkeypatch.chdir(tmp_path)
    refused(TypeError, call, expected, "expected a path (str or os.PathLike)")
    assert not list(tmp_path.iterdir())


def test_pathlike_outputs_work(tmp_path, record_file):
    assert tunelock.merge(record_file, tmp_path / "sm90.tlb")["entries"] == 1
    tunelock.convert_table(tmp_path / "sm90.tlb", tmp_path / "back.json")
    assert tunelock.file_kind(tmp_path / "back.json").kind == "table"
    tunelock.install(mode="pinned")
    first_call(runner=tunelock.NothingToRun())
    tunelock.flush(tmp_path / "log")
    assert tunelock.file_kind(tmp_path / "log.rank0.json").kind == "choice_log"


# 6. Wrongly typed JSON arguments: a message naming the argument, never the
# JSON library's own words.

@pytest.mark.parametrize("call, kind, expected", [
    (lambda: tunelock.set_device(device_name=5), TypeError,
     "tunelock.set_device: device_name: expected a string, got int"),
    (lambda: tunelock.set_device(driver_version=None), TypeError, "tunelock.set_device: driver_version"),
    (lambda: first_call(candidates="BLOCK_M=64"), TypeError,
     "tunelock.first_call: candidates: expected a list of configs (dicts or triton.Configs), got str"),
    (lambda: first_call(candidates=[{"kwargs": {"A": 1}, "num_warps": object()}]), TypeError,
     "tunelock.first_call: candidates[0].num_warps: expected JSON data"),
    (lambda: first_call(candidates=[{"kwargs": {1: 64}}]), TypeError,
     "tunelock.first_call: candidates[0].kwargs: expected string keys, got int"),
    (lambda: first_call(runner=object()), TypeError,
     "tunelock.first_call: runner: object has no time()"),
    (lambda: tunelock.signature({"kwargs": {"A": 1}, "num_warps": "4", "num_stages": 2}),
     tunelock.TunelockError, "config.num_warps: expected an integer"),
    (lambda: tunelock.signature(42), TypeError, "tunelock.signature: config: expected a config dict"),
    (lambda: first_call(candidates=[{"kwargs": {"A": "x"}}]),
     tunelock.TunelockError, "candidates[0].kwargs.A: expected an integer"),
    (lambda: first_call(arch=90), TypeError, "tunelock.first_call: arch: expected a string, got int"),
    (lambda: tunelock.tuning_key([("M", 1)], [None, 3.5]), None, None),  # str(dtype): accepted
    (lambda: tunelock.tuning_key([(1, 1)]), TypeError,
     "tunelock.tuning_key: key_args[0][0]: expected a string, got int"),
    (lambda: tunelock.choose("pkg.mm", "M=1", candidates=CANDIDATES, chaos="no"), TypeError,
     "tunelock.choose: chaos: expected True or False, got str"),
    (lambda: tunelock.choose("pkg.mm", "M=1", candidates=CANDIDATES, on_miss=None), TypeError,
     "tunelock.choose: on_miss: expected a string, got None"),
    (lambda: tunelock.choose("pkg.mm", "M=1", candidates=CANDIDATES, block_sizes=64), TypeError,
     "tunelock.choose: block_sizes: expected {name: size} or 'NAME=SIZE,...', got int"),
    (lambda: tunelock.choose("pkg.mm", ("M", 1), candidates=CANDIDATES), TypeError,
     "tunelock.choose: key: expected a string, got tuple"),
    (lambda: tunelock.merge(["r.json"], "t.json", source=3), TypeError,
     "tunelock.merge: source: expected a string, got int"),
    (lambda: tunelock.Policy(mode={1, 2}), TypeError,
     "tunelock.Policy: mode: expected a string, a number, a bool, a list or a dict, got set"),
    (lambda: tunelock.Policy(modules=["a", 3]), TypeError,
     "tunelock.Policy: modules[1]: expected a string, got int"),
    (lambda: tunelock.Policy(nondeterministic=42), TypeError, "tunelock.Policy: nondeterministic: expected"),
    (lambda: tunelock.Policy(nondeterministic={"pkg.mm": [3]}), TypeError,
     "tunelock.Policy: nondeterministic['pkg.mm'][0]: expected a config dict"),
    (lambda: tunelock.Policy(over_environment="yes"), TypeError,
     "tunelock.Policy: over_environment: expected True or False, got str"),
    (lambda: tunelock.install("pinned"), TypeError,
     "tunelock.install: policy: expected a tunelock.Policy or None, got str"),
    (lambda: tunelock.install(tunelock.Policy(mode="auto"), mode="pinned"), TypeError,
     "tunelock.install: takes a Policy or keyword fields, not both"),
    (lambda: tt.install(mode=object()), TypeError, "tunelock.triton.install: mode: expected"),
    (lambda: tunelock.observes("pkg", None), TypeError, "tunelock.observes: name: expected a string"),
])
def test_wrongly_typed_arguments_are_named_without_json_exception_text(call, kind, expected):
    if kind is None:
        call()
        return
    refused(kind, call, expected)


def test_any_json_exception_text_left_in_an_engine_message_is_rewritten():
    # Straight through the C ABI, past the Python checks: the engine names
    # the field and the value itself (one device and one timing reader for
    # every file and face), with no JSON library tag left to rewrite.
    status = _native.lib.tunelock_set_device(b'{"device_name": 5}')
    with pytest.raises(tunelock.TunelockError) as error:
        _native.check(status, "tunelock.set_device: device_name")
    assert str(error.value) == "device.device_name: expected a string, got number 5"
    status = _native.lib.tunelock_autotune_configs(b'[{"kwargs": {"A": "x"}}]', None)
    with pytest.raises(tunelock.TunelockError) as error:
        _native.check(status, "tunelock.autotune_configs")
    assert str(error.value) == 'candidates[0].kwargs.A: expected an integer, got string "x"'
    # A message that still carries the tag (the JSON library's parse errors)
    # is rewritten and prefixed with the function and argument.
    rewritten = _native.engine_message(
        "config: not valid JSON ([json.exception.parse_error.101] parse error at line 1)", "tunelock.x: y")
    assert rewritten == "tunelock.x: y: config: not valid JSON (parse error at line 1)"
    assert _native.engine_message("mode: invalid value 'x'", "tunelock.x") == "mode: invalid value 'x'"


# Valid arguments, in every form the functions take, still work.

def test_triton_configs_and_dicts_cross_alike():
    live = [Config({"BLOCK_M": 128, "BLOCK_N": 128}, num_warps=8, num_stages=3),
            Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4, num_stages=2)]
    assert tunelock.signature(live[1]) == tunelock.signature(CANDIDATES[1])
    assert tunelock.choose("pkg.mm", "M=1", candidates=live).index == CHEAPEST
    tunelock.install(mode="pinned")
    assert first_call(candidates=tuple(live), runner=tunelock.NothingToRun()).launched == CHEAPEST
    # on_miss min_cost takes the kernel's own default, given as any integer type
    assert first_call(key="M=3", candidates=tuple(live), runner=tunelock.NothingToRun(),
                      own_default=Index(0)).launched == 0
    assert first_call(key="M=2", candidates=live[:1], runner=tunelock.NothingToRun()).launched == 0


def test_policy_fields_in_every_form_still_resolve(tmp_path):
    policy = tunelock.Policy(mode="pinned", modules=("a.b", "c"), table_path=[tmp_path, str(tmp_path)],
                             block_sizes={"BLOCK_M": 64}, verify_every=3, verify_strict=True,
                             verify_timeout_s=2.5, record_path=tmp_path / "rec",
                             nondeterministic={"pkg.mm": [CANDIDATES[0], "BLOCK_M=64;warps=4;stages=2"]})
    assert (policy.mode, policy.modules, policy.verify_every) == ("pinned", ["a.b", "c"], 3)
    assert policy.table_path == [str(tmp_path)] * 2
    assert policy.nondeterministic.count("pkg.mm@") == 2
    assert tunelock.install(policy).mode == "pinned"
    assert tt.install(mode="auto").mode == "auto"
    assert tunelock.Policy(verify_every=Index(4), over_environment=0).verify_every == 4
    refused(TypeError, lambda: tunelock.Policy(verify_every=object()),
            "tunelock.Policy: verify_every: expected a string, a number, a bool, a list or a dict")
