#include "tunelock/runtime/runtime.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "logs/watch_link.hpp"
#include "runtime/consensus.hpp"
#include "runtime/equivalent_cache.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/base/log.hpp"
#include "tunelock/base/rank_environment.hpp"
#include "tunelock/base/version.hpp"
#include "tunelock/decision/decision.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/logs/choice_log_file.hpp"
#include "tunelock/decision/policy_sources.hpp"
#include "tunelock/tables/table_files.hpp"
#include "tunelock/tables/table_json.hpp"
#include "verify/slot_verify.hpp"
#include "verify/tree_verify.hpp"

namespace tunelock {

Runtime::Runtime(int rank, Notices& notices)
    : rank_(rank),
      notices_(notices),
      policy_(std::make_shared<const Policy>()),
      consensus_(std::make_unique<detail::Consensus>()),
      equivalents_(std::make_unique<detail::EquivalentCache>()) {}

Runtime::~Runtime() = default;

std::shared_ptr<const Policy> Runtime::policy() const {
  std::lock_guard lock(mutex_);
  return policy_;
}

void Runtime::install(const Policy& policy) {
  policy.validate();
  const Mode mode = policy.effective_mode();
  if (mode == Mode::record || mode == Mode::audit || mode == Mode::consensus) {
    // Fail now, while the previous policy still stands, rather than at exit
    // after a whole run of tuning.
    ensure_writable_parent(RecordStore::record_file(policy.record_path, rank_));
  }
  std::shared_ptr<const Policy> previous;
  {
    std::lock_guard lock(mutex_);
    if (*policy_ == policy) return;
    previous = policy_;
  }
  check_table_path(policy);
  write_pending_records(*previous);
  write_consensus_tables(*previous);
  {
    std::lock_guard lock(mutex_);
    policy_ = std::make_shared<const Policy>(policy);
    tables_.clear();
    groups_.clear();
    identities_.clear();
    table_digests_.clear();
  }
  equivalents_->write();  // what the previous policy learned
  equivalents_->open(policy.equivalent == Equivalent::timed
                         ? detail::EquivalentCache::path_from_environment()
                         : std::filesystem::path());
  log_.clear();
  records_.clear();
  consensus_->clear();
  notices_.reset();
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

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

void Runtime::write_pending_records(const Policy& policy) {
  const Mode mode = policy.effective_mode();
  if ((mode == Mode::record || mode == Mode::audit || mode == Mode::consensus) && !records_.empty())
    records_.write(policy.record_path, rank_);
}

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

std::string Runtime::equivalent_cache_key(std::string_view arch, std::string_view qualified,
                                          std::string_view key) {
  const std::shared_ptr<const Table> table = table_for(arch);
  std::lock_guard lock(mutex_);
  auto digest = table_digests_.find(arch);
  if (digest == table_digests_.end()) {
    // The table's canonical text, hashed once per table: a re-merged table
    // (other entries, other equivalents) is timed afresh.
    const std::string text = table ? table_to_json(*table) : std::string();
    digest =
        table_digests_.emplace(std::string(arch), tunelock::choice_digest({{"table", text}})).first;
  }
  return detail::equivalent_cache_key(device_.device_name, device_.driver_version, digest->second,
                                      std::string(arch), std::string(qualified), std::string(key));
}

std::optional<std::string> Runtime::cached_equivalent(std::string_view arch,
                                                      std::string_view qualified,
                                                      std::string_view key) {
  return equivalents_->find(equivalent_cache_key(arch, qualified, key));
}

void Runtime::remember_equivalent(std::string_view arch, std::string_view qualified,
                                  std::string_view key, std::string signature) {
  equivalents_->remember(equivalent_cache_key(arch, qualified, key), std::move(signature));
}

void Runtime::set_device(Provenance device) {
  records_.set_device(device);
  std::lock_guard lock(mutex_);
  device_ = std::move(device);
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
  return log_.add(choice_log_key(arch, kernel.qualified(), key),
                  choice_log_value(signature(chosen), origin));
}

std::string Runtime::choice_digest() const { return tunelock::choice_digest(log_.snapshot()); }

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

void Runtime::flush(const std::filesystem::path& choice_log_prefix) {
  write_pending_records(*policy());
  write_consensus_tables(*policy());
  equivalents_->write();
  if (!choice_log_prefix.empty()) dump_choice_log(choice_log_prefix);
}

namespace {

// Exit status of a process whose records or choice log could not be
// written at exit (EX_IOERR): a job must not look successful without them.
constexpr int kExitWriteFailed = 74;

// At exit nothing may throw: report, then end with a failing status, since
// a trainer that exits 0 without its log looks reproducible and is not.
void flush_at_exit() {
  try {
    process_runtime().flush(choice_log_prefix_from_environment());
  } catch (const std::exception& e) {
    logger().error("writing records or the choice log at exit failed: {}", e.what());
    logger().flush();
    std::fflush(nullptr);
    std::_Exit(kExitWriteFailed);
  }
}

}  // namespace

std::filesystem::path choice_log_prefix_from_environment() {
  const std::string prefix = env_value(process_environment(), env_names::kChoiceLog);
  if (prefix.ends_with('/')) {  // as for TUNELOCK_RECORD: a prefix, never a folder
    throw Error(std::string(env_names::kChoiceLog) + "='" + prefix +
                "' ends in '/': it is a file prefix (<prefix>.rank<N>.json), not a folder; "
                "e.g. '" +
                prefix + "choices'");
  }
  return prefix;
}

Runtime& process_runtime() {
  static Runtime* runtime = [] {
    logger();  // reads TUNELOCK_LOG_LEVEL now: a bad value is said even if nothing else logs
    // Leaked on purpose: it must outlive every static that may still choose
    // during shutdown, and the atexit hook uses it.
    auto* instance =
        new Runtime(rank_from_environment(process_environment()).rank, process_notices());
    instance->set_launch_digest_source(watch_digest_source(process_environment()));
    std::atexit(flush_at_exit);
    return instance;
  }();
  return *runtime;
}

void install_into_process(const Policy& policy) {
  const Environment env = process_environment();
  Runtime& runtime = process_runtime();
  // A choice log that cannot be written fails now, as a record path does,
  // not at exit after the whole job.
  if (const std::filesystem::path prefix = choice_log_prefix_from_environment(); !prefix.empty())
    ensure_writable_parent(Runtime::choice_log_file(prefix, runtime.rank()));
  runtime.install(policy);
  warn_if_mamba_env_ignored(env, policy, process_notices());
  warn_if_settings_ignored(env, policy, process_notices());
}

Policy install_from_environment() {
  Policy policy = policy_from_environment(process_environment());
  install_into_process(policy);
  return policy;
}

}  // namespace tunelock
