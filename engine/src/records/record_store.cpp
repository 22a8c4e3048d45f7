#include "tunelock/records/record_store.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <ctime>
#include <tuple>

#include "tunelock/base/version.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/model/config_json.hpp"
#include "tunelock/records/timings_sidecar.hpp"

namespace tunelock {

namespace fs = std::filesystem;

std::string recording_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return stamp;
}

void RecordStore::add(const std::string& arch, const std::string& qualified, const std::string& key,
                      const Config& winner, std::vector<CandidateTiming> timings) {
  std::lock_guard lock(mutex_);
  records_[arch][qualified][key] = Recorded{winner, std::move(timings)};
}

void RecordStore::set_device(Provenance device) {
  std::lock_guard lock(mutex_);
  device_ = std::move(device);
}

void RecordStore::set_batch_invariant(bool on) {
  std::lock_guard lock(mutex_);
  batch_invariant_ = on;
}

void RecordStore::add_identity(const std::string& arch, const std::string& qualified,
                               std::string identity) {
  if (identity.empty()) return;
  std::lock_guard lock(mutex_);
  identities_[arch].insert_or_assign(qualified, std::move(identity));
}

std::size_t RecordStore::add_audit(AuditEntry entry) {
  std::lock_guard lock(mutex_);
  audits_.push_back(std::move(entry));
  return audits_.size() - 1;
}

void RecordStore::count_audited_call(std::size_t id, std::int64_t calls) {
  std::lock_guard lock(mutex_);
  if (id < audits_.size()) audits_[id].calls += calls;
}

bool RecordStore::empty() const {
  std::lock_guard lock(mutex_);
  return records_.empty() && audits_.empty();
}

void RecordStore::clear() {
  std::lock_guard lock(mutex_);
  records_.clear();
  audits_.clear();
  identities_.clear();
}

fs::path RecordStore::record_file(const fs::path& prefix, int rank) {
  return rank_file(prefix, rank, rank_file_endings::kRecord);
}

fs::path RecordStore::timings_file(const fs::path& prefix, int rank) {
  return rank_file(prefix, rank, rank_file_endings::kTimings);
}

void RecordStore::write(const fs::path& prefix, int rank) const {
  nlohmann::json winners = nlohmann::json::object();
  RecordFile sidecar;  // the timing sidecar has one writer: timings_to_json
  AuditFile audit;
  {
    std::lock_guard lock(mutex_);
    audit.entries = audits_;
    audit.device = device_;
    if (records_.empty() && audits_.empty()) return;
    for (const auto& [arch, kernels] : records_) {
      for (const auto& [qualified, keys] : kernels) {
        for (const auto& [key, recorded] : keys) {
          winners[arch][qualified][key] = config_to_json(recorded.winner);
          sidecar.timings[{arch, qualified, key}] = recorded.timings;
        }
        if (auto by_arch = identities_.find(arch); by_arch != identities_.end())
          if (auto identity = by_arch->second.find(qualified); identity != by_arch->second.end())
            sidecar.identities[arch][qualified] = identity->second;
      }
    }
    sidecar.device = device_;
    sidecar.batch_invariant = batch_invariant_;
  }
  if (!audit.entries.empty()) {
    audit.rank = rank;
    audit.device.tool_version = std::string(tool_version());
    // Sorted, so two runs' files compare line by line.
    std::sort(audit.entries.begin(), audit.entries.end(),
              [](const AuditEntry& a, const AuditEntry& b) {
                return std::tie(a.arch, a.kernel, a.key) < std::tie(b.arch, b.kernel, b.key);
              });
    write_file_atomically(audit_file_path(prefix, rank), audit_to_json(audit));
  }
  if (winners.empty()) return;
  sidecar.rank = rank;
  sidecar.device.tool_version = std::string(tool_version());
  // The timings first: a record file is only ever beside its sidecar.
  write_file_atomically(timings_file(prefix, rank), timings_to_json(sidecar));
  write_file_atomically(record_file(prefix, rank), winners.dump(1) + "\n");
}

}  // namespace tunelock
