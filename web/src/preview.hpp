// What the browser preview asks of the engine, as JSON in and JSON out:
// the same functions back the wasm bindings and the native side of the
// parity test, so both platforms run exactly this code.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tunelock/logs/choice_log_file.hpp"
#include "tunelock/model/candidates.hpp"
#include "tunelock/records/record_file.hpp"
#include "tunelock/tables/table.hpp"
#include "tunelock/verify/verify.hpp"

namespace tunelock::preview {

// {"arch", "entries", "source", "device", "kernels": {name: [keys]}}
nlohmann::json table_summary(const Table& table);

// {"kernels": {qualified: {"key": [...], "count": N}}}
nlohmann::json manifest_summary(const CandidateManifest& manifest);

// The qualified-then-bare name rule of kernel_id.hpp (table_names), as the
// page's Table contents and Decision panels need it, so no page script
// spells it:
// the manifest's kernel whose entries a table files under `table_kernel`,
// its qualified name before a bare one (the order table_names tries them),
// then the manifest's order; null when it lists none (or lists one
// kernel for any name).
nlohmann::json manifest_kernel(const CandidateManifest& manifest, std::string_view table_kernel);

// The keys `table` holds for `kernel` (typed qualified or bare) under each
// name a lookup tries, in that order, each once: [key, ...].
nlohmann::json table_keys(const Table& table, const std::string& kernel);

// policy: {"on_miss": "min_cost"|"error", "block_sizes": "BLOCK_M=64,...",
//          "chaos": bool, "rank": N, "arch": "sm90"}
// -> {"index", "signature", "reason", "explanation": [...],
//     "candidates": [{"index", "signature", "cost": [block, warps], "chosen"}] (cheapest first),
//     "stale": [{"kernel", "key", "signature"}], "warnings": [...]}
// or {"error": "..."} (on_miss=error misses and bad input).
nlohmann::json decide(const Table* table, const std::vector<Config>& candidates,
                      const std::string& kernel, const std::string& key,
                      const nlohmann::json& policy);

// {"arch": [a, b] when they differ, "added"|"removed"|"changed": [{"kernel", "key", "before",
// "after"}]}
nlohmann::json diff(const Table& a, const Table& b);

// Record files with their timing sidecars, already read (bytes never pass
// through JSON text) -> {"disagreements": [verdict_to_json of each of
// reported_verdicts, as `tunelock report --json` prints them],
// "timings": {"arch|kernel|key": {signature: [[rank, ms], ...]}}, "text"}
nlohmann::json report(const std::vector<RecordFile>& records);

// One run's ranks: (file name, log) -> {"ranks": [{"name", "rank", "entries", "digest"}],
// "agreed", "report"}
nlohmann::json verify_logs(const std::vector<NamedLog>& logs);

// The digest of {entry: value} (as the run computes it).
std::string digest(const nlohmann::json& entries);

// One self-contained case, for parity between platforms:
// {"table": JSON text or null, "candidates": JSON text, "kernel", "key",
//  "policy": {...}, "log": {entry: value}} -> decide(...) plus "digest".
nlohmann::json decide_case(const nlohmann::json& c);

// Decisions per second over `cases` (parsed once), each decided `repeats`
// times: the figure compared between wasm and native.
double decisions_per_second(const nlohmann::json& cases, int repeats);

}  // namespace tunelock::preview
