// The process runtime's tables: the table path checked at install, each
// arch's table loaded once per policy with its provenance check, the rules'
// answer for a key (the driver's TableLookup port) and the kernels' code
// identities compared with the table's.
#include "tunelock/runtime/runtime.hpp"

#include "tunelock/base/error.hpp"
#include "tunelock/base/log.hpp"
#include "tunelock/decision/decision.hpp"
#include "tunelock/tables/table_files.hpp"

namespace tunelock {

void Runtime::check_table_path(const Policy& policy) {
  if (!policy.pins()) return;  // only pinned, audit and consensus read tables
  for (const std::string& problem : unreadable_table_path(policy.table_path)) {
    const std::string what = "table path entry " + problem + ": no table is read from it";
    if (policy.on_miss == OnMiss::error || policy.provenance == ProvenanceCheck::strict)
      throw Error(what + " (" +
                  (policy.on_miss == OnMiss::error ? "TUNELOCK_ON_MISS=error"
                                                   : "TUNELOCK_PROVENANCE=strict") +
                  " refuses a run whose tables cannot be found); fix TUNELOCK_TABLE_PATH");
    logger().warn(
        "{}, so every kernel it would have answered falls back to block sizes or the "
        "cheapest config; fix TUNELOCK_TABLE_PATH",
        what);
  }
}

std::shared_ptr<const Table> Runtime::table_for(std::string_view arch) {
  std::shared_ptr<const Policy> current;
  {
    std::lock_guard lock(mutex_);
    if (auto it = tables_.find(arch); it != tables_.end()) return it->second;
    current = policy_;
  }
  // Loaded outside the lock: a slow disk must not stall other threads' choices.
  std::shared_ptr<const Table> table = load_table_for_arch(arch, current->table_path, true);
  std::lock_guard lock(mutex_);
  // Once per table and policy (the table is cached below): one line naming
  // each difference, or under strict an Error every time it is asked for.
  if (table && current->provenance != ProvenanceCheck::ignore) {
    const std::string differences = provenance_difference_line(table->provenance(), device_);
    if (!differences.empty() && current->provenance == ProvenanceCheck::strict)
      throw Error("the " + std::string(arch) + " table was recorded on another machine (" +
                  differences +
                  ") and TUNELOCK_PROVENANCE=strict refuses it; record a table "
                  "here, or set TUNELOCK_PROVENANCE=warn to use it anyway");
    if (!differences.empty())
      logger().warn("the {} table was recorded on another machine ({}); using it anyway", arch,
                    differences);
  }
  if (policy_ != current) return table;  // a new policy came in meanwhile: do not cache
  return tables_.emplace(std::string(arch), table).first->second;
}

void Runtime::note_identity(std::string_view arch, const KernelId& kernel,
                            std::string_view identity) {
  if (identity.empty()) return;
  const std::string qualified = kernel.qualified();
  {
    std::lock_guard lock(mutex_);
    identities_[std::string(arch)].insert_or_assign(qualified, std::string(identity));
  }
  records_.add_identity(std::string(arch), qualified, std::string(identity));
  const std::shared_ptr<const Policy> current = policy();
  if (!current->pins() || current->identity == ProvenanceCheck::ignore) return;
  const std::shared_ptr<const Table> table = table_for(arch);
  if (!table) return;
  for (std::string_view name : table_names(kernel, qualified)) {
    if (!table->has_kernel(name)) continue;
    const std::string_view filed = table->identity(name);
    if (filed.empty() || filed == identity) return;  // not said, or the same code
    const std::string what =
        "kernel " + qualified + " on " + std::string(arch) +
        " is not the code its table entries were timed on (table: " + std::string(filed) +
        ", this run: " + std::string(identity) + ")";
    const std::string fix =
        "re-record the table with this code (TUNELOCK_MODE=record, then tunelock merge)";
    if (current->identity == ProvenanceCheck::strict)
      throw Error(what + " and TUNELOCK_IDENTITY=strict refuses it; " + fix +
                  ", or set TUNELOCK_IDENTITY=warn to use its entries anyway");
    if (notices_.first("identity|" + std::string(arch) + "|" + qualified))
      logger().warn("{}; using its entries anyway: {}, or set TUNELOCK_IDENTITY=ignore", what, fix);
    return;
  }
}

Decision Runtime::decide_pinned(std::string_view arch, const KernelId& kernel, std::string_view key,
                                std::span<const Config> candidates,
                                std::span<const std::string> nondeterministic_variants,
                                bool details, std::optional<std::size_t> own_default) {
  const std::shared_ptr<const Policy> current = policy();
  const std::shared_ptr<const Table> table = current->chaos ? nullptr : table_for(arch);
  DecisionRequest request;
  request.arch = std::string(arch);
  request.kernel = kernel;
  request.key = std::string(key);
  request.candidates = candidates;
  request.table = table.get();
  request.block_sizes = current->block_sizes;
  request.on_miss = current->on_miss;
  if (current->chaos) request.chaos_rank = static_cast<std::uint64_t>(rank_);
  request.declared_nondeterministic = current->nondeterministic;
  request.nondeterministic_variants = nondeterministic_variants;
  request.own_default = own_default;
  if (!table && !current->chaos) {
    const std::string searched = table_search_text(current->table_path, true);
    request.tables_searched = searched.empty()
                                  ? "no table path is set (TUNELOCK_TABLE_PATH)"
                                  : "no " + std::string(arch) + " table in " + searched;
  }
  request.notices = &notices_;  // once per policy, logged
  request.collect_warnings = false;
  request.explain = false;
  request.details = details;
  return make_decision(request);
}

Choice Runtime::pinned_choice(std::string_view arch, const KernelId& kernel, std::string_view key,
                              std::span<const Config> candidates, bool log,
                              std::span<const std::string> nondeterministic_variants) {
  const Choice choice =
      decide_pinned(arch, kernel, key, candidates, nondeterministic_variants, false).choice;
  if (log) log_choice(arch, kernel, key, candidates[choice.index], ChoiceOrigin::pinned);
  return choice;
}

Decision Runtime::pinned_decision(std::string_view arch, const KernelId& kernel,
                                  std::string_view key, std::span<const Config> candidates,
                                  std::span<const std::string> nondeterministic_variants,
                                  std::optional<std::size_t> own_default) {
  return decide_pinned(arch, kernel, key, candidates, nondeterministic_variants, true, own_default);
}

}  // namespace tunelock
