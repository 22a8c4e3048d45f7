"""The offline tools, as the CLI has them: one decision with its
explanation (choose), merge and report of records, the audit report, and
reading, identifying and converting tables."""
import ctypes
import json
from collections import namedtuple
from collections.abc import Iterable, Mapping
from typing import Any, Dict, Optional, Sequence, Union

from . import _arguments as arguments
from ._arguments import PathArgument
from ._native import call_json, call_text, check, encode, lib

from ._api import _as_text
from ._hooks import Choice, Config

FileKind = namedtuple("FileKind", ["kind", "encoding", "problem"], defaults=[None])


def audit(audits: Union[PathArgument, Iterable[PathArgument]],
          max_regret: float = 5.0) -> Dict[str, Any]:
    """What a table costs today, from TUNELOCK_MODE=audit runs' files
    (`<prefix>.rank<N>.audit.json`), as `tunelock table audit` prints it:
    {"rows": [{kernel, key, pinned, pinned_ms, fastest, fastest_ms,
    regret_pct, stale, bits_changed, calls, ...}], "total_regret_pct",
    "exit_code" (1 over max_regret % or on changed bits), "text"}."""
    function = "audit"
    request = {"audits": arguments.paths(function, "audits", audits),
               "max_regret": arguments.number(function, "max_regret", max_regret, 0.0)}
    return call_json("tunelock_audit_report", encode(json.dumps(request)), where="tunelock.audit")


def choose(kernel: str, key: str, candidates: Optional[Sequence[Config]] = None,
           candidates_file: Optional[PathArgument] = None,
           tables: Union[PathArgument, Iterable[PathArgument], None] = (),
           arch: Optional[str] = None, on_miss: str = "min_cost",
           block_sizes: Union[Mapping[str, int], str, None] = None, chaos: bool = False,
           rank: int = 0) -> Choice:
    """One decision offline, with the rules' own explanation (`tunelock choose --explain`).
    `tables` is a list of table files or directories (one path is a list of one)."""
    function = "choose"
    if candidates is not None and candidates_file is not None:
        raise TypeError("tunelock.choose: candidates, candidates_file: give one, not both")
    if block_sizes is not None and not isinstance(block_sizes, (str, Mapping)):
        raise TypeError("tunelock.choose: block_sizes: expected {name: size} or 'NAME=SIZE,...', "
                        f"got {arguments.type_name(block_sizes)}")
    request = {
        "kernel": arguments.kernel_name(function, "kernel", kernel),
        "key": arguments.text(function, "key", key),
        "tables": arguments.paths(function, "tables", tables),
        "arch": None if arch is None else arguments.arch(function, "arch", arch),
        "on_miss": arguments.text(function, "on_miss", on_miss),
        "chaos": arguments.flag(function, "chaos", chaos),
        "rank": arguments.integer(function, "rank", rank, 0, arguments.MAX_RANK),
        "block_sizes": _as_text(function, "block_sizes", block_sizes) if block_sizes else "",
    }
    if candidates_file is not None:
        request["candidates_file"] = arguments.path(function, "candidates_file", candidates_file)
    else:
        request["candidates"] = ([] if candidates is None
                                 else arguments.configs(function, "candidates", candidates))
    result = call_json("tunelock_choose", encode(json.dumps(request)), where="tunelock.choose")
    return Choice(result["index"], result["signature"], result["reason"], result["explanation"])


def merge(records: Union[PathArgument, Iterable[PathArgument]], output: PathArgument,
          arch: Optional[str] = None, source: Optional[str] = None) -> Dict[str, Any]:
    """Record files -> a table at `output` (.tlb binary, else JSON), as `tunelock merge`.
    `records` is a list of record files or directories (one path is a list of one)."""
    function = "merge"
    request = {
        "records": arguments.paths(function, "records", records),
        "output": arguments.path(function, "output", output),
        "arch": None if arch is None else arguments.arch(function, "arch", arch),
        "source": arguments.optional_text(function, "source", source),
    }
    return call_json("tunelock_merge", encode(json.dumps(request)), where="tunelock.merge")


def report(records: Union[PathArgument, Iterable[PathArgument]]) -> Dict[str, Any]:
    """Where ranks' record files disagree, and nondeterministic candidates."""
    request = {"records": arguments.paths("report", "records", records)}
    return call_json("tunelock_report", encode(json.dumps(request)), where="tunelock.report")


def coverage(table: PathArgument, logs: Union[PathArgument, Iterable[PathArgument]]) -> Dict[str, Any]:
    """The keys the runs' choice logs (TUNELOCK_CHOICE_LOG files) needed that
    `table` does not answer by an entry, as `tunelock table coverage`: a
    dict with "covered" (False when any), "needed", "answered" and "misses",
    each {"kernel", "key", "gap" ("fallback", "stale" or "identity"),
    "launched", "ranks", ...}. For a CI gate: assert result["covered"]."""
    function = "coverage"
    request = {"table": arguments.path(function, "table", table),
               "logs": arguments.paths(function, "logs", logs)}
    return call_json("tunelock_table_coverage", encode(json.dumps(request)),
                     where="tunelock.coverage")


def file_kind(path: PathArgument) -> FileKind:
    """What a tunelock file is, told from its name and bytes as the CLI and the page tell it:
    FileKind(kind, encoding, problem). kind is "table", "manifest", "record", "timings",
    "choice_log", "audit", "launches", "moe_configs" (a fused-MoE config file), or "unknown"
    (problem then says why); encoding is "json" or "binary"
    (None when unknown). Raises TunelockError when the file cannot be read."""
    result = call_json("tunelock_file_kind", encode(arguments.path("file_kind", "path", path)))
    return FileKind(result["kind"], result["encoding"], result.get("problem"))


def table(path: PathArgument) -> Dict[str, Any]:
    """A table file (JSON or binary) as a dict, in canonical form."""
    return json.loads(call_text("tunelock_table_json", encode(arguments.path("table", "path", path))))


def invariance(path: PathArgument) -> Dict[str, Any]:
    """The batch-invariance gate of a table file, as `tunelock table
    invariance` gives it: {"passes": bool, "kernels": [{"kernel", "verdict"
    ("proven", "no batch dim", "extrapolated", "unproven"), "dim", "proven"
    (sizes), "variant" (batch-variant configs, never pinned), "unproven"
    (keys), "groups"}]}. "passes" is False on anything short of proven."""
    return call_json("tunelock_table_invariance",
                     encode(arguments.path("invariance", "path", path)),
                     where="tunelock.invariance")


def convert_table(input_path: PathArgument, output_path: PathArgument) -> None:
    check(lib.tunelock_table_convert(encode(arguments.path("convert_table", "input_path", input_path)),
                                     encode(arguments.path("convert_table", "output_path",
                                                           output_path))))


def import_files(paths: Union[PathArgument, Sequence[PathArgument]], arch: str,
                 output: PathArgument) -> int:
    """Other tools' tuning files into one table file, as `tunelock import`
    does: fused-MoE config files (vLLM, SGLang), or folders of them, for
    `arch`. Returns the entries imported."""
    function = "import_files"
    items = arguments.paths(function, "paths", paths)
    entries = ctypes.c_int64(0)
    check(lib.tunelock_import(encode(json.dumps(items)), encode(arguments.arch(function, "arch",
                                                                                arch)),
                              encode(arguments.path(function, "output", output)),
                              ctypes.byref(entries)))
    return entries.value


def export_files(table_path: PathArgument, folder: PathArgument) -> int:
    """A table's entries back into the files other tools read, as `tunelock
    export` does (a file there that differs is refused). Returns how many."""
    function = "export_files"
    files = ctypes.c_int64(0)
    check(lib.tunelock_export(encode(arguments.path(function, "table_path", table_path)),
                              encode(arguments.path(function, "folder", folder)),
                              ctypes.byref(files)))
    return files.value
