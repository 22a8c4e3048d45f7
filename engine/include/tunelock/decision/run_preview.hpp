// What switching a run to `pinned` with a table would change. For every key
// a run's choice logs hold: what the run chose, what the pinned rules choose
// with this table and candidate manifest, and why; then how the table covers
// the run. This is the question before moving a job to pinned, and
// `tunelock preview` and the browser page both answer it here.
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tunelock/decision/policy.hpp"
#include "tunelock/logs/choice_log_file.hpp"
#include "tunelock/model/candidates.hpp"
#include "tunelock/tables/table.hpp"

namespace tunelock {

struct RunPreviewRules {
  const Table* table = nullptr;                 // used for keys of its arch only; may be null
  const CandidateManifest* manifest = nullptr;  // REQUIRES: not null
  std::vector<BlockSize> block_sizes;           // as TUNELOCK_BLOCK_* would set them
};

struct PreviewedKey {
  std::string arch, kernel, key;                // from the logged entry
  std::map<std::string, std::vector<int>> ran;  // logged signature -> ranks that ran it
  std::string pinned;                           // signature pinned would choose; "" if none
  std::string reason;                           // table, table*, block_sizes, min_cost
  std::string problem;                          // why pinned cannot decide (no candidates)
  std::vector<std::string> explanation;         // what each rule found
  bool changes = false;                         // pinned differs from what some rank ran
};

struct RunPreviewSummary {
  std::size_t keys = 0;
  std::size_t table = 0;           // exact key entries
  std::size_t table_wildcard = 0;  // "*" entries
  std::size_t block_sizes = 0;
  std::size_t min_cost = 0;   // the cheapest fallback
  std::size_t undecided = 0;  // kernel not in the manifest
  std::size_t changes = 0;    // keys whose choice would change
};

struct RunPreview {
  std::vector<PreviewedKey> keys;  // sorted by arch|kernel|key
  RunPreviewSummary summary;
  std::vector<std::string> warnings;  // as a pinned run would log them, once each
};

// Logs are one run's ranks (a rank given twice is an Error naming it).
RunPreview preview_run(std::span<const ChoiceLogFile> logs, const RunPreviewRules& rules);

nlohmann::json run_preview_to_json(const RunPreview& preview);

// Lines for a terminal: the keys that change (all keys when `every_key`),
// then the summary.
std::string run_preview_report(const RunPreview& preview, bool every_key);

}  // namespace tunelock
