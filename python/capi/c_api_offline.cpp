// Offline tools through the C ABI: one decision with its explanation,
// merge and report of record files, what a file is, and table files. The
// answers depend on the request alone, as `tunelock choose/merge/report/table` do.
#include <filesystem>

#include <algorithm>

#include "c_api_support.hpp"
#include "tunelock/base/notices.hpp"
#include "tunelock/c_api.h"
#include "tunelock/decision/decision.hpp"
#include "tunelock/decision/policy_sources.hpp"
#include "tunelock/decision/selection.hpp"
#include "tunelock/io/file_kind.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/logs/choice_log_file.hpp"
#include "tunelock/logs/table_coverage.hpp"
#include "tunelock/model/candidates.hpp"
#include "tunelock/records/audit_report.hpp"
#include "tunelock/records/merge.hpp"
#include "tunelock/records/merge_report.hpp"
#include "tunelock/records/record_file.hpp"
#include "tunelock/tables/table_binary.hpp"
#include "tunelock/tables/table_files.hpp"
#include "tunelock/tables/table_format.hpp"
#include "tunelock/tables/table_invariance.hpp"
#include "tunelock/tables/table_json.hpp"

using namespace tunelock;
using namespace tunelock::c_api;
using nlohmann::json;

namespace {

std::string string_field(const json& request, const char* name, const std::string& fallback) {
  const auto found = request.find(name);
  if (found == request.end() || found->is_null()) return fallback;
  if (!found->is_string()) throw Error(std::string(name) + ": expected a string");
  return found->get<std::string>();
}

std::vector<std::string> paths_field(const json& request, const char* name) {
  const auto found = request.find(name);
  if (found == request.end() || found->is_null()) return {};
  if (!found->is_array()) throw Error(std::string(name) + ": expected a list of paths");
  std::vector<std::string> out;
  for (const json& p : *found) {
    if (!p.is_string()) throw Error(std::string(name) + ": expected a list of paths");
    out.push_back(p.get<std::string>());
  }
  return out;
}

std::vector<Config> candidates_of(const json& request, const std::string& kernel) {
  if (request.contains("candidates_file")) {
    const std::string path = string_field(request, "candidates_file", "");
    return candidates_from_json(read_file(path), path).find(kernel, path).configs;
  }
  const auto list = request.find("candidates");
  if (list == request.end() || !list->is_array() || list->empty())
    throw Error("candidates: expected a non-empty list of configs (or candidates_file)");
  std::vector<Config> out;
  for (std::size_t i = 0; i < list->size(); ++i)
    out.push_back(config_from_json((*list)[i], "candidates[" + std::to_string(i) + "]"));
  return out;
}

// The record arguments as `tunelock merge` takes them: files, and
// directories holding a run's `<prefix>.rank<N>.json` files.
std::vector<RecordFile> records_of(const json& request) {
  const std::vector<std::filesystem::path> paths =
      expand_record_arguments(paths_field(request, "records"));
  if (paths.empty()) throw Error("records: no record files given");
  return load_record_files(paths);
}

}  // namespace

extern "C" {

int tunelock_choose(const char* request_json, char** result_json) {
  return guarded([&] {
    const json request = json_of(request_json, "request");
    if (!request.is_object()) throw Error("request: expected a JSON object");
    const std::string kernel_name = string_field(request, "kernel", "");
    if (kernel_name.empty()) throw Error("kernel: missing");
    const std::string key = string_field(request, "key", "");
    const std::vector<Config> candidates = candidates_of(request, kernel_name);
    const std::vector<std::string> tables = paths_field(request, "tables");
    std::string arch = string_field(request, "arch", "");
    if (arch.empty() && !tables.empty() && !std::filesystem::is_directory(tables.front()))
      arch = std::string(load_table_file(tables.front())->arch());
    if (arch.empty()) arch = "unknown";
    check_arch_name(arch, "arch");

    // The same validation as a policy's: names, values, duplicates, on_miss.
    std::vector<std::pair<std::string, std::string>> pairs = {
        {"on_miss", string_field(request, "on_miss", "min_cost")},
        {"block_sizes", string_field(request, "block_sizes", "")}};
    const Policy checked = policy_from_key_values(pairs);
    DecisionRequest decision_request;
    decision_request.arch = arch;
    decision_request.kernel = KernelId::parse(kernel_name);
    decision_request.key = key;
    decision_request.candidates = candidates;
    decision_request.block_sizes = checked.block_sizes;
    decision_request.on_miss = checked.on_miss;
    decision_request.chaos_rank = chaos_rank_of(
        request.value("chaos", false), request.value("rank", std::int64_t{0}), "chaos", "rank");
    std::unique_ptr<Table> table =
        decision_request.chaos_rank ? nullptr : load_table_for_arch(arch, tables, false);
    decision_request.table = table.get();
    decision_request.notices = &process_notices();  // warned once per process, as a run does
    decision_request.collect_warnings = false;
    const Decision decision = make_decision(decision_request);
    json out = decision_to_json(decision_request, decision);
    out["arch"] = arch;
    put(result_json, out.dump());
  });
}

int tunelock_merge(const char* request_json, char** result_json) {
  return guarded([&] {
    const json request = json_of(request_json, "request");
    const std::vector<RecordFile> records = records_of(request);
    const std::string output = string_field(request, "output", "");
    if (output.empty()) throw Error("output: missing (the table file to write)");
    refuse_output_among_inputs(output, records);
    const MergeResult result = merge_records(records, string_field(request, "arch", ""),
                                             string_field(request, "source", ""));
    write_table_file(*result.table, output);
    put(result_json,
        json{{"arch", std::string(result.table->arch())},
             {"entries", result.table->entry_count()},
             {"disagreements", std::count_if(result.disagreements.begin(),
                                             result.disagreements.end(), is_disagreement)},
             {"report", disagreement_report(result.disagreements)}}
            .dump());
  });
}

int tunelock_report(const char* request_json, char** result_json) {
  return guarded([&] {
    const std::vector<KeyVerdict> flagged =
        reported_verdicts(records_of(json_of(request_json, "request")));
    json list = json::array();
    for (const KeyVerdict& v : flagged) list.push_back(verdict_to_json(v));
    put(result_json,
        json{{"report", disagreement_report(flagged)}, {"disagreements", list}}.dump());
  });
}

int tunelock_table_coverage(const char* request_json, char** result_json) {
  return guarded([&] {
    const json request = json_of(request_json, "request");
    if (!request.is_object())
      throw Error("table coverage: expected {\"table\": path, \"logs\": [paths]}");
    const std::string table_path = string_field(request, "table", "");
    if (table_path.empty()) throw Error("table coverage: table: expected a table file's path");
    const std::vector<std::string> paths = paths_field(request, "logs");
    if (paths.empty()) throw Error("table coverage: logs: expected one choice log or more");
    const auto table = load_table_file(table_path);
    std::vector<ChoiceLogFile> logs;
    for (const std::string& path : paths)
      logs.push_back(choice_log_from_bytes(read_file(path), path));
    put(result_json, coverage_json(table_coverage(*table, logs, paths)).dump());
  });
}

int tunelock_audit_report(const char* request_json, char** result_json) {
  return guarded([&] {
    const json request = json_of(request_json, "request");
    const json* paths = request.is_object() ? &request["audits"] : nullptr;
    if (!paths || !paths->is_array())
      throw Error("audit report: expected {\"audits\": [paths], \"max_regret\": percent}");
    std::vector<AuditFile> files;
    for (const json& path : *paths) {
      if (!path.is_string()) throw Error("audit report: audits: expected file paths");
      files.push_back(load_audit_file(path.get<std::string>()));
    }
    const json max = request.value("max_regret", json(5.0));
    if (!max.is_number() || !(max.get<double>() >= 0))
      throw Error("audit report: max_regret: expected a percentage, 0 or more");
    const AuditReport report = audit_report(files, max.get<double>());
    json out = audit_report_json(report);
    out["text"] = audit_report_text(report);
    put(result_json, out.dump());
  });
}

int tunelock_file_kind(const char* path, char** kind_json) {
  return guarded([&] {
    const std::string name = text_of(path, "path");
    put(kind_json, detected_file_to_json(detect_file_kind(name, read_file(name))).dump());
  });
}

int tunelock_table_json(const char* path, char** table_json) {
  return guarded([&] { put(table_json, table_to_json(*load_table_file(text_of(path, "path")))); });
}

int tunelock_table_convert(const char* input, const char* output) {
  return guarded([&] {
    const std::unique_ptr<Table> table = load_table_file(text_of(input, "input"));
    const std::filesystem::path out(text_of(output, "output"));
    write_table_file(*table, out);
  });
}

int tunelock_table_invariance(const char* table_path, char** report_json) {
  return guarded([&] {
    const auto table = load_table_file(text_of(table_path, "table_path"));
    put(report_json, invariance_report_to_json(invariance_report(*table)).dump());
  });
}

}  // extern "C"
