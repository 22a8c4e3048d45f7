// Consensus mode in the process runtime: the driver's ConsensusMemory, each
// check's round, the switches it logs and the tables the root writes.
#include "tunelock/runtime/runtime.hpp"

#include "runtime/consensus.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/base/log.hpp"
#include "tunelock/base/version.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/tables/table_files.hpp"

namespace tunelock {

ConsensusMemory& Runtime::consensus_memory() { return *consensus_; }

void Runtime::write_consensus_tables(const Policy& policy) {
  if (policy.effective_mode() != Mode::consensus) return;
  if (const std::size_t waiting = consensus_->waiting();
      waiting > 0 && notices_.first("consensus-waiting|" + std::to_string(waiting))) {
    logger().warn(
        "consensus: {} key(s) were first called after the last check: their timings are in "
        "this rank's record file, not in the table; check at the last step too",
        waiting);
  }
  if (!consensus_->tables_changed_since_written()) return;
  for (const std::unique_ptr<InMemoryTable>& table : consensus_->tables()) {
    const std::filesystem::path path = consensus_table_file(policy.record_path, table->arch());
    ensure_writable_parent(path);
    write_table_file(*table, path);
    logger().info("consensus: wrote {} ({} entries from {} rank(s))", path.string(),
                  table->entry_count(), table->provenance().ranks);
  }
}

std::filesystem::path Runtime::consensus_table_file(const std::filesystem::path& prefix,
                                                    std::string_view arch) {
  return std::filesystem::path(prefix.string() + ".tables") / (std::string(arch) + ".json");
}

void Runtime::log_consensus_switch(std::string_view arch, std::string_view qualified,
                                   std::string_view key, std::string_view first,
                                   std::string_view winner, std::uint64_t check) {
  const std::string where = std::string(arch) + "|" + std::string(key) + " from " +
                            std::string(first) + " at check " + std::to_string(check);
  log_.add(choice_log_key("consensus", qualified, where),
           choice_log_value(winner, ChoiceOrigin::consensus));
}

std::size_t Runtime::consensus_round(Collective& group, std::uint64_t check) {
  detail::ConsensusSender me;
  const std::shared_ptr<const Policy> current = policy();
  me.world_rank = rank_;
  me.run = std::filesystem::path(current->record_path).filename().string();
  me.origin = RecordStore::record_file(current->record_path, rank_).string();
  {
    std::lock_guard lock(mutex_);
    me.device = device_;
    me.identities = identities_;
  }
  me.device.tool_version = std::string(tool_version());
  std::size_t switched = 0;
  for (const detail::Decided& d : consensus_->exchange(group, me, check)) {
    const std::optional<std::string> first = consensus_->first_launched(d.key);
    if (!first || *first == d.winner.signature) continue;  // never ran here, or no change
    log_consensus_switch(d.key.arch, d.key.kernel, d.key.key, *first, d.winner.signature,
                         d.winner.check);
    ++switched;
  }
  return switched;
}

}  // namespace tunelock
