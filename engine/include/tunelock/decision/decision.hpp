// One decision, as every face asks for it: the CLI's `choose`, the C ABI's
// tunelock_choose, the page, the run preview and Runtime::pinned_choice.
// The request says what is known (arch, kernel, key, candidates, table,
// the policy's overrides, the chaos control); the answer carries the
// choice, what each rule found, the warnings, the candidates ranked by
// cost, stale table entries and the entry's equivalents. Each face parses
// its own input into a request and prints the answer; none assembles the
// rules itself.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tunelock/base/notices.hpp"
#include "tunelock/decision/numerics.hpp"
#include "tunelock/decision/policy.hpp"
#include "tunelock/decision/selection.hpp"
#include "tunelock/model/config.hpp"
#include "tunelock/model/kernel_id.hpp"
#include "tunelock/tables/table.hpp"

namespace tunelock {

struct DecisionRequest {
  std::string arch;  // for messages and the table's arch; "unknown" when empty
  KernelId kernel;
  std::string key;
  std::span<const Config> candidates;
  const Table* table = nullptr;  // the arch's table, if any; the chaos control ignores it
  std::span<const BlockSize> block_sizes = {};
  OnMiss on_miss = OnMiss::min_cost;
  // Set: the chaos control for this rank (a positive control, never for
  // real runs). chaos_rank_of() checks a face's rank.
  std::optional<std::uint64_t> chaos_rank = std::nullopt;
  // Configs the policy and the kernel's variants declare racy.
  std::span<const DeclaredConfig> declared_nondeterministic = {};
  std::span<const std::string> nondeterministic_variants = {};
  // The kernel's own untimed default among the candidates (SelectionRules).
  std::optional<std::size_t> own_default = std::nullopt;
  // Without a table: where it was looked for ("no sm90 table in DIR, ..."),
  // added to the fallback's warning. Empty: nothing is added (a tool).
  std::string tables_searched;
  // Which once-only warnings were given already: a running process's
  // per-policy set, a preview's for its rows, process_notices() for a
  // tool. Null: a fresh set for this one decision.
  Notices* notices = nullptr;
  // Warnings come back in the answer (a tool shows them with its result);
  // false: they are logged.
  bool collect_warnings = true;
  bool explain = true;  // collect what each rule found
  bool details = true;  // rank the candidates, find stale entries and equivalents
};

struct StaleEntry {
  std::string kernel, key, signature;  // the table's entry that names no live candidate
};

struct Decision {
  Choice choice;
  std::vector<std::string> explanation;  // when asked for
  std::vector<std::string> warnings;     // when the request collects them
  std::vector<std::size_t> by_cost;      // candidate indices, cheapest first (stable)
  std::vector<StaleEntry> stale;
  std::vector<std::size_t> equivalent;  // the deciding entry's equivalents among the candidates
  // Of them, the ones TUNELOCK_EQUIVALENT=timed times (equivalents_worth_timing).
  std::vector<std::size_t> worth_timing;
};

// REQUIRES: !request.candidates.empty() (else Error). Throws TableMissError
// under on_miss = error.
Decision make_decision(const DecisionRequest& request);

// The chaos control's rank from a face's flag and number: nullopt without
// chaos; an Error naming the face's own names (`chaos_name`, `rank_name`)
// when chaos has no rank or a negative one.
std::optional<std::uint64_t> chaos_rank_of(bool chaos, std::optional<std::int64_t> rank,
                                           std::string_view chaos_name, std::string_view rank_name);

// {"index", "signature", "reason", "explanation", "candidates" (ranked, each
// {index, signature, cost, chosen}), "stale", "equivalent", "warnings"}:
// what the page shows and tunelock_choose returns.
nlohmann::json decision_to_json(const DecisionRequest& request, const Decision& decision);

}  // namespace tunelock
