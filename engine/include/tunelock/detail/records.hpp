// What a `record` run captures on one rank: the winner of every timed
// (arch, kernel, key) and every candidate's timing. Written as
//   <prefix>.rank<N>.json          {arch: {qualified: {key: config}}}
//                                  (exactly Megatron's record layout)
//   <prefix>.rank<N>.timings.json  every candidate's timing + device provenance
// both atomically, at exit and on demand. Read back by record_file.hpp; the
// sidecar's one writer is timings_sidecar.hpp's timings_to_json.
// Internal (detail/): used by the runtime and tests, not part of the API;
// it may change between versions.
#pragma once

#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tunelock/config.hpp"
#include "tunelock/record_file.hpp"
#include "tunelock/table.hpp"

namespace tunelock {

// Now, in UTC, as records stamp `recorded_at` ("2026-12-01T18:00:00Z").
std::string recording_timestamp();

class RecordStore {
 public:
  void add(const std::string& arch, const std::string& qualified, const std::string& key,
           const Config& winner, std::vector<CandidateTiming> timings);
  void set_device(Provenance device);

  bool empty() const;
  void clear();

  // Writes both files for `rank`; does nothing when nothing was recorded.
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
  Provenance device_;
};

}  // namespace tunelock
