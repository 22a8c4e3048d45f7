#include "tunelock/logs/run_compare.hpp"

#include <map>

#include "tunelock/logs/choice_log.hpp"

namespace tunelock {
namespace {

using Folded = std::map<std::string, std::set<std::string>>;

Folded fold(std::span<const ChoiceLogFile> logs) {
  Folded out;
  for (const ChoiceLogFile& log : logs) {
    for (const auto& [entry, value] : log.entries) out[entry].insert(logged_signature(value));
  }
  return out;
}

}  // namespace

RunComparison compare_runs(std::span<const ChoiceLogFile> a, std::span<const ChoiceLogFile> b) {
  const Folded run_a = fold(a), run_b = fold(b);
  std::set<std::string> entries;
  for (const auto& [entry, unused] : run_a) entries.insert(entry);
  for (const auto& [entry, unused] : run_b) entries.insert(entry);
  RunComparison out;
  for (const std::string& entry : entries) {
    const auto in_a = run_a.find(entry);
    const auto in_b = run_b.find(entry);
    RunDifference d{entry, in_a == run_a.end() ? std::set<std::string>{} : in_a->second,
                    in_b == run_b.end() ? std::set<std::string>{} : in_b->second};
    if (d.a == d.b)
      ++out.same;
    else
      out.differences.push_back(std::move(d));
  }
  return out;
}

nlohmann::json run_comparison_to_json(const RunComparison& comparison) {
  nlohmann::json differences = nlohmann::json::array();
  for (const RunDifference& d : comparison.differences)
    differences.push_back({{"entry", d.entry}, {"a", d.a}, {"b", d.b}});
  return {{"same", comparison.same}, {"differences", differences}};
}

}  // namespace tunelock
