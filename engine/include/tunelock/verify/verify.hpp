// Cross-rank agreement on choices. Each check sends only the entries logged
// since the previous check in that group and compares the union with what
// was already agreed, so after warm-up a check moves an empty batch. A key
// some ranks never saw is not a conflict (pipeline stages run different
// kernels); a key with two values is. Every rank computes the same verdict
// from the same gathered data.
//
// Call it where all ranks arrive, such as a step boundary. Calling it at the
// moment of choice would deadlock: ranks reach a kernel at different times.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "tunelock/logs/choice_log.hpp"
#include "tunelock/verify/collective.hpp"

namespace tunelock {

// One rank's contribution to a round.
struct RankBatch {
  int rank = 0;
  std::vector<ChoiceEntry> entries;
};

struct Conflict {
  std::string key;
  std::map<std::string, std::set<int>> ranks_by_value;  // value -> ranks that chose it

  friend bool operator==(const Conflict&, const Conflict&) = default;
};

struct VerifyResult {
  bool agreed = true;               // this round and every earlier one in the group
  std::vector<Conflict> conflicts;  // found in this round, sorted by key
  std::size_t compared = 0;         // entries received this round, all ranks together
};

// Agreement state of one group: what has been agreed, and whether any round
// ever failed (a group's verdict stays false for the rest of the run).
class GroupAgreement {
 public:
  // Folds one round's batches into the state and returns the verdict.
  VerifyResult fold(std::span<const RankBatch> batches);

  std::size_t agreed_count() const { return agreed_.size(); }

 private:
  struct Agreed {
    std::string value;
    std::set<int> ranks;
  };
  std::map<std::string, Agreed> agreed_;
  std::set<std::string> conflicted_;  // reported once, never re-agreed
  bool failed_ = false;
};

struct ChoiceLogFile;

// A saved choice log with the name it was read from (a path, a file name).
using NamedLog = std::pair<std::string, const ChoiceLogFile*>;

// The run-time check over saved choice logs, offline: one round in which
// every rank sends its whole log. `tunelock verify` and the page's Run
// preview both call it. Throws Error naming the log when two logs claim
// one rank.
struct ChoiceLogCheck {
  VerifyResult result;
  std::size_t agreed_keys = 0;
};
ChoiceLogCheck check_choice_logs(std::span<const NamedLog> logs);

// "autotune choices differ across ranks for N key(s) ..." with each key, its
// values and the ranks that chose each. Empty when there is no conflict.
std::string conflict_report(std::span<const Conflict> conflicts);

// Verify batch wire format (FlatBuffers, file identifier TLVB).
std::string encode_batch(int rank, std::span<const ChoiceEntry> entries);
// Throws Error naming `origin` when the bytes are not a valid batch.
RankBatch decode_batch(std::string_view bytes, const std::string& origin);

// Every rank's `entries`, over the group's all-gather, in rank order, each
// batch checked (one per rank, claiming its own rank) and naming its world
// rank, so reports name processes a user can find.
std::vector<RankBatch> gather_batches(Collective& group, std::span<const ChoiceEntry> entries);

}  // namespace tunelock
