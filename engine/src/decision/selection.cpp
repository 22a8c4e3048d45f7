#include "tunelock/decision/selection.hpp"

#include "tables/table_index.hpp"

#include <xxhash.h>

#include <algorithm>
#include <array>

#include "tunelock/base/error.hpp"
#include "tunelock/base/log.hpp"
#include "tunelock/model/batch_rows.hpp"

namespace tunelock {
namespace {

Notices& notices_of(const SelectionRules& rules) {
  return rules.notices ? *rules.notices : process_notices();
}

void no_candidates(const std::string& qualified) {
  throw Error("kernel '" + qualified + "' has no candidate configs to choose from");
}

// Truthful words: the cheapest config is chosen without a clock, so every
// rank picks it alike, but nothing here has seen its bits.
std::string untuned_warning(std::string_view qualified, std::string_view arch, std::size_t skipped,
                            bool own_default, const SelectionRules& rules) {
  // One short line per kernel: the whole story is `tunelock help fallback`.
  std::string text =
      "no tuned config for kernel '" + std::string(qualified) + "' on " + std::string(arch) +
      (own_default ? "; using its own untimed default" : "; using the cheapest config") +
      ", the same on every rank, which may be slower and is not known to repeat "
      "its bits";
  if (skipped)
    text += "; " + std::to_string(skipped) + " config(s) known to be nondeterministic skipped";
  if (!rules.table && !rules.tables_searched.empty())
    text += "; " + std::string(rules.tables_searched);
  return text + " (`tunelock help fallback`)";
}

std::size_t count_marked(const std::vector<bool>& marks) {
  return static_cast<std::size_t>(std::count(marks.begin(), marks.end(), true));
}

std::string marked_list(const std::vector<bool>& marks) {
  std::string out;
  for (std::size_t i = 0; i < marks.size(); ++i)
    if (marks[i]) out += (out.empty() ? "" : ", ") + std::to_string(i);
  return out;
}

// A once-per-policy warning: into the caller's list when it keeps one (a
// tool shows it beside the decision), else the log.
void warn(const SelectionRules& rules, std::string text) {
  if (rules.warnings)
    rules.warnings->push_back(std::move(text));
  else
    logger().warn("{}", text);
}

void explain_table_step(const SelectionRules& rules, std::string_view name, std::string_view key,
                        const EntryMatch& found, bool contradicts) {
  std::string line = "table " + std::string(rules.table->arch()) + " " + std::string(name) + " [" +
                     std::string(key) + "]: ";
  if (!found.present) {
    line += "no entry";
  } else if (found.stale()) {
    line += "stale entry " + signature(rules.table->entry(name, key)->config) +
            " matches no live candidate, skipped";
  } else if (contradicts) {
    line += "entry matches candidate " + std::to_string(*found.index) +
            ", which the same table lists as nondeterministic: contradictory, skipped";
  } else {
    line += "entry matches candidate " + std::to_string(*found.index) + ", decides";
  }
  rules.explanation->push_back(std::move(line));
}

// Whether the table's own nondeterministic lists name `config` for the
// kernel under any of its names: an entry pinning it contradicts itself
// (merge never writes one; a hand-edited or foreign table can).
bool table_flags(const Table& table, const KernelId& kernel, std::string_view name,
                 const Config& config) {
  if (table.nondeterministic().empty()) return false;  // the common case: one check
  return table.flags(name, config) || table.flags(kernel.name, config) ||
         table.flags(kernel.qualified(), config);
}

// The table rule: qualified name before bare name, exact key before "*".
// A present entry naming no live candidate is stale: skipped, noted once.
std::optional<Choice> choose_from_table(const KernelId& kernel, std::string_view key,
                                        std::span<const Config> candidates,
                                        const SelectionRules& rules) {
  const std::array<std::string_view, 2> keys{key, kWildcardKey};
  const std::size_t key_count = key == kWildcardKey ? 1 : 2;
  // The qualified name is built and asked about only when the table may
  // hold a name that long: building it and looking it up cost as much as
  // the rest of a hit, and Megatron's tables hold bare names only. An
  // explanation asks anyway, to say the name has no entries. Reused per
  // thread: the name usually outgrows the small-string buffer.
  thread_local std::string qualified;
  const bool ask_qualified =
      rules.explanation || detail::TableIndexAccess::may_hold_kernel_name_of_length(
                               *rules.table, kernel.qualified_size());
  qualified.clear();
  if (ask_qualified) kernel.append_qualified(qualified);
  const TableNames names = table_names(kernel, qualified);
  for (std::size_t n = ask_qualified ? 0 : 1; n < names.count; ++n) {  // names[0] is qualified
    const std::string_view name = names.begin()[n];
    const detail::NameMatch found = detail::TableIndexAccess::match_in_order(
        *rules.table, name, std::span(keys).first(key_count), candidates);
    if (!found.kernel_present) {
      if (rules.explanation)
        rules.explanation->push_back("table " + std::string(rules.table->arch()) + " " +
                                     std::string(name) + ": no entries for this name");
      continue;
    }
    for (std::size_t k = 0; k < found.tried; ++k) {
      const EntryMatch& match = found.keys[k];
      const bool contradicts =
          match.index && table_flags(*rules.table, kernel, name, candidates[*match.index]);
      if (rules.explanation) explain_table_step(rules, name, keys[k], match, contradicts);
      if (match.index && !contradicts)
        return Choice{*match.index, k == 0 ? Reason::table : Reason::table_wildcard};
      if (contradicts && notices_of(rules).first("contradicts|" + std::string(name) + "|" +
                                                 std::string(keys[k]))) {
        warn(rules, "table entry for kernel '" + std::string(name) + "' key '" +
                        std::string(keys[k]) + "' on " + std::string(rules.arch) + " pins " +
                        signature(candidates[*match.index]) +
                        ", which the same table lists as nondeterministic; skipped as a stale "
                        "entry is (re-merge the table from its records: merge never writes both)");
      }
      if (match.stale() &&
          notices_of(rules).first("stale|" + std::string(name) + "|" + std::string(keys[k]))) {
        warn(rules, "table entry for kernel '" + std::string(name) + "' key '" +
                        std::string(keys[k]) + "' on " + std::string(rules.arch) +
                        " matches none of the " + std::to_string(candidates.size()) +
                        " live candidates; skipped (re-record the table for the current kernels)");
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(Reason reason) {
  switch (reason) {
    case Reason::table:
      return "table";
    case Reason::table_wildcard:
      return "table*";
    case Reason::block_sizes:
      return "block_sizes";
    case Reason::min_cost:
      return "min_cost";
    case Reason::chaos:
      return "chaos";
    case Reason::table_class:
      return "table_class";
  }
  return "unknown";
}

std::optional<std::size_t> match_block_sizes(std::span<const Config> candidates,
                                             std::span<const BlockSize> block_sizes,
                                             const std::vector<bool>& skip) {
  if (block_sizes.empty()) return std::nullopt;  // no override asked for
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (!skip.empty() && skip[i]) continue;
    const bool all = std::all_of(block_sizes.begin(), block_sizes.end(), [&](const BlockSize& b) {
      return candidates[i].param(b.name) == b.value;
    });
    if (all) return i;
  }
  return std::nullopt;
}

std::size_t cheapest(std::span<const Config> candidates, const std::vector<bool>& skip) {
  const bool all_marked = !skip.empty() && count_marked(skip) == candidates.size();
  std::optional<std::size_t> best;
  Cost best_cost;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (!skip.empty() && skip[i] && !all_marked) continue;
    const Cost cost = estimate_cost(candidates[i]);
    if (!best || cost < best_cost) {  // strict: ties keep the earlier candidate
      best = i;
      best_cost = cost;
    }
  }
  return *best;
}

namespace {

// A batch-invariant kernel's key without an entry of its own: the class
// config of the nearest recorded size of its group (ties to the smaller),
// else any live config of the class; never one outside it, since that
// would change the rows' bits. Nullopt when the table knows no group for
// the key (the fallback rules follow).
std::optional<Choice> choose_in_class(const KernelId& kernel, std::string_view key,
                                      std::span<const Config> candidates,
                                      const SelectionRules& rules) {
  if (rules.table->invariance().empty()) return std::nullopt;  // the common case: one check
  const std::string qualified = kernel.qualified();
  for (std::string_view name : {std::string_view(qualified), std::string_view(kernel.name)}) {
    const KernelInvariance* invariance = rules.table->invariance(name);
    if (!invariance || invariance->dim.empty()) continue;
    const std::optional<std::int64_t> size = batch_size_of(key, invariance->dim);
    if (!size) continue;
    const auto group = invariance->groups.find(group_key_of(key, invariance->dim));
    if (group == invariance->groups.end()) continue;
    std::vector<std::int64_t> nearest = group->second.recorded;
    std::stable_sort(nearest.begin(), nearest.end(), [&](std::int64_t a, std::int64_t b) {
      const std::int64_t da = a > *size ? a - *size : *size - a;
      const std::int64_t db = b > *size ? b - *size : *size - b;
      return da < db;
    });
    for (std::int64_t recorded : nearest) {
      const std::string at = key_at_size(key, invariance->dim, recorded);
      const EntryMatch match = rules.table->match(name, at, candidates);
      if (!match.index) continue;
      if (rules.explanation)
        rules.explanation->push_back(
            "table class: no entry at " + invariance->dim + "=" + std::to_string(*size) +
            "; the nearest recorded size " + std::to_string(recorded) + " pins candidate " +
            std::to_string(*match.index) + " of the invariance class, decides");
      return Choice{*match.index, Reason::table_class};
    }
    const auto& members = group->second.class_configs;
    for (std::size_t i = 0; i < candidates.size(); ++i)
      if (std::binary_search(members.begin(), members.end(), signature(candidates[i])))
        return Choice{i, Reason::table_class};
    std::string listed;
    for (const std::string& sig : members) listed += (listed.empty() ? "" : ", ") + sig;
    throw Error("kernel '" + qualified + "' [" + std::string(key) + "] on " +
                std::string(rules.arch) + ": none of the " + std::to_string(candidates.size()) +
                " live candidates is in its invariance class (" + listed +
                "); a config outside the class would change the rows' bits, so none is pinned. "
                "Re-record the table under TUNELOCK_BATCH_INVARIANT=1 for these candidates");
  }
  return std::nullopt;
}

}  // namespace

Choice deterministic_choice(const KernelId& kernel, std::string_view key,
                            std::span<const Config> candidates, const SelectionRules& rules) {
  if (candidates.empty()) no_candidates(kernel.qualified());

  // Explanation lines are built only when asked for: a decision without
  // one must not pay for formatting strings it throws away.
  auto note = [&](auto&& line) {
    if (rules.explanation) rules.explanation->push_back(line());
  };
  if (rules.table) {
    if (auto chosen = choose_from_table(kernel, key, candidates, rules)) return *chosen;
    if (auto chosen = choose_in_class(kernel, key, candidates, rules)) return *chosen;
  } else {
    note([&] { return "table: none for " + std::string(rules.arch); });
  }
  // The fallback rules never pick a config known to change its own bits.
  const std::vector<bool> skip = known_nondeterministic(
      kernel, candidates,
      {rules.table, rules.declared_nondeterministic, rules.nondeterministic_variants});
  const std::size_t skipped = count_marked(skip);
  if (skipped) {
    note([&] {
      return "nondeterministic: candidate(s) " + marked_list(skip) +
             " known to change their own bits (table or declared), skipped by the rules below";
    });
  }
  if (auto index = match_block_sizes(candidates, rules.block_sizes, skip)) {
    note([&] {
      return "block sizes: candidate " + std::to_string(*index) +
             " matches every override, decides";
    });
    return Choice{*index, Reason::block_sizes};
  }
  note([&] {
    return std::string(rules.block_sizes.empty()
                           ? "block sizes: none given"
                           : "block sizes: no candidate matches every override");
  });
  if (rules.on_miss == OnMiss::error) {
    note([] { return std::string("on_miss error: no rule decided"); });
    throw TableMissError(
        "no tuned config for kernel '" + kernel.qualified() + "' key '" + std::string(key) +
        "' on " + std::string(rules.arch) +
        " and on_miss is 'error'. Record a table (TUNELOCK_RECORD=<prefix>, then `tunelock "
        "merge <prefix>.rank*.json -o <dir>/" +
        std::string(rules.arch) +
        ".json`) and put its directory on TUNELOCK_TABLE_PATH, or set TUNELOCK_ON_MISS=min_cost" +
        // Where it looked: a typo in the path reads as a missing entry otherwise.
        (!rules.table && !rules.tables_searched.empty()
             ? " (" + std::string(rules.tables_searched) + ")"
         : rules.table ? " (the " + std::string(rules.arch) + " table has no entry for it)"
                       : std::string()));
  }
  thread_local std::string notice_key;  // reused: a fallback must not allocate on every call
  notice_key.assign("untuned|").append(rules.arch).append("|");
  kernel.append_qualified(notice_key);
  const bool own = rules.own_default && *rules.own_default < candidates.size() &&
                   (skip.empty() || !skip[*rules.own_default]);
  // One candidate has nothing to tune: no table could choose better, so
  // "no tuned config ... may be slower" would be false (preview, the page).
  if (candidates.size() > 1 && notices_of(rules).first(notice_key))
    warn(rules, untuned_warning(kernel.qualified(), rules.arch, skipped, own, rules));
  const std::size_t index = own ? *rules.own_default : cheapest(candidates, skip);
  if (skipped == candidates.size() &&
      notices_of(rules).first("all-nondeterministic|" + kernel.qualified())) {
    warn(rules, "every candidate of kernel '" + kernel.qualified() +
                    "' is known to change its own bits; using the cheapest anyway, so its "
                    "results will differ from run to run. Add a config whose bits repeat");
  }
  note([&] {
    if (own)
      return "on_miss min_cost: candidate " + std::to_string(index) +
             " is the kernel's own untimed default, decides";
    return "on_miss min_cost: candidate " + std::to_string(index) + " is the cheapest" +
           (skipped ? std::string(" of those not skipped") : "") +
           " (ties go to the earlier), decides";
  });
  return Choice{index, Reason::min_cost};
}

Choice chaos_choice(const KernelId& kernel, std::string_view key,
                    std::span<const Config> candidates, std::uint64_t rank) {
  const std::string qualified = kernel.qualified();
  if (candidates.empty()) no_candidates(qualified);
  const std::string text = qualified + "|" + std::string(key);
  const std::uint64_t hash = XXH3_64bits(text.data(), text.size());
  return Choice{static_cast<std::size_t>((hash + rank) % candidates.size()), Reason::chaos};
}

namespace {

// The entry that made `choice`, as selection found it; empty unless the
// table decided.
std::optional<TableEntry> deciding_entry(const Table& table, const KernelId& kernel,
                                         std::string_view key, std::span<const Config> candidates,
                                         const Choice& choice) {
  if (choice.reason != Reason::table && choice.reason != Reason::table_wildcard) return {};
  const std::string qualified = kernel.qualified();
  const std::string_view entry_key = choice.reason == Reason::table ? key : kWildcardKey;
  for (std::string_view name : table_names(kernel, qualified)) {
    std::optional<TableEntry> entry = table.entry(name, entry_key);
    if (entry && entry->matches(candidates[choice.index])) return entry;
  }
  return {};
}

// The entry's equivalents among the live candidates (never the choice
// itself), in the entry's order; with `worth_timing`, only those in its tie
// set or among the kFastestEquivalents first, and of those only the ones
// the record timed faster than the entry's config where the entry says.
std::vector<std::size_t> live_equivalents(const Table& table, const KernelId& kernel,
                                          std::string_view key, std::span<const Config> candidates,
                                          const Choice& choice, bool worth_timing) {
  std::vector<std::size_t> out;
  const std::optional<TableEntry> entry = deciding_entry(table, kernel, key, candidates, choice);
  if (!entry) return out;
  const std::size_t fastest =
      std::min(kFastestEquivalents, entry->faster_equivalents.value_or(kFastestEquivalents));
  for (std::size_t n = 0; n < entry->equivalent.size(); ++n) {
    const Config& config = entry->equivalent[n];
    if (worth_timing && n >= fastest &&
        std::find(entry->ties.begin(), entry->ties.end(), config) == entry->ties.end())
      continue;
    // A member the table also flags is never launched in the entry's place.
    if (table_flags(table, kernel, kernel.name, config)) continue;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (i != choice.index && candidates[i] == config) {
        out.push_back(i);
        break;
      }
    }
  }
  return out;
}

}  // namespace

std::vector<std::size_t> equivalent_candidates(const Table& table, const KernelId& kernel,
                                               std::string_view key,
                                               std::span<const Config> candidates,
                                               const Choice& choice) {
  return live_equivalents(table, kernel, key, candidates, choice, /*worth_timing=*/false);
}

std::vector<std::size_t> equivalents_worth_timing(const Table& table, const KernelId& kernel,
                                                  std::string_view key,
                                                  std::span<const Config> candidates,
                                                  const Choice& choice) {
  return live_equivalents(table, kernel, key, candidates, choice, /*worth_timing=*/true);
}

std::vector<Config> autotune_configs(std::vector<Config> configs, const Policy& policy) {
  if (configs.empty() || !policy.pins()) return configs;
  const auto matched = match_block_sizes(configs, policy.block_sizes);
  const std::size_t chosen = matched ? *matched : cheapest(configs);
  return {std::move(configs[chosen])};
}

Choice decide(const KernelId& kernel, std::string_view key, std::span<const Config> candidates,
              const SelectionRules& rules, std::optional<std::uint64_t> chaos_rank) {
  if (!chaos_rank) return deterministic_choice(kernel, key, candidates, rules);
  const Choice choice = chaos_choice(kernel, key, candidates, *chaos_rank);
  if (rules.explanation)
    rules.explanation->push_back("chaos: rank " + std::to_string(*chaos_rank) +
                                 " picks candidate " + std::to_string(choice.index) +
                                 " on purpose (a positive control)");
  return choice;
}

}  // namespace tunelock
