// The engine's face in the browser: embind functions that take and return
// JSON text, so the page never depends on C++ types. Files arrive as raw
// bytes (a Uint8Array becomes std::string byte for byte) and are parsed once,
// when loaded: a bad file is refused at once and never kept, and later calls
// name loaded files by id. Errors come back as {"error": "..."}, never as
// exceptions into JavaScript.
#include <emscripten/bind.h>

#include <map>
#include <memory>
#include <stdexcept>

#include "preview.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/decision/policy_sources.hpp"
#include "tunelock/decision/run_preview.hpp"
#include "tunelock/io/file_kind.hpp"
#include "tunelock/logs/choice_log.hpp"
#include "tunelock/logs/choice_log_file.hpp"
#include "tunelock/logs/launch_compare.hpp"
#include "tunelock/logs/run_compare.hpp"
#include "tunelock/model/candidates.hpp"
#include "tunelock/records/audit_report.hpp"
#include "tunelock/records/record_file.hpp"
#include "tunelock/records/timings_sidecar.hpp"
#include "tunelock/tables/table_files.hpp"

namespace {

using nlohmann::json;
using namespace tunelock;

std::map<int, std::unique_ptr<Table>> tables;
std::map<int, CandidateManifest> manifests;
std::map<int, RecordFile> records;  // without timings: a sidecar may come later
struct Sidecar {
  std::string name, bytes;
};
std::map<int, Sidecar> sidecars;  // checked when loaded, applied per report
std::map<int, std::pair<std::string, ChoiceLogFile>> logs;
std::map<int, AuditFile> audits;
std::map<int, LaunchLog> launch_logs;
int next_id = 1;

// A page must stay responsive: refuse what could not be previewed anyway.
constexpr std::size_t kMaxBytes = 256u << 20;

// `file`, when the call reads one, names it in an out-of-memory message.
std::string guarded(const std::function<json()>& body, const std::string& file = {}) {
  try {
    return body().dump();
  } catch (const Error& e) {
    return json{{"error", e.what()}}.dump();
  } catch (const json::exception& e) {
    return json{{"error", std::string("malformed request: ") + e.what()}}.dump();
  } catch (const std::out_of_range&) {
    return json{{"error", "that file is no longer loaded; load it again"}}.dump();
  } catch (const std::bad_alloc&) {
    return json{{"error", (file.empty() ? std::string("the file") : file) +
                              ": out of memory: too large to preview in this page (the CLI's "
                              "`tunelock table show` reads it)"}}
        .dump();
  }
}

void check_size(const std::string& name, const std::string& bytes) {
  if (bytes.size() > kMaxBytes)
    throw Error(name + ": " + std::to_string(bytes.size() >> 20) +
                " MB is more than this page previews (256 MB)");
}

// What a dropped file is, so the page hands it to the right loader:
// {"kind", "encoding"}, or {"kind": "unknown", "problem"} (detected_file_to_json).
std::string file_kind(const std::string& name, const std::string& bytes) {
  return guarded(
      [&] {
        check_size(name, bytes);
        return detected_file_to_json(detect_file_kind(name, bytes));
      },
      name);
}

// {"stem", "run" (null when not `<run>.rank<N>.<ending>`), "rank" (null likewise)}:
// how the page pairs a record with its sidecar and groups choice logs by run.
std::string rank_file_name(const std::string& name) {
  return guarded([&] {
    const RankFileName parsed = parse_rank_file_name(name);
    return json{{"stem", parsed.stem},
                {"run", parsed.rank < 0 ? json() : json(parsed.run)},
                {"rank", parsed.rank < 0 ? json() : json(parsed.rank)}};
  });
}

std::string load_table(const std::string& name, const std::string& bytes) {
  return guarded(
      [&] {
        check_size(name, bytes);
        std::unique_ptr<Table> table = table_from_bytes(bytes, name);
        json summary = preview::table_summary(*table);
        summary["id"] = next_id;
        tables[next_id++] = std::move(table);
        return summary;
      },
      name);
}

std::string load_candidates(const std::string& name, const std::string& text) {
  return guarded(
      [&] {
        check_size(name, text);
        CandidateManifest manifest = candidates_from_json(text, name);
        json summary = preview::manifest_summary(manifest);
        summary["id"] = next_id;
        manifests[next_id++] = std::move(manifest);
        return summary;
      },
      name);
}

std::string decide(int table_id, int candidates_id, const std::string& kernel,
                   const std::string& key, const std::string& policy) {
  return guarded([&] {
    auto manifest = manifests.find(candidates_id);
    if (manifest == manifests.end()) throw Error("load a candidate manifest first");
    auto table = tables.find(table_id);
    const Table* chosen = table == tables.end() ? nullptr : table->second.get();
    // A bare name unique in the manifest is its qualified name, so the
    // table is searched under both, as a run would.
    const std::string qualified = manifest->second.resolve(kernel, "candidates");
    json out = preview::decide(chosen, manifest->second.find(qualified, "candidates").configs,
                               qualified, key, json::parse(policy));
    out["kernel"] = qualified;
    return out;
  });
}

// The qualified-then-bare name rule for the page's panels (preview.hpp).
// {"kernel": the manifest's name for a table's kernel name, or null}
std::string manifest_kernel(int candidates_id, const std::string& table_kernel) {
  return guarded([&] {
    return json{{"kernel", preview::manifest_kernel(manifests.at(candidates_id), table_kernel)}};
  });
}

// [key, ...]: the keys a loaded table holds for a (qualified or bare) kernel name.
std::string table_keys(int table_id, const std::string& kernel) {
  return guarded([&] { return preview::table_keys(*tables.at(table_id), kernel); });
}

std::string diff_tables(int a, int b) {
  return guarded([&] {
    if (!tables.count(a) || !tables.count(b)) throw Error("pick two loaded tables");
    return preview::diff(*tables.at(a), *tables.at(b));
  });
}

std::string load_record(const std::string& name, const std::string& bytes) {
  return guarded(
      [&] {
        check_size(name, bytes);
        RecordFile record = record_from_json(bytes, name);
        json out{{"id", next_id}, {"keys", record.winners.size()}};
        records[next_id++] = std::move(record);
        return out;
      },
      name);
}

std::string load_timings(const std::string& name, const std::string& bytes) {
  return guarded(
      [&] {
        check_size(name, bytes);
        RecordFile probe;
        add_timings(probe, bytes, name);  // refuses a bad sidecar now, naming it
        json out{{"id", next_id}, {"rank", probe.rank}, {"keys", probe.timings.size()}};
        sidecars[next_id++] = {name, bytes};
        return out;
      },
      name);
}

std::string load_log(const std::string& name, const std::string& bytes) {
  return guarded(
      [&] {
        check_size(name, bytes);
        ChoiceLogFile log = choice_log_from_bytes(bytes, name);
        json out{{"id", next_id},
                 {"rank", log.rank},
                 {"entries", log.entries.size()},
                 {"digest", choice_digest(log.entries)}};
        logs[next_id++] = {name, std::move(log)};
        return out;
      },
      name);
}

// pairs: [{"record": id, "timings": id or null}]
std::string report(const std::string& pairs) {
  return guarded([&] {
    std::vector<RecordFile> files;
    for (const json& pair : json::parse(pairs)) {
      RecordFile record = records.at(pair.at("record").get<int>());
      if (pair.contains("timings") && pair["timings"].is_number()) {
        const Sidecar& sidecar = sidecars.at(pair["timings"].get<int>());
        add_timings(record, sidecar.bytes, sidecar.name);
      }
      files.push_back(std::move(record));
    }
    return preview::report(files);
  });
}

std::vector<ChoiceLogFile> logs_of(const json& ids) {
  std::vector<ChoiceLogFile> out;
  for (const json& id : ids) out.push_back(logs.at(id.get<int>()).second);
  return out;
}

std::string verify_logs(const std::string& ids) {
  return guarded([&] {
    std::vector<tunelock::NamedLog> named;
    for (const json& id : json::parse(ids)) {
      const auto& [name, log] = logs.at(id.get<int>());
      named.emplace_back(name, &log);
    }
    return preview::verify_logs(named);
  });
}

std::string compare_run_logs(const std::string& a, const std::string& b) {
  return guarded([&] {
    return run_comparison_to_json(
        tunelock::compare_runs(logs_of(json::parse(a)), logs_of(json::parse(b))));
  });
}

// policy: {"block_sizes": "BLOCK_M=64,..."}
std::string preview_logged_run(const std::string& ids, int table_id, int candidates_id,
                               const std::string& policy) {
  return guarded([&] {
    auto manifest = manifests.find(candidates_id);
    if (manifest == manifests.end()) throw Error("load a candidate manifest first");
    auto table = tables.find(table_id);
    Policy checked;  // validate() checks the block sizes as the CLI does
    checked.block_sizes =
        parse_block_sizes(json::parse(policy).value("block_sizes", ""), "block sizes");
    checked.validate();
    const RunPreviewRules rules{table == tables.end() ? nullptr : table->second.get(),
                                &manifest->second, checked.block_sizes};
    return run_preview_to_json(tunelock::preview_run(logs_of(json::parse(ids)), rules));
  });
}

// An audit run's file (audit_file.hpp): {"id", "rank", "entries"}.
std::string load_audit(const std::string& name, const std::string& bytes) {
  return guarded(
      [&] {
        check_size(name, bytes);
        AuditFile file = audit_from_json(bytes, name);
        json summary = {{"id", next_id}, {"rank", file.rank}, {"entries", file.entries.size()}};
        audits[next_id++] = std::move(file);
        return summary;
      },
      name);
}

// `tunelock table audit` over the loaded audit files: the report's JSON plus "text".
std::string audit_files_report(const std::string& ids, double max_regret) {
  return guarded([&] {
    std::vector<AuditFile> files;
    for (const json& id : json::parse(ids)) {
      const auto found = audits.find(id.get<int>());
      if (found == audits.end()) throw Error("that audit file is no longer loaded");
      files.push_back(found->second);
    }
    if (!(max_regret >= 0)) throw Error("max regret: expected a percentage, 0 or more");
    const AuditReport report = audit_report(files, max_regret);
    json out = audit_report_json(report);
    out["text"] = audit_report_text(report);
    return out;
  });
}

// A watched run's launch log (launch_log.hpp), JSON or binary:
// {"id", "rank", "steps", "launches", "program"}.
std::string load_launches(const std::string& name, const std::string& bytes) {
  return guarded(
      [&] {
        check_size(name, bytes);
        LaunchLog log = launch_log_from_bytes(bytes, name);
        json summary = {{"id", next_id},
                        {"rank", log.rank},
                        {"steps", log.steps.size()},
                        {"launches", log.total_launches()},
                        {"program", log.program}};
        launch_logs[next_id++] = std::move(log);
        return summary;
      },
      name);
}

// `tunelock watch compare` over the loaded launch logs, in the order given
// (the first is the reference): the comparison's JSON plus "text" and "exit_code".
std::string compare_launches(const std::string& ids) {
  return guarded([&] {
    std::vector<LaunchLog> loaded;
    for (const json& id : json::parse(ids)) {
      const auto found = launch_logs.find(id.get<int>());
      if (found == launch_logs.end()) throw Error("that launch log is no longer loaded");
      loaded.push_back(found->second);
    }
    const std::vector<LaunchComparison> comparisons = compare_launch_logs(loaded);
    json out = launch_comparisons_to_json(comparisons);
    out["text"] = launch_comparisons_to_text(comparisons);
    out["exit_code"] = launch_comparison_exit_code(comparisons);
    return out;
  });
}

std::string decide_case(const std::string& c) {
  return guarded([&] { return preview::decide_case(json::parse(c)); });
}
double decisions_per_second(const std::string& cases, int repeats) {
  return preview::decisions_per_second(json::parse(cases), repeats);
}
void unload(int id) {
  tables.erase(id);
  manifests.erase(id);
  records.erase(id);
  sidecars.erase(id);
  logs.erase(id);
  audits.erase(id);
  launch_logs.erase(id);
}

}  // namespace

EMSCRIPTEN_BINDINGS(tunelock) {
  emscripten::function("fileKind", &file_kind);
  emscripten::function("rankFileName", &rank_file_name);
  emscripten::function("loadTable", &load_table);
  emscripten::function("loadCandidates", &load_candidates);
  emscripten::function("decide", &decide);
  emscripten::function("manifestKernel", &manifest_kernel);
  emscripten::function("tableKeys", &table_keys);
  emscripten::function("diffTables", &diff_tables);
  emscripten::function("loadRecord", &load_record);
  emscripten::function("loadTimings", &load_timings);
  emscripten::function("loadLog", &load_log);
  emscripten::function("report", &report);
  emscripten::function("loadAudit", &load_audit);
  emscripten::function("auditReport", &audit_files_report);
  emscripten::function("loadLaunches", &load_launches);
  emscripten::function("compareLaunches", &compare_launches);
  emscripten::function("compareRuns", &compare_run_logs);
  emscripten::function("previewRun", &preview_logged_run);
  emscripten::function("verifyLogs", &verify_logs);
  emscripten::function("decideCase", &decide_case);
  emscripten::function("decisionsPerSecond", &decisions_per_second);
  emscripten::function("unload", &unload);
}
