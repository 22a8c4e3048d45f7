// Turning record files into a table. A pure function of the files'
// contents: no clock, no file order, no file names. Per (kernel, key) the
// majority wins; ties go to the best aggregated timing when timing sidecars
// exist (the median of every rank's median for that candidate), then, as in
// Megatron's merge, to the smallest canonical JSON text of the full config
// (canonical_config_text), so either tool makes the same table. A config
// that any rank's audit flagged as nondeterministic is never pinned: its
// votes do not count.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "tunelock/config.hpp"
#include "tunelock/table.hpp"

namespace tunelock {

// (arch, qualified kernel, tuning key)
using RecordKey = std::tuple<std::string, std::string, std::string>;

struct TimedCandidate {
  std::string signature;
  std::optional<double> median_ms;  // empty: failed to run
  bool nondeterministic = false;    // the audit saw it give different bits
};

// One rank's record file, with its timing sidecar when there is one.
struct RecordFile {
  std::string origin;  // for messages
  std::map<RecordKey, Config> winners;
  bool has_timings = false;
  int rank = -1;      // from the sidecar, else the `.rank<N>.json` name; -1 unknown
  Provenance device;  // from the sidecar
  std::map<RecordKey, std::vector<TimedCandidate>> timings;
};

// `{arch: {qualified: {key: config}}}`. Throws Error naming origin and path.
RecordFile record_from_json(std::string_view text, const std::string& origin);

// Adds a timing sidecar's contents, JSON or binary (told apart by the
// binary file identifier). Throws Error naming origin and the problem.
void add_timings_from_json(RecordFile& record, std::string_view text, const std::string& origin);
void add_timings(RecordFile& record, std::string_view bytes, const std::string& origin);

// A record's timings and device as a sidecar: canonical JSON, or binary
// (schemas/record_timings.fbs). Each converts to the other without loss.
std::string timings_to_json(const RecordFile& record);
std::string timings_to_binary(const RecordFile& record);

// Reads `<prefix>.rankN.json` and, when present beside it, its sidecar
// `<prefix>.rankN.timings.json` (or the binary `.timings.tlrt`).
RecordFile load_record_file(const std::filesystem::path& path);

// Loads each file; the same file named twice (by any spelling) is an Error.
std::vector<RecordFile> load_record_files(const std::vector<std::filesystem::path>& paths);

// Every distinct winner of one key across ranks.
struct Vote {
  std::string signature;
  Config config;
  int count = 0;
  std::vector<double>
      timings_ms;  // every rank's median for this candidate, sorted; failures left out
};

struct KeyVerdict {
  RecordKey key;
  std::vector<Vote> votes;  // most votes first, then the tie-break order
  // Configs some rank's audit flagged: sorted signatures. Their votes are
  // left out of `votes`; a key whose every vote was flagged has no votes.
  std::vector<std::string> nondeterministic;
  std::string decided_by;   // "unanimous", "majority", "timing" or "config_text"
};

struct MergeResult {
  std::unique_ptr<InMemoryTable> table;
  std::vector<KeyVerdict> disagreements;  // keys where ranks chose differently, sorted
};

// Every key's verdict, sorted by key. Two records with one origin, or of one
// rank, are an Error naming both: a rank never votes twice.
std::vector<KeyVerdict> tally(const std::vector<RecordFile>& records);

// REQUIRES: records non-empty. `arch` may be empty when the records hold a
// single architecture; otherwise it picks one (Error when it is absent).
MergeResult merge_records(const std::vector<RecordFile>& records, const std::string& arch,
                          const std::string& source);

// The verdicts a report names: keys where ranks chose differently, and keys
// with a candidate some rank's audit flagged as nondeterministic.
std::vector<KeyVerdict> reported_verdicts(const std::vector<RecordFile>& records);

// One verdict as JSON: {"arch", "kernel", "key", "winners": [{"signature",
// "votes", "timings_ms"}], "nondeterministic", "kept" (null when nothing
// could be kept), "decided_by"}. What `tunelock report --json` prints.
nlohmann::json verdict_to_json(const KeyVerdict& verdict);

// The disagreement report: each key, its winners with vote counts and, where
// timings exist, the spread that explains it. Empty when all ranks agreed.
std::string disagreement_report(const std::vector<KeyVerdict>& disagreements);

}  // namespace tunelock
