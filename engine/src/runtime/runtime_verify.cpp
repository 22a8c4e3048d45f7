// Verification in the process runtime: each group's agreement, the
// checks over a collective (all-gather, tree or slots), who reports a
// conflict, and the policy's cadence.
#include "tunelock/runtime/runtime.hpp"

#include "runtime/consensus.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/base/log.hpp"
#include "verify/slot_verify.hpp"
#include "verify/tree_verify.hpp"

namespace tunelock {

// A group's cursor and what it agreed on: the all-gather path folds batches
// into `agreement`, the tree path keeps hashes in `tree` (on rank 0).
struct Runtime::GroupState {
  std::size_t cursor = 0;
  std::uint64_t checks = 0;  // verify() calls so far: names the launch digest's key
  GroupAgreement agreement;
  detail::TreeAgreement tree;
  detail::SlotAgreement slots;
};

VerifyResult Runtime::verify(Collective& group) {
  const std::string id = group.group_id();
  const std::uint64_t generation_at_start = generation();
  std::shared_ptr<GroupState> state;
  {
    std::lock_guard lock(mutex_);
    std::shared_ptr<GroupState>& slot = groups_[id];
    if (!slot) slot = std::make_shared<GroupState>();
    state = slot;
  }
  const std::uint64_t check = state->checks++;
  if (launch_digest_) {
    log_.add(choice_log_key("watch", "tunelock.watch.launches", "check=" + std::to_string(check)),
             choice_log_value("launches=" + launch_digest_(), ChoiceOrigin::pinned));
  }
  std::size_t next_cursor = 0;
  VerifyResult result;
  // Everything this rank has sent the group, for a report's texts: the log
  // up to this check's cursor.
  auto everything_sent = [&] {
    std::size_t end = 0;
    std::vector<ChoiceEntry> all = log_.since(0, &end);
    all.resize(std::min(all.size(), next_cursor));
    return all;
  };
  if (group.has_all_reduce()) {
    std::vector<ChoiceHash>& fresh = state->tree.scratch.fresh;
    log_.hashes_since(state->cursor, &next_cursor, fresh);
    result = detail::verify_over_slots(group, fresh, everything_sent, state->slots);
  } else if (group.has_tree()) {
    std::vector<ChoiceHash>& fresh = state->tree.scratch.fresh;
    log_.hashes_since(state->cursor, &next_cursor, fresh);
    result = detail::verify_over_tree(group, fresh, everything_sent, state->tree);
  } else {
    const std::vector<ChoiceEntry> fresh = log_.since(state->cursor, &next_cursor);
    result = gather_and_fold(group, fresh, *state);
  }
  {
    std::lock_guard lock(mutex_);
    if (generation() != generation_at_start) {
      // The batch came from the previous policy's log: moving the new log's
      // cursor past entries nobody sent would be wrong.
      throw Error(
          "verify: a new policy was installed during this check; install policies at "
          "start-up, and call verify at step boundaries");
    }
    state->cursor = next_cursor;
  }
  // Consensus: only a check in which some rank logged something can carry
  // new timings (a first call logs its key), and every rank knows the
  // count, so all of them take the round or none does: an empty check costs
  // what it costs in pinned mode.
  if (policy()->effective_mode() == Mode::consensus && result.compared > 0 &&
      consensus_->decides_in(id) && consensus_round(group, check) > 0) {
    // The faces' cached choices are stale: they ask again and launch the winners.
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  report_conflicts(group, result);
  return result;
}

// Every rank's batch reaches every rank, which folds them all: the path for
// transports that only gather (a trainer's own MPI or NCCL).
VerifyResult Runtime::gather_and_fold(Collective& group, std::span<const ChoiceEntry> fresh,
                                      GroupState& state) {
  return state.agreement.fold(gather_batches(group, fresh));
}

// Every rank holds the same conflicts; this is the one place that decides
// which rank logs what. fold() returns each conflicting key once, so a round
// with conflicts has new ones: the group's lowest rank logs them in full,
// the others one line pointing to it. With verify_strict every rank raises,
// and the exception points to that report rather than repeating it: on 8
// ranks the report is printed once, not 9 times.
void Runtime::report_conflicts(const Collective& group, const VerifyResult& result) {
  if (result.conflicts.empty()) return;
  int reporter = group.world_rank(0);
  for (int r = 1; r < group.size(); ++r) reporter = std::min(reporter, group.world_rank(r));
  const std::string pointer =
      "autotune choices differ across ranks for " + std::to_string(result.conflicts.size()) +
      " new kernel/shape key(s); rank " + std::to_string(reporter) + " logs the full report";
  if (group.world_rank(group.rank()) == reporter) {
    logger().error("{}", conflict_report(result.conflicts));
  } else {
    logger().error("{}", pointer);
  }
  if (policy()->verify_strict) throw Error("verify_strict: " + pointer);
}

void Runtime::set_launch_digest_source(std::function<std::string()> source) {
  launch_digest_ = std::move(source);
}

bool Runtime::verify_due(std::int64_t iteration) const {
  const int every = policy()->verify_every;
  return every > 0 && iteration % every == 0;
}

std::optional<bool> Runtime::maybe_verify(std::int64_t iteration, Collective& group) {
  if (!verify_due(iteration)) return std::nullopt;
  return verify(group).agreed;
}

}  // namespace tunelock
