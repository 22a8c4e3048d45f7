#include "tunelock/runtime/runtime.hpp"

#include <cstdio>
#include <cstdlib>

#include "logs/watch_link.hpp"
#include "runtime/consensus.hpp"
#include "runtime/equivalent_cache.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/base/log.hpp"
#include "tunelock/base/rank_environment.hpp"
#include "tunelock/decision/policy_sources.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/tables/table_json.hpp"

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
  records_.set_batch_invariant(policy.batch_invariant);
  consensus_->clear();
  notices_.reset();
  generation_.fetch_add(1, std::memory_order_acq_rel);
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
