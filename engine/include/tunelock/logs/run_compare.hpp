// Two runs of one job, compared through their choice logs: did run B pick
// what run A picked for every key both ran? A run's ranks are folded first
// (a key a run's ranks disagreed on keeps every signature they ran), so a
// run is compared as a whole, whatever its rank count. The origin
// (`;pinned`/`;timed`) is not compared: a recorded run and the pinned run
// that replaced it agree when they ran the same configs.
#pragma once

#include <set>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tunelock/logs/choice_log_file.hpp"

namespace tunelock {

struct RunDifference {
  std::string entry;           // arch|kernel|key
  std::set<std::string> a, b;  // signatures each run ran; empty: the run never saw the key
};

struct RunComparison {
  std::size_t same = 0;                    // keys both runs ran alike
  std::vector<RunDifference> differences;  // sorted by entry
};

RunComparison compare_runs(std::span<const ChoiceLogFile> a, std::span<const ChoiceLogFile> b);

// {"same": N, "differences": [{"entry", "a": [...], "b": [...]}]}
nlohmann::json run_comparison_to_json(const RunComparison& comparison);

}  // namespace tunelock
