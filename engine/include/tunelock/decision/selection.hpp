// Choosing one config without measuring anything. Every rule here is a pure
// function of the candidate list, the call signature, the policy's rules and
// the table, so every rank and every run computes the same answer.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunelock/base/notices.hpp"
#include "tunelock/decision/numerics.hpp"
#include "tunelock/decision/policy.hpp"
#include "tunelock/model/config.hpp"
#include "tunelock/model/kernel_id.hpp"
#include "tunelock/tables/table.hpp"

namespace tunelock {

enum class Reason {
  table,           // exact key entry in the table
  table_wildcard,  // the table's "*" entry for the kernel ("table*")
  block_sizes,     // explicit block-size overrides
  min_cost,        // cheapest candidate (on_miss = min_cost)
  chaos,           // chaos positive control
  // a batch-invariant kernel's size without an entry: the invariance class
  // config of the nearest recorded size ("table_class")
  table_class,
};

std::string_view to_string(Reason reason);

struct Choice {
  std::size_t index = 0;  // into the candidate list
  Reason reason = Reason::min_cost;

  friend bool operator==(const Choice&, const Choice&) = default;
};

// The rules a pinned choice follows, taken from the policy plus the table
// for the running arch.
struct SelectionRules {
  std::string_view arch;                   // for messages
  const Table* table = nullptr;            // the arch's table, if any
  std::span<const BlockSize> block_sizes;  // explicit overrides
  OnMiss on_miss = OnMiss::min_cost;
  Notices* notices = nullptr;  // once-per-policy warnings; null = process-wide
  // When set, each rule appends a line saying what it found, so tools can
  // explain a decision with the very code that made it.
  std::vector<std::string>* explanation = nullptr;
  // When set, the once-per-policy warnings (stale entry, cheapest fallback)
  // are appended here instead of logged, so a tool shows them with its result.
  std::vector<std::string>* warnings = nullptr;
  // Configs the user declared nondeterministic: the policy's (any kernel;
  // the rules pick this one's) and, from the launcher, the signatures of
  // this kernel's variants declared so. With the table's own lists, the
  // fallback rules skip them.
  std::span<const DeclaredConfig> declared_nondeterministic = {};
  std::span<const std::string> nondeterministic_variants = {};
  // The candidate the kernel's own untimed heuristic launches (Inductor's
  // choice when it does not benchmark). Set: on_miss min_cost takes it
  // rather than the cheapest, unless it is known to change its own bits.
  std::optional<std::size_t> own_default = std::nullopt;
  // Without a table: where it was looked for, added to the fallback's warning.
  std::string_view tables_searched = {};
};

// Index of the first candidate whose params match every override; a
// candidate lacking a named param does not match. No overrides: nullopt.
// Candidates `skip` marks (when not empty) never match.
std::optional<std::size_t> match_block_sizes(std::span<const Config> candidates,
                                             std::span<const BlockSize> block_sizes,
                                             const std::vector<bool>& skip = {});

// Index of the cheapest candidate; ties go to the earlier one. Candidates
// `skip` marks are passed over unless every candidate is marked.
// REQUIRES: !candidates.empty()
std::size_t cheapest(std::span<const Config> candidates, const std::vector<bool>& skip = {});

// The table entry, then block-size overrides, then on_miss. The table is
// tried for the qualified name then the bare name, each with the exact key
// then "*"; an entry that matches no live candidate is skipped. The
// fallback rules (block sizes, cheapest) skip every config known to be
// nondeterministic (numerics.hpp): the table's lists and the rules'
// declarations. Throws TableMissError (on_miss = error) or Error (no
// candidates).
Choice deterministic_choice(const KernelId& kernel, std::string_view key,
                            std::span<const Config> candidates, const SelectionRules& rules);

// (XXH3-64 of "qualified|key" + rank) mod n: stable for a rank, different
// for neighbouring ranks whenever there are two or more candidates.
Choice chaos_choice(const KernelId& kernel, std::string_view key,
                    std::span<const Config> candidates, std::uint64_t rank);

// The pinned decision: the chaos control when `chaos_rank` is set (a
// positive control, never for real runs), else deterministic_choice. The
// one switch every face (runtime, C API) calls.
Choice decide(const KernelId& kernel, std::string_view key, std::span<const Config> candidates,
              const SelectionRules& rules, std::optional<std::uint64_t> chaos_rank);

// The live candidates the table entry that made `choice` lists as
// equivalent (same bits by the record's audit), in the entry's order
// (merge lists them fastest recorded median first); empty unless the table
// decided. The entry is found as selection found it: qualified then bare
// name, the exact key or "*" as the reason says.
std::vector<std::size_t> equivalent_candidates(const Table& table, const KernelId& kernel,
                                               std::string_view key,
                                               std::span<const Config> candidates,
                                               const Choice& choice);

// How many of an entry's equivalents TUNELOCK_EQUIVALENT=timed times at
// most beyond its tie set.
inline constexpr std::size_t kFastestEquivalents = 2;

// Of those, the ones that could plausibly beat the entry, and so are worth
// timing: the ones in its tie set (timed within the ranks' own spread of
// the winner), and of the ones the record timed faster than the entry's
// config (TableEntry::faster_equivalents) the kFastestEquivalents first.
// An entry that does not say how many were faster (an older table) counts
// its kFastestEquivalents first as faster. In the entry's order. An entry
// that was the fastest recorded and tied with none times nothing.
std::vector<std::size_t> equivalents_worth_timing(const Table& table, const KernelId& kernel,
                                                  std::string_view key,
                                                  std::span<const Config> candidates,
                                                  const Choice& choice);

// Reducing a list at registration, for kernels with no call-time
// interception: under a pinned policy the list shrinks to the block-size
// match or the cheapest; otherwise it is returned unchanged.
std::vector<Config> autotune_configs(std::vector<Config> configs, const Policy& policy);

}  // namespace tunelock
