// Turning record files into a table. A pure function of the files'
// contents: no clock, no file order, no file names. Per (kernel, key) the
// majority wins; ties go to the best aggregated timing when timing sidecars
// exist (the median of every rank's median for that candidate), then, as in
// Megatron's merge, to the smallest canonical JSON text of the full config
// (canonical_config_text), so either tool makes the same table. A config
// that any rank's audit flagged as nondeterministic, on any key of its
// kernel, is never pinned: its votes do not count, and the table lists it
// under its kernel (Table::nondeterministic) so the fallback rules skip it
// on every key. Reading the files is record_file.hpp's business, reporting
// the verdicts merge_report.hpp's.
#pragma once

#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tunelock/model/config.hpp"
#include "tunelock/records/record_file.hpp"
#include "tunelock/tables/table.hpp"

namespace tunelock {

// Every distinct winner of one key across ranks.
struct Vote {
  std::string signature;
  Config config;
  int count = 0;
  std::vector<double>
      timings_ms;  // every rank's median for this candidate, sorted; failures left out
};

// The candidate's aggregated timing, which breaks a tie in votes: the median
// of every rank's median, or kNoTiming, slower than any timing, when no rank
// timed it.
inline constexpr double kNoTiming = std::numeric_limits<double>::infinity();
double aggregated_ms(const Vote& vote);

// What settled a key: every rank chose alike, or the most votes, or (votes
// tied) the best aggregated timing, or (timings tied too, or absent) the
// smallest canonical config text.
enum class DecidedBy { unanimous, majority, timing, config_text };

// "unanimous", "majority", "timing" or "config_text".
std::string_view to_string(DecidedBy decided_by);

struct KeyVerdict {
  RecordKey key;
  std::vector<Vote> votes;  // most votes first, then the tie-break order
  // Configs some rank's audit flagged: sorted signatures. Their votes are
  // left out of `votes`; a key whose every vote was flagged has no votes.
  std::vector<std::string> nondeterministic;
  DecidedBy decided_by = DecidedBy::unanimous;
  // Configs bit-identical to the kept winner on every rank whose audit ran
  // both (at least one did), never flagged: signatures, fastest recorded
  // median first. The table entry lists them as "equivalent".
  std::vector<std::string> equivalent = {};
  // How many of `equivalent`'s first (fastest first) were timed faster than
  // the winner by the median over the ranks' medians.
  std::size_t faster_equivalents = 0;
  // Noise. The tie set: winners whose aggregated timing lies within the
  // ranks' own spread of the best-timed winner (at most its slowest rank's
  // median), sorted signatures; empty unless two or more tie. The table
  // keeps it beside the entry (TableEntry::ties).
  std::vector<std::string> ties = {};
  // Flip risk: of the `voters` ranks that voted on the key, how many, each
  // dropped alone, would change the kept config.
  int flips = 0;
  int voters = 0;
};

// Ranks chose differently, or some rank's audit flagged a candidate: what
// merge counts as a disagreement (keys reported only for their equivalent
// configs are not).
bool is_disagreement(const KeyVerdict& verdict);

struct MergeResult {
  std::unique_ptr<InMemoryTable> table;
  std::vector<KeyVerdict> disagreements;  // keys where ranks chose differently, sorted
  // One line per kernel whose records name different code identities: the
  // identity kept (most records; the lowest text on a tie) and the records
  // that disagree with it.
  std::vector<std::string> identity_conflicts = {};
};

// Every key's verdict, sorted by key. Two records with one origin, or of one
// rank, are an Error naming both: a rank never votes twice.
std::vector<KeyVerdict> tally(const std::vector<RecordFile>& records);

// REQUIRES: records non-empty. `arch` may be empty when the records hold a
// single architecture; otherwise it picks one (Error when it is absent).
MergeResult merge_records(const std::vector<RecordFile>& records, const std::string& arch,
                          const std::string& source);

// The verdicts a report names: keys where ranks chose differently, keys
// with a candidate some rank's audit flagged as nondeterministic, and keys
// whose winner has equivalent configs.
std::vector<KeyVerdict> reported_verdicts(const std::vector<RecordFile>& records);

}  // namespace tunelock
