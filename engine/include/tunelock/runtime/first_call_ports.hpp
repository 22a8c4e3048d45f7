// The driver's collaborators, one narrow port each: the table lookup, the
// outputs a first call leaves (log, record, audit, bits reports), consensus
// mode's memory, and the per-machine equivalents cache. The process Runtime
// implements all four (runtime_tables.cpp, runtime_outputs.cpp, and
// consensus.cpp's and equivalent_cache.cpp's memories); a test, or another host, drives the
// driver with fakes of its own (tests/conformance/first_call_ports.cpp), as
// XLA's autotuner takes its backend, profiler and cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunelock/base/notices.hpp"
#include "tunelock/decision/decision.hpp"
#include "tunelock/decision/policy.hpp"
#include "tunelock/logs/choice_log.hpp"
#include "tunelock/model/config.hpp"
#include "tunelock/model/kernel_id.hpp"
#include "tunelock/records/record_file.hpp"

namespace tunelock {

// The rules' answer for a key, from the arch's table, and the kernel's code
// compared with the code its entries were timed on.
class TableLookup {
 public:
  virtual ~TableLookup() = default;
  // The timing-free choice with its evidence (Runtime::pinned_decision).
  virtual Decision pinned_decision(std::string_view arch, const KernelId& kernel,
                                   std::string_view key, std::span<const Config> candidates,
                                   std::span<const std::string> nondeterministic_variants,
                                   std::optional<std::size_t> own_default) = 0;
  // Kept for records and compared with the table's (Runtime::note_identity).
  virtual void note_identity(std::string_view arch, const KernelId& kernel,
                             std::string_view identity) = 0;
};

// What a first call leaves behind.
class CallOutputs {
 public:
  virtual ~CallOutputs() = default;
  // Once per (arch, kernel, key) for observed kernels; true when new.
  virtual bool log_choice(std::string_view arch, const KernelId& kernel, std::string_view key,
                          const Config& chosen, ChoiceOrigin origin) = 0;
  // Record mode: the winner and every candidate's timings.
  virtual void record(const std::string& arch, const std::string& qualified, const std::string& key,
                      const Config& winner, std::vector<CandidateTiming> timings) = 0;
  // Audit mode's entry for a pinned key; returns its id (Runtime::audit_key).
  virtual std::size_t audit_key(std::string_view arch, const KernelId& kernel, std::string_view key,
                                std::span<const Config> candidates, const Decision& decision,
                                std::size_t launched, std::span<const CandidateTiming> timings,
                                std::optional<bool> repeats) = 0;
  // The pinned config's bits check: warns, or throws under verify_strict.
  virtual void note_bits_check(const KernelId& kernel, std::string_view key, const Config& pinned,
                               std::optional<bool> repeated) = 0;
  // Consensus: from the group's check `check` on, `key` launches `winner`
  // where it launched `first` (Runtime::log_consensus_switch).
  virtual void log_consensus_switch(std::string_view arch, std::string_view qualified,
                                    std::string_view key, std::string_view first,
                                    std::string_view winner, std::uint64_t check) = 0;
};

// What the group agreed a key launches, and at which of the group's checks.
struct AgreedWinner {
  std::string signature;
  std::uint64_t check = 0;
};

// Consensus mode: the keys timed and waiting for the next check, and the
// winners the group agreed on.
class ConsensusMemory {
 public:
  virtual ~ConsensusMemory() = default;
  virtual std::optional<AgreedWinner> winner(const RecordKey& key) const = 0;
  virtual bool timed(const RecordKey& key) const = 0;
  // A first call's timings, kept for the next check; `first` the
  // deterministic choice every rank launched.
  virtual void add_timings(const RecordKey& key, std::string first, Config local_winner,
                           std::vector<CandidateTiming> timings) = 0;
};

// TUNELOCK_EQUIVALENT=timed's picks on this machine.
class EquivalentMemory {
 public:
  virtual ~EquivalentMemory() = default;
  virtual std::optional<std::string> cached_equivalent(std::string_view arch,
                                                       std::string_view qualified,
                                                       std::string_view key) = 0;
  virtual void remember_equivalent(std::string_view arch, std::string_view qualified,
                                   std::string_view key, std::string signature) = 0;
};

// Everything the driver reads and writes besides the call's runner.
struct FirstCallPorts {
  const Policy& policy;
  Notices& notices;
  TableLookup& tables;
  CallOutputs& outputs;
  ConsensusMemory& consensus;
  EquivalentMemory& equivalents;
};

}  // namespace tunelock
