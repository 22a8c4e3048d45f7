// What first calls leave in the process runtime (the driver's CallOutputs
// port): the choice log and its file, records, audit entries and the bits
// checks' reports.
#include "tunelock/runtime/runtime.hpp"

#include <algorithm>

#include "tunelock/base/error.hpp"
#include "tunelock/base/log.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/logs/choice_log_file.hpp"
#include "tunelock/logs/class_entry.hpp"

namespace tunelock {

void Runtime::write_pending_records(const Policy& policy) {
  const Mode mode = policy.effective_mode();
  if ((mode == Mode::record || mode == Mode::audit || mode == Mode::consensus) && !records_.empty())
    records_.write(policy.record_path, rank_);
}

std::size_t Runtime::audit_key(std::string_view arch, const KernelId& kernel, std::string_view key,
                               std::span<const Config> candidates, const Decision& decision,
                               std::size_t launched, std::span<const CandidateTiming> timings,
                               std::optional<bool> repeats) {
  if (timings.size() != candidates.size() || launched >= candidates.size())
    throw Error("audit of " + kernel.qualified() + " [" + std::string(key) +
                "]: " + std::to_string(timings.size()) + " timings for " +
                std::to_string(candidates.size()) + " candidates");
  const Choice& choice = decision.choice;
  AuditEntry entry;
  entry.arch = std::string(arch);
  entry.kernel = kernel.qualified();
  entry.key = std::string(key);
  entry.pinned = signature(candidates[launched]);
  entry.reason = std::string(to_string(choice.reason));
  // Stale: the table holds an entry for the call that names none of the
  // live candidates, so a later rule chose.
  entry.stale = choice.reason != Reason::table && choice.reason != Reason::table_wildcard &&
                !decision.stale.empty();
  for (const CandidateTiming& t : timings)
    entry.candidates.push_back({t.signature, t.median_ms, t.nondeterministic});
  // Bits: the pinned config's own check, else the audit's flag; then the
  // entry's config and its equivalents against what launched, by class.
  const bool compared = std::any_of(timings.begin(), timings.end(), [](const CandidateTiming& t) {
    return t.bit_class.has_value() || t.nondeterministic;
  });
  entry.repeats = repeats    ? repeats
                  : compared ? std::optional<bool>(!timings[launched].nondeterministic)
                             : std::nullopt;
  std::vector<std::size_t> group = decision.equivalent;
  group.push_back(choice.index);
  for (std::size_t i : group) {
    if (i == launched || !compared) continue;
    if (timings[i].nondeterministic || timings[i].bit_class != timings[launched].bit_class)
      entry.equivalent_differs.push_back(timings[i].signature);
  }
  std::sort(entry.equivalent_differs.begin(), entry.equivalent_differs.end());
  return records_.add_audit(std::move(entry));
}

void Runtime::note_bits_check(const KernelId& kernel, std::string_view key, const Config& pinned,
                              std::optional<bool> repeated) {
  const std::string qualified = kernel.qualified();
  if (!repeated) {
    if (notices_.first("unchecked-bits|" + qualified))
      logger().warn("{}", unchecked_bits_message(qualified));
    return;
  }
  if (*repeated) return;
  const std::string message = changed_bits_message(qualified, key, signature(pinned));
  if (policy()->verify_strict) throw Error(message);
  if (notices_.first("changed-bits|" + qualified + "|" + std::string(key) + "|" +
                     signature(pinned)))
    logger().warn("{}", message);
}

bool Runtime::log_choice(std::string_view arch, const KernelId& kernel, std::string_view key,
                         const Config& chosen, ChoiceOrigin origin) {
  if (!policy()->observes(kernel)) return false;  // out of scope or config-invariant
  const std::string launched = signature(chosen);
  const bool added =
      log_.add(choice_log_key(arch, kernel.qualified(), key), choice_log_value(launched, origin));
  // A batch-invariant kernel's class, under the key of every size: what
  // ranks and runs at other sizes are compared by (logs/class_entry.hpp).
  if (added && origin == ChoiceOrigin::pinned)
    if (const std::shared_ptr<const Table> table = table_for(arch))
      if (std::optional<ChoiceEntry> entry =
              class_choice_entry(*table, arch, kernel, key, launched))
        log_.add(std::move(entry->key), std::move(entry->value));
  return added;
}

std::string Runtime::choice_digest() const { return tunelock::choice_digest(log_.snapshot()); }
std::filesystem::path Runtime::choice_log_file(const std::filesystem::path& prefix, int rank) {
  return rank_file(prefix, rank, rank_file_endings::kChoiceLog);
}

void Runtime::dump_choice_log(const std::filesystem::path& prefix) const {
  ChoiceLogFile file{rank_, log_.snapshot(), {}};
  {
    std::lock_guard lock(mutex_);
    for (const auto& [arch, kernels] : identities_)
      for (const auto& [qualified, identity] : kernels)
        file.identities[arch + "|" + qualified] = identity;
  }
  write_file_atomically(choice_log_file(prefix, rank_), choice_log_to_json(file));
}

}  // namespace tunelock
