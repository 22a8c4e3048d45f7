// The process-wide state behind a policy: which policy is installed, the
// choices logged under it, the tables loaded for it, records being captured,
// and each verification group's agreement. A Runtime is one rank's view;
// process_runtime() is the one a program uses, tests may build several to
// play several ranks in one process.
//
// Thread-safe: many threads may choose, log and read at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>

#include "tunelock/base/notices.hpp"
#include "tunelock/decision/decision.hpp"
#include "tunelock/decision/policy.hpp"
#include "tunelock/decision/selection.hpp"
#include "tunelock/logs/choice_log.hpp"
#include "tunelock/records/audit_file.hpp"
#include "tunelock/records/record_store.hpp"
#include "tunelock/runtime/first_call_ports.hpp"
#include "tunelock/tables/table.hpp"
#include "tunelock/verify/collective.hpp"
#include "tunelock/verify/verify.hpp"

namespace tunelock {

namespace detail {
class Consensus;        // runtime/consensus.hpp: consensus mode's timings and winners
class EquivalentCache;  // runtime/equivalent_cache.hpp: this machine's timed equivalents
}  // namespace detail

// The process's implementation of the driver's ports (first_call_ports.hpp):
// its tables (runtime_tables.cpp), its outputs (runtime_outputs.cpp), its
// equivalents cache (runtime.cpp) and consensus mode's memory
// (consensus.cpp), behind the interfaces the driver takes.
class Runtime final : public TableLookup, public CallOutputs, public EquivalentMemory {
 public:
  // `notices` outlives the runtime; it is reset whenever the policy changes.
  Runtime(int rank, Notices& notices);
  ~Runtime() override;
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // ---- Policy ----

  // Replaces the installed policy. Validates it; in record mode creates the
  // record path's parent folders and fails, keeping the previous policy,
  // when they cannot be written. A pinned or audit policy whose table path
  // names something that does not exist or cannot be read is warned about
  // (an Error, keeping the previous policy, under on_miss=error or strict
  // provenance). A changed policy first writes pending
  // records, then resets per-policy state (choice log, group agreement,
  // tables, records, once-notices) and bumps generation(). Installing an
  // equal policy changes nothing.
  void install(const Policy& policy);

  // The installed policy; a default one (auto, nothing intercepted) before
  // any install.
  std::shared_ptr<const Policy> policy() const;

  // Changes whenever per-policy state was reset, so callers holding caches
  // of choices (the launcher) know to drop them.
  std::uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

  int rank() const { return rank_; }

  // The once-per-policy notices of this runtime (reset on policy change).
  Notices& notices() const { return notices_; }

  // ---- Choosing and logging ----

  // The timing-free choice under the installed policy (chaos when it asks
  // for it), with the arch's table from its table path loaded once per
  // policy. Logs the choice as pinned when `log` is true.
  // `nondeterministic_variants`: signatures of candidates the caller's
  // kernel declares racy (launcher variants); the fallback rules skip them,
  // as they skip the table's and the policy's.
  Choice pinned_choice(std::string_view arch, const KernelId& kernel, std::string_view key,
                       std::span<const Config> candidates, bool log = true,
                       std::span<const std::string> nondeterministic_variants = {});

  // pinned_choice with its evidence, for a first call: the table entries
  // skipped as stale and the deciding entry's equivalents among the
  // candidates (decision.hpp), so nothing downstream looks the table up
  // again. Logs nothing: the caller logs what it launches under.
  // `own_default`: the kernel's own untimed choice, which on_miss min_cost
  // takes (SelectionRules::own_default).
  Decision pinned_decision(std::string_view arch, const KernelId& kernel, std::string_view key,
                           std::span<const Config> candidates,
                           std::span<const std::string> nondeterministic_variants,
                           std::optional<std::size_t> own_default) override;
  Decision pinned_decision(std::string_view arch, const KernelId& kernel, std::string_view key,
                           std::span<const Config> candidates) {
    return pinned_decision(arch, kernel, key, candidates, {}, std::nullopt);
  }

  // What the first pinned call per key saw when it ran its config twice on
  // identical inputs: `repeated` true (same bits), false (bits changed), or
  // nullopt (the call declares nothing to compare). Changed bits warn once
  // per (kernel, key, config), or throw Error under verify_strict; nothing
  // to compare says so once per kernel. Never changes a choice: a rank's
  // observation must not split the ranks.
  void note_bits_check(const KernelId& kernel, std::string_view key, const Config& pinned,
                       std::optional<bool> repeated) override;

  // Logs a choice once per (arch, qualified, key) for kernels the policy
  // observes (in scope, not config-invariant). Returns true when new.
  bool log_choice(std::string_view arch, const KernelId& kernel, std::string_view key,
                  const Config& chosen, ChoiceOrigin origin) override;

  const ChoiceLog& choice_log() const { return log_; }
  std::string choice_digest() const;

  // The arch's table along the policy's table path, then the installed
  // tables; null when there is none. Loaded once per policy.
  std::shared_ptr<const Table> table_for(std::string_view arch);

  // Record mode: keeps a tuned key's winner and every candidate's timings
  // for the files written at exit.
  void record(const std::string& arch, const std::string& qualified, const std::string& key,
              const Config& winner, std::vector<CandidateTiming> timings) override {
    records_.add(arch, qualified, key, winner, std::move(timings));
  }
  const RecordStore& records() const { return records_; }

  // A kernel's first call for a key, when the kernel declares the identity
  // of its code ("triton:<hash>", "image:<hash>", "version:<text>"): kept
  // for the record, the choice-log file and consensus; under a policy that
  // reads tables, compared with the identity its table entries were timed
  // on. A mismatch warns once per kernel (TUNELOCK_IDENTITY=warn), throws
  // Error (strict) or is let be (ignore). Never on the hot path: once per
  // new key.
  void note_identity(std::string_view arch, const KernelId& kernel,
                     std::string_view identity) override;

  // TUNELOCK_EQUIVALENT=timed's pick for a key on this machine (its GPU,
  // driver and table), from the equivalents cache; remember_equivalent
  // keeps a fresh one, written at flush.
  std::optional<std::string> cached_equivalent(std::string_view arch, std::string_view qualified,
                                               std::string_view key) override;
  void remember_equivalent(std::string_view arch, std::string_view qualified, std::string_view key,
                           std::string signature) override;

  // ---- Consensus mode ----

  // The timings waiting for the next check and the agreed winners, as the
  // driver reads them (the rest of consensus mode is this runtime's own:
  // engine/src/runtime/consensus.hpp).
  ConsensusMemory& consensus_memory();

  // Logs that from the group's check `check` on, `key` launches `winner`
  // where it launched `first` (both signatures): the entry
  // `consensus|<qualified>|<arch>|<key> from <first> at check <n>` ->
  // `<winner>;consensus`, equal on every rank that switched.
  void log_consensus_switch(std::string_view arch, std::string_view qualified, std::string_view key,
                            std::string_view first, std::string_view winner,
                            std::uint64_t check) override;

  // Where consensus mode's root writes the table for `arch` at exit:
  // `<prefix>.tables/<arch>.json`, a folder to put on TUNELOCK_TABLE_PATH.
  static std::filesystem::path consensus_table_file(const std::filesystem::path& prefix,
                                                    std::string_view arch);

  // ---- Audit mode ----

  // Audit mode's first call of a pinned key, after every live candidate
  // was timed as record mode times them (`timings`, in candidate order,
  // with the bits audit's flags and classes): keeps an entry for the file
  // written at exit with the config launched (`launched`: the choice, or an
  // equivalent timed in its place), the rule that chose, whether a table
  // entry for the call was stale (`decision.stale`), the pinned config's
  // bits (`repeats`, else the audit's flag) and the entry's configs
  // (`decision.equivalent`) whose bits differ from it. Returns the entry's
  // id for count_audited_call.
  std::size_t audit_key(std::string_view arch, const KernelId& kernel, std::string_view key,
                        std::span<const Config> candidates, const Decision& decision,
                        std::size_t launched, std::span<const CandidateTiming> timings,
                        std::optional<bool> repeats) override;
  // One more call (or `calls`) of an audited key: the report weighs by them.
  void count_audited_call(std::size_t id, std::int64_t calls = 1) {
    records_.count_audited_call(id, calls);
  }

  // The running device, as the backend knows it: tables whose provenance
  // differs get a warning naming each difference, and record runs write it
  // into their timing sidecars.
  void set_device(Provenance device);

  // ---- Verification ----

  // One round in `group`: send what was logged since this group's last
  // check, compare, fold into the group's agreement. In consensus mode a
  // check in which some rank logged something also carries the timings of
  // keys first called since the last one; every rank receives the winners
  // of those keys and launches them from the next call on (generation()
  // changes when this rank's launches switch). In a round that finds
  // new conflicts the group's lowest rank logs the full report and the others
  // one line naming the count and that rank; with verify_strict, Error is
  // thrown on every rank. All ranks of the group must call it, each from
  // one thread at a time (a collective's rounds are sequential; the group's
  // buffers are kept from one check to the next).
  VerifyResult verify(Collective& group);

  // Each check's launch digest (watch_link.hpp): when set, verify() first
  // logs `watch|tunelock.watch.launches|check=<n>` (n counting the group's
  // checks) with the digest, so the group compares launches like choices.
  void set_launch_digest_source(std::function<std::string()> source);

  // verify() when the policy's verify_every divides `iteration`; nullopt
  // ("not checked") otherwise or when verification is off.
  std::optional<bool> maybe_verify(std::int64_t iteration, Collective& group);

  // Whether maybe_verify(iteration, ...) checks: ask before building a
  // collective, so a program that never verifies reads no rendezvous.
  bool verify_due(std::int64_t iteration) const;

  // ---- Output ----

  // Writes records (record, audit and consensus mode) now, and in consensus
  // mode the root's tables (consensus_table_file); `choice_log_prefix`
  // non-empty also dumps the choice log to `<prefix>.rank<N>.json`.
  void flush(const std::filesystem::path& choice_log_prefix = {});

  // `{"rank": N, "entries": {...}, "digest": "..."}`, atomically.
  void dump_choice_log(const std::filesystem::path& prefix) const;
  static std::filesystem::path choice_log_file(const std::filesystem::path& prefix, int rank);

 private:
  void reset_policy_state();
  Decision decide_pinned(std::string_view arch, const KernelId& kernel, std::string_view key,
                         std::span<const Config> candidates,
                         std::span<const std::string> nondeterministic_variants, bool details,
                         std::optional<std::size_t> own_default = std::nullopt);
  void write_pending_records(const Policy& policy);
  void write_consensus_tables(const Policy& policy);
  // The consensus round of a check (see verify); returns how many of this
  // rank's keys switched.
  std::size_t consensus_round(Collective& group, std::uint64_t check);
  // A pinned or audit policy's table path entries that no table can be read
  // from: a warning each, or an Error under on_miss=error or strict provenance.
  void check_table_path(const Policy& policy);

  const int rank_;
  Notices& notices_;

  mutable std::mutex mutex_;  // guards policy_, tables_, groups_
  std::shared_ptr<const Policy> policy_;
  std::atomic<std::uint64_t> generation_{0};
  std::map<std::string, std::shared_ptr<const Table>, std::less<>> tables_;
  Provenance device_;
  std::map<std::string, KernelIdentities> identities_;  // arch -> qualified -> identity
  ChoiceLog log_;
  std::function<std::string()> launch_digest_;
  RecordStore records_;
  std::unique_ptr<detail::Consensus> consensus_;
  std::unique_ptr<detail::EquivalentCache> equivalents_;
  std::map<std::string, std::string, std::less<>> table_digests_;  // arch -> digest, for the cache
  std::string equivalent_cache_key(std::string_view arch, std::string_view qualified,
                                   std::string_view key);

  // One per group; shared, so a check holds its group's state without the
  // lock while it waits on the network, and a policy change cannot free it.
  struct GroupState;
  std::map<std::string, std::shared_ptr<GroupState>> groups_;
  VerifyResult gather_and_fold(Collective& group, std::span<const ChoiceEntry> fresh,
                               GroupState& state);
  void report_conflicts(const Collective& group, const VerifyResult& result);
};

// TUNELOCK_CHOICE_LOG, the prefix choice logs are dumped to; empty when unset.
std::filesystem::path choice_log_prefix_from_environment();

// This process's runtime: rank from the launcher's variables, the process
// notices, and at exit it writes pending records and, when
// TUNELOCK_CHOICE_LOG is set, the choice log.
Runtime& process_runtime();

// Installs `policy` into process_runtime(), the one way every face installs:
// a TUNELOCK_CHOICE_LOG that cannot be written is refused first (an Error,
// the previous policy kept), then the notices of settings the policy does
// not use (MAMBA_DETERMINISTIC, a table path under auto, ...).
void install_into_process(const Policy& policy);

// The policy from this process's environment, installed with
// install_into_process. Returns it.
Policy install_from_environment();

}  // namespace tunelock
