// What a tunelock file is, from its name and bytes: a table, a candidate
// manifest, a record file, a timing sidecar, a choice log or an audit file, in JSON or in
// binary (FlatBuffers) form. The one statement of that rule for every face:
// the table search, the CLI and Python (which skip sidecars given beside
// their records), and the page (which routes a dropped file to its reader).
//
// Binary forms are told by their FlatBuffers file identifier (TLTB, TLRT,
// TLCL, TLLN at byte 4); JSON forms by their top-level members, read with a
// streaming scan that stops as soon as they tell (a large file is not
// parsed twice); the name decides only where the bytes cannot tell. Only
// the kind is detected: the kind's reader still checks the whole file and
// names any problem in it.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tunelock {

enum class FileKind {
  unknown,      // none of the below: DetectedFile::problem says why
  table,        // .tlb, or JSON {"arch", "kernels": {kernel: {key: config}}} (Megatron's too)
  manifest,     // JSON {"configs": [...]} or {"kernels": {qualified: {"key", "configs": [...]}}}
  record,       // JSON {arch: {qualified: {key: config}}} (Megatron's record layout)
  timings,      // a record file's timing sidecar: .timings.tlrt, or JSON {"timings", ...}
  choice_log,   // .tlcl, or JSON {"rank", "entries", "digest"}
  audit,        // an audit run's JSON {"format_version", "rank", "device", "entries": [...]}
  launches,     // a watched run's launch log: .launches.tlln, or JSON {"kernels": [...], "steps"}
  moe_configs,  // a fused-MoE config file (vLLM, SGLang): JSON {"<batch size>": {config}, ...}
};

enum class FileEncoding { json, binary };

struct DetectedFile {
  FileKind kind = FileKind::unknown;
  FileEncoding encoding = FileEncoding::json;  // meaningful for a known kind only
  // For FileKind::unknown: what is wrong, naming the file, and what was
  // expected (an Error's message). Empty for a known kind.
  std::string problem;
};

// The kind of the file `name` (a file name or path, for its extension and
// for messages) holding `bytes`. Never throws for bad bytes: an empty file,
// garbage, or JSON of no tunelock layout is FileKind::unknown. Bytes that
// are only partly right (a truncated binary table, a table's JSON cut
// short) are that kind, so its reader reports the damage.
DetectedFile detect_file_kind(std::string_view name, std::string_view bytes);

// "table", "manifest", "record", "timings", "choice_log", "audit", "launches" or "unknown": the
// names the page and the Python package use.
std::string_view to_string(FileKind kind);
// "json" or "binary".
std::string_view to_string(FileEncoding encoding);
// For messages: "binary table", "JSON choice log", "candidate manifest".
std::string describe(const DetectedFile& file);

// For a reader, before it reads a field: an Error "ORIGIN is a JSON choice
// log, not a record file: READERS" when the bytes are plainly another kind
// of tunelock file, so a file given to the wrong command is named as what
// it is (records and choice logs share the `<prefix>.rank<N>.json` shape).
// `readers` says who reads the expected kind and where it comes from.
// Bytes of no known kind are left to the reader, which names the problem.
void require_file_kind(const std::string& origin, std::string_view bytes, FileKind expected,
                       std::string_view readers);

// {"kind", "encoding"}, or {"kind": "unknown", "encoding": null, "problem"}.
nlohmann::json detected_file_to_json(const DetectedFile& file);

}  // namespace tunelock
