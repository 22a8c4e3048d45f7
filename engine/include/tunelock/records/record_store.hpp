// What a `record` or `audit` run captures on one rank, written at exit and
// on demand, atomically:
//   <prefix>.rank<N>.json          record: the winner of every timed (arch,
//                                  kernel, key), exactly Megatron's layout
//   <prefix>.rank<N>.timings.json  record: every candidate's timing + device
//   <prefix>.rank<N>.audit.json    audit: what each pinned key's first call
//                                  found, with its calls (audit_file.hpp)
// Read back by record_file.hpp and audit_file.hpp; the sidecar's one writer
// is timings_sidecar.hpp's timings_to_json.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tunelock/model/config.hpp"
#include "tunelock/records/audit_file.hpp"
#include "tunelock/records/record_file.hpp"
#include "tunelock/tables/table.hpp"

namespace tunelock {

// Now, in UTC, as records stamp `recorded_at` ("2026-12-01T18:00:00Z").
std::string recording_timestamp();

class RecordStore {
 public:
  void add(const std::string& arch, const std::string& qualified, const std::string& key,
           const Config& winner, std::vector<CandidateTiming> timings);
  // Audit mode's first call of a pinned key; returns the id its later
  // calls are counted against (count_audited_call), for the weighted regret.
  std::size_t add_audit(AuditEntry entry);
  void count_audited_call(std::size_t id, std::int64_t calls = 1);

  void set_device(Provenance device);
  // Whether the run records under TUNELOCK_BATCH_INVARIANT (the sidecar says so).
  void set_batch_invariant(bool on);
  // The identity of the code `qualified` runs on `arch` (kept once per
  // kernel; the sidecar lists it for the kernels recorded).
  void add_identity(const std::string& arch, const std::string& qualified, std::string identity);

  bool empty() const;
  void clear();

  // Writes the files for `rank` of what was captured: the record and its
  // sidecar when something was recorded, the audit file when something was
  // audited; nothing when neither.
  void write(const std::filesystem::path& prefix, int rank) const;

  static std::filesystem::path record_file(const std::filesystem::path& prefix, int rank);
  static std::filesystem::path timings_file(const std::filesystem::path& prefix, int rank);

 private:
  struct Recorded {
    Config winner;
    std::vector<CandidateTiming> timings;
  };
  mutable std::mutex mutex_;
  // arch -> qualified -> key
  std::map<std::string, std::map<std::string, std::map<std::string, Recorded>>> records_;
  std::vector<AuditEntry> audits_;
  Provenance device_;
  bool batch_invariant_ = false;
  std::map<std::string, KernelIdentities> identities_;  // arch -> qualified -> identity
};

}  // namespace tunelock
