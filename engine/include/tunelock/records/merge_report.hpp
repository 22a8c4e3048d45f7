// What `tunelock report` prints about a merge's verdicts, as text for people
// and as JSON for tools (the browser preview shows the same JSON). Kept apart
// from the vote itself (merge.hpp): changing how a verdict reads never
// changes which config a table pins.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tunelock/records/merge.hpp"

namespace tunelock {

// One verdict as JSON: {"arch", "kernel", "key", "winners": [{"signature",
// "votes", "timings_ms"}], "nondeterministic", "kept" (null when nothing
// could be kept), "decided_by", "equivalent"}. What `tunelock report --json` prints.
nlohmann::json verdict_to_json(const KeyVerdict& verdict);

// The disagreement report: each key, its winners with vote counts and, where
// timings exist, the spread that explains it. Empty when all ranks agreed.
std::string disagreement_report(const std::vector<KeyVerdict>& disagreements);

}  // namespace tunelock
