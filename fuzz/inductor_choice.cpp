// A torch.compile decision as the engine meets it: the input is the
// candidates as tunelock_first_call receives them (a JSON array of configs,
// Inductor's with an "algorithm": a template's name or an ATen call), a
// table (JSON or .tlb) and the tuning key's text, cut at separator lines
// (split_input.hpp). The candidates are read by the C ABI's own reader;
// the decision is taken with and without a kernel's own default, logged,
// recorded with timings and merged. Every form the config passes through
// (signature, JSON, both table forms, both choice-log and sidecar forms)
// must give it back unchanged, or the fuzzer aborts: a lost algorithm
// launches another kernel.
#include <cstdlib>

#include "c_api_support.hpp"
#include "fuzz_target.hpp"
#include "io/json_checks.hpp"
#include "split_input.hpp"
#include "tunelock/decision/decision.hpp"
#include "tunelock/logs/choice_log.hpp"
#include "tunelock/logs/choice_log_file.hpp"
#include "tunelock/records/merge.hpp"
#include "tunelock/records/timings_sidecar.hpp"
#include "tunelock/tables/table_binary.hpp"
#include "tunelock/tables/table_files.hpp"
#include "tunelock/tables/table_json.hpp"

namespace {

using namespace tunelock;

void require(bool holds) {
  if (!holds) std::abort();
}

// The table's every form reads back as the table.
void check_table_forms(const Table& table) {
  const std::string json = table_to_json(table);
  require(table_to_json(*table_from_binary(table_to_binary(table), "t.tlb")) == json);
  require(table_to_json(*table_from_json(json, "t.json")) == json);
}

// The chosen configs, logged as a run logs them, read back from both forms
// and from the logged text.
void check_log(const std::map<std::string, Config>& chosen) {
  ChoiceLogFile log;
  for (const auto& [key, config] : chosen)
    log.entries[key] = choice_log_value(signature(config), ChoiceOrigin::pinned);
  for (const std::string& bytes : {choice_log_to_json(log), choice_log_to_binary(log)}) {
    const ChoiceLogFile back = choice_log_from_bytes(bytes, "c.rank0.json");
    require(back.entries == log.entries);
    for (const auto& [key, value] : back.entries)
      require(config_from_signature(logged_signature(value), key) == chosen.at(key));
  }
}

// A record of the decision with every candidate's timing (Inductor's own,
// from its feedback savers), through both sidecar forms and merge.
void check_record(const RecordKey& key, const std::vector<Config>& candidates, std::size_t chosen) {
  RecordFile record;
  record.origin = "run.rank0.json";
  record.run = "run";
  record.rank = 0;
  record.has_timings = true;
  record.winners[key] = candidates[chosen];
  for (std::size_t i = 0; i < candidates.size(); ++i)
    record.timings[key].push_back(
        {signature(candidates[i]), i == chosen ? 0.5 : 1.0 + static_cast<double>(i)});
  for (const std::string& bytes : {timings_to_json(record), timings_to_binary(record)}) {
    RecordFile back;
    add_timings(back, bytes, "run.rank0.timings.json");
    require(timings_to_json(back) == timings_to_json(record));
  }
  const MergeResult merged = merge_records({record}, key.arch, "");
  const std::optional<TableEntry> entry = merged.table->entry(key.kernel, key.key);
  require(entry && entry->config == candidates[chosen]);
  check_table_forms(*merged.table);
}

}  // namespace

void read_input(std::string_view bytes, const std::string& origin) {
  const std::vector<std::string> parts = fuzzing::split_parts(bytes, 3);
  // As the C ABI receives it: a C string.
  const std::vector<Config> candidates = c_api::configs_of(parts[0].c_str());
  for (const Config& c : candidates) {
    require(config_from_signature(signature(c), "signature") == c);
    require(config_from_json(config_to_json(c), "config") == c);
  }
  std::unique_ptr<Table> table;
  if (parts.size() > 1) {
    table = table_from_bytes(parts[1], origin + ".table");
    check_table_forms(*table);
  }
  // A key is text from Python (UTF-8) or the launcher's tuning key.
  const std::string key = parts.size() > 2 ? std::string(parts[2].c_str()) : "k";
  json_checks::require_utf8(key, "key");
  const std::string arch = table ? std::string(table->arch()) : "sm90";
  std::string qualified = "inductor.mm";
  if (table && !table->kernels().empty()) qualified = table->kernels().front();
  const KernelId kernel = KernelId::parse(qualified);
  std::map<std::string, Config> logged;
  std::size_t chosen = 0;
  for (const std::optional<std::size_t> own :
       {std::optional<std::size_t>(), std::optional<std::size_t>(candidates.size() - 1)}) {
    DecisionRequest request;
    request.arch = arch;
    request.kernel = kernel;
    request.key = key;
    request.candidates = candidates;
    request.table = table.get();
    request.own_default = own;
    const Decision decision = make_decision(request);
    require(decision.choice.index < candidates.size());
    (void)decision_to_json(request, decision).dump();
    chosen = decision.choice.index;
    logged[choice_log_key(arch, qualified, key + (own ? "|own" : ""))] = candidates[chosen];
  }
  check_log(logged);
  check_record({arch, qualified, key}, candidates, chosen);
}
