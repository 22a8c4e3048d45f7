#include "tunelock/decision/decision.hpp"

#include <algorithm>
#include <numeric>

#include "tunelock/base/error.hpp"

namespace tunelock {
namespace {

// Entries for this call (either name, the key or "*") that name no live candidate.
std::vector<StaleEntry> stale_entries(const Table& table, const KernelId& kernel,
                                      std::string_view key, std::span<const Config> candidates) {
  std::vector<StaleEntry> out;
  const std::string qualified = kernel.qualified();
  for (std::string_view name : table_names(kernel, qualified)) {
    for (std::string_view k : {key, kWildcardKey}) {
      if (table.match(name, k, candidates).stale())
        out.push_back({std::string(name), std::string(k), signature(table.entry(name, k)->config)});
    }
  }
  return out;
}

}  // namespace

std::optional<std::uint64_t> chaos_rank_of(bool chaos, std::optional<std::int64_t> rank,
                                           std::string_view chaos_name,
                                           std::string_view rank_name) {
  if (!chaos) return std::nullopt;
  if (!rank)
    throw Error(std::string(chaos_name) + " needs " + std::string(rank_name) +
                " N (this rank's number, N >= 0)");
  if (*rank < 0)
    throw Error(std::string(rank_name) + " " + std::to_string(*rank) + ": a rank is 0 or more");
  return static_cast<std::uint64_t>(*rank);
}

Decision make_decision(const DecisionRequest& request) {
  Decision out;
  Notices own;  // a one-off decision warns through its answer
  const std::string arch = request.arch.empty() ? std::string("unknown") : request.arch;
  const Table* table = request.chaos_rank ? nullptr : request.table;
  SelectionRules rules{arch, table, request.block_sizes, request.on_miss,
                       request.notices ? request.notices : &own};
  if (request.explain) rules.explanation = &out.explanation;
  if (request.collect_warnings) rules.warnings = &out.warnings;
  rules.declared_nondeterministic = request.declared_nondeterministic;
  rules.nondeterministic_variants = request.nondeterministic_variants;
  rules.own_default = request.own_default;
  rules.tables_searched = request.tables_searched;
  out.choice = decide(request.kernel, request.key, request.candidates, rules, request.chaos_rank);
  if (request.explain && table &&
      (out.choice.reason == Reason::table || out.choice.reason == Reason::table_wildcard)) {
    const std::string qualified = request.kernel.qualified();
    for (std::string_view name : table_names(request.kernel, qualified)) {
      if (!table->has_kernel(name)) continue;
      if (const std::string_view identity = table->identity(name); !identity.empty())
        out.explanation.push_back("the table's entries for " + std::string(name) +
                                  " were timed on code " + std::string(identity) +
                                  " (a pinned run compares it with the kernel's own)");
      break;
    }
  }
  if (!request.details) return out;
  out.by_cost.resize(request.candidates.size());
  std::iota(out.by_cost.begin(), out.by_cost.end(), std::size_t{0});
  std::stable_sort(out.by_cost.begin(), out.by_cost.end(), [&](std::size_t a, std::size_t b) {
    return estimate_cost(request.candidates[a]) < estimate_cost(request.candidates[b]);
  });
  if (table) {
    out.stale = stale_entries(*table, request.kernel, request.key, request.candidates);
    out.equivalent =
        equivalent_candidates(*table, request.kernel, request.key, request.candidates, out.choice);
    out.worth_timing = equivalents_worth_timing(*table, request.kernel, request.key,
                                                request.candidates, out.choice);
  }
  return out;
}

nlohmann::json decision_to_json(const DecisionRequest& request, const Decision& decision) {
  using nlohmann::json;
  json ranked = json::array();
  for (std::size_t i : decision.by_cost) {
    const Cost cost = estimate_cost(request.candidates[i]);
    ranked.push_back({{"index", i},
                      {"signature", signature(request.candidates[i])},
                      {"cost", {cost.block, cost.warps}},
                      {"chosen", i == decision.choice.index}});
  }
  json stale = json::array();
  for (const StaleEntry& s : decision.stale)
    stale.push_back({{"kernel", s.kernel}, {"key", s.key}, {"signature", s.signature}});
  json equivalent = json::array();  // what TUNELOCK_EQUIVALENT=timed may time in its place
  for (std::size_t i : decision.equivalent) equivalent.push_back(signature(request.candidates[i]));
  return {{"index", decision.choice.index},
          {"signature", signature(request.candidates[decision.choice.index])},
          {"reason", std::string(to_string(decision.choice.reason))},
          {"explanation", decision.explanation},
          {"candidates", ranked},
          {"stale", stale},
          {"equivalent", equivalent},
          {"warnings", decision.warnings}};
}

}  // namespace tunelock
