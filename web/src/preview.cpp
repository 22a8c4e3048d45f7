#include "preview.hpp"

#include "tunelock/decision/decision.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>

#include "tunelock/base/error.hpp"
#include "tunelock/decision/policy_sources.hpp"
#include "tunelock/decision/selection.hpp"
#include "tunelock/logs/choice_log.hpp"
#include "tunelock/logs/choice_log_file.hpp"
#include "tunelock/records/merge.hpp"
#include "tunelock/records/merge_report.hpp"
#include "tunelock/tables/table_contradictions.hpp"
#include "tunelock/tables/table_diff.hpp"
#include "tunelock/tables/table_invariance.hpp"
#include "tunelock/tables/table_json.hpp"
#include "tunelock/verify/verify.hpp"

namespace tunelock::preview {

using nlohmann::json;

json table_summary(const Table& table) {
  json kernels = json::object();
  for (const std::string& kernel : table.kernels()) kernels[kernel] = table.keys(kernel);
  const Provenance& p = table.provenance();
  json provenance = json::array();  // [label, value] pairs, as `tunelock table show` prints them
  for (const auto& [label, value] : provenance_lines(p)) provenance.push_back({label, value});
  // The code each kernel's entries were timed on, as `tunelock table show` lists it.
  for (const auto& [kernel, identity] : table.identities())
    provenance.push_back({"identity", kernel + " " + identity});
  // Entries the table's own nondeterministic lists contradict: skipped by a
  // pinned run, as `tunelock table validate` names them.
  for (const Contradiction& c : table_contradictions(table))
    provenance.push_back({"contradiction", c.text()});
  // Batch invariance: each group's class and the gate's verdict per kernel,
  // as `tunelock table show` and `tunelock table invariance` give them.
  for (const std::string& line : invariance_lines(table))
    provenance.push_back({"invariance", line});
  const std::vector<KernelInvarianceReport> gate = invariance_report(table);
  if (!table.invariance().empty())
    for (const KernelInvarianceReport& kernel : gate)
      provenance.push_back(
          {"invariance gate", kernel.kernel + ": " + std::string(to_string(kernel.verdict))});
  return {{"arch", std::string(table.arch())},
          {"entries", table.entry_count()},
          {"source", p.source},
          {"device", p.device_name},
          {"recorded_at", p.recorded_at},
          {"provenance", provenance},
          {"kernels", kernels},
          {"invariance", invariance_report_to_json(gate)}};
}

json manifest_summary(const CandidateManifest& manifest) {
  json kernels = json::object();
  for (const auto& [name, list] : manifest.kernels)
    kernels[name.empty() ? "(any kernel)" : name] = {{"key", list.key_args},
                                                     {"count", list.configs.size()}};
  return {{"kernels", kernels}};
}

json manifest_kernel(const CandidateManifest& manifest, std::string_view table_kernel) {
  if (manifest.single_kernel) return nullptr;
  const std::string* best = nullptr;
  std::size_t best_at = 0;  // where table_kernel is among the listed kernel's table names
  for (const auto& [listed, unused] : manifest.kernels) {
    const KernelId id = KernelId::parse(listed);  // outlives names, which view it
    const TableNames names = table_names(id, listed);
    const auto found = std::find(names.begin(), names.end(), table_kernel);
    const auto at = static_cast<std::size_t>(found - names.begin());
    if (found != names.end() && (!best || at < best_at)) {
      best = &listed;
      best_at = at;
    }
  }
  return best ? json(*best) : json(nullptr);
}

json table_keys(const Table& table, const std::string& kernel) {
  json out = json::array();
  std::set<std::string, std::less<>> seen;
  const KernelId id = KernelId::parse(kernel);  // outlives the names, which view it
  for (std::string_view name : table_names(id, kernel)) {
    for (std::string& key : table.keys(name))
      if (seen.insert(key).second) out.push_back(std::move(key));
  }
  return out;
}

json decide(const Table* table, const std::vector<Config>& candidates,
            const std::string& kernel_name, const std::string& key, const json& policy) {
  try {
    const std::vector<BlockSize> block_sizes =
        parse_block_sizes(policy.value("block_sizes", ""), "block sizes");
    validate_block_sizes(block_sizes);  // the same rules as the CLI's --block
    DecisionRequest request;
    request.arch = policy.value("arch", table ? std::string(table->arch()) : std::string());
    request.kernel = KernelId::parse(kernel_name);
    request.key = key;
    request.candidates = candidates;
    request.table = table;
    request.block_sizes = block_sizes;
    request.on_miss = parse_on_miss(policy.value("on_miss", "min_cost"), "on_miss");
    request.chaos_rank = chaos_rank_of(
        policy.value("chaos", false), policy.value("rank", std::int64_t{0}), "chaos", "chaos rank");
    return decision_to_json(request, make_decision(request));
  } catch (const Error& e) {
    return {{"error", e.what()}};
  }
}

json diff(const Table& a, const Table& b) { return table_diff_to_json(diff_tables(a, b)); }

json report(const std::vector<RecordFile>& records) {
  // The same keys, in the same JSON, as `tunelock report --json`.
  const std::vector<KeyVerdict> disagreeing = reported_verdicts(records);
  json disagreements = json::array();
  for (const KeyVerdict& v : disagreeing) disagreements.push_back(verdict_to_json(v));
  json timings = json::object();
  for (std::size_t i = 0; i < records.size(); ++i) {
    const int rank = records[i].rank >= 0 ? records[i].rank : static_cast<int>(i);
    for (const auto& [key, candidates] : records[i].timings) {
      const std::string text = to_string(key);
      for (const CandidateTiming& c : candidates)
        if (c.median_ms) timings[text][c.signature].push_back({rank, *c.median_ms});
    }
  }
  return {{"disagreements", disagreements},
          {"timings", timings},
          {"text", disagreement_report(disagreeing)}};
}

json verify_logs(const std::vector<NamedLog>& logs) {
  const VerifyResult result = check_choice_logs(logs).result;
  json ranks = json::array();
  for (const auto& [name, log] : logs) {
    ranks.push_back({{"name", name},
                     {"rank", log->rank},
                     {"entries", log->entries.size()},
                     {"digest", choice_digest(log->entries)}});
  }
  return {
      {"ranks", ranks}, {"agreed", result.agreed}, {"report", conflict_report(result.conflicts)}};
}

std::string digest(const json& entries) {
  return choice_digest(entries.get<std::map<std::string, std::string>>());
}

namespace {

struct ParsedCase {
  std::unique_ptr<Table> table;
  std::vector<Config> candidates;
  std::string kernel, key;
  json policy;
  KernelId id;
  std::vector<BlockSize> block_sizes;
};

ParsedCase parse_case(const json& c) {
  ParsedCase out;
  if (c.contains("table") && c["table"].is_string())
    out.table = table_from_json(c["table"].get<std::string>(), "case table");
  out.candidates = candidates_from_json(c.at("candidates").get<std::string>(), "case candidates")
                       .find("", "case")
                       .configs;
  out.kernel = c.at("kernel").get<std::string>();
  out.key = c.at("key").get<std::string>();
  out.policy = c.value("policy", json::object());
  out.id = KernelId::parse(out.kernel);
  out.block_sizes = parse_block_sizes(out.policy.value("block_sizes", ""), "block sizes");
  return out;
}

}  // namespace

json decide_case(const json& c) {
  try {
    const ParsedCase parsed = parse_case(c);
    json out =
        decide(parsed.table.get(), parsed.candidates, parsed.kernel, parsed.key, parsed.policy);
    if (c.contains("log")) out["digest"] = digest(c["log"]);
    return out;
  } catch (const Error& e) {
    return {{"error", e.what()}};
  }
}

double decisions_per_second(const json& cases, int repeats) {
  std::vector<ParsedCase> parsed;
  for (const json& c : cases) parsed.push_back(parse_case(c));
  // Only the decisions are timed: inputs are parsed above, and the
  // once-per-policy warnings have fired before the clock starts.
  // A decision as every face asks for it (decision.hpp), lean: no
  // explanation, no ranking, warnings logged once.
  Notices notices;
  auto request_of = [&notices](const ParsedCase& p) {
    DecisionRequest request;
    request.arch = "bench";
    request.kernel = p.id;
    request.key = p.key;
    request.candidates = p.candidates;
    request.table = p.table.get();
    request.block_sizes = p.block_sizes;
    request.notices = &notices;
    request.collect_warnings = request.explain = request.details = false;
    return request;
  };
  std::vector<DecisionRequest> requests;
  for (const ParsedCase& p : parsed) {
    requests.push_back(request_of(p));
    make_decision(requests.back());
  }
  std::size_t decided = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < repeats; ++r) {
    for (std::size_t i = 0; i < parsed.size(); ++i)
      decided += make_decision(requests[i]).choice.index < parsed[i].candidates.size();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return static_cast<double>(decided) / seconds;
}

}  // namespace tunelock::preview
