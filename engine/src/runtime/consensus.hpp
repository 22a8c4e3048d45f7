// Consensus mode's state on one rank (docs/consensus.md): the
// timings of keys first called since the last check, the winners the
// group agreed on, and, on the group's root, every rank's timings so far.
//
// A key's story: its first call launches the deterministic choice (what
// pinned launches) and times every live candidate as record mode does;
// the next check carries those timings up the group's tree (or over its
// all-gather), the root tallies every rank's timings with merge's rule
// (merge.hpp: votes, then the aggregated timing, then the config text;
// flagged configs never win) and sends the winners of the new keys down;
// from then on every rank that runs the key launches its winner. A key is
// decided once, at the first check after some rank timed it; ranks that
// reach it later launch the agreed winner from their first call and time
// nothing. At exit the root writes the table merge would write from the
// same timings.
//
// The exchange runs inside Runtime::verify, where every rank of the group
// arrives: never at the moment of choice, where ranks arrive at different
// times and a collective could hang.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tunelock/model/config.hpp"
#include "tunelock/records/record_file.hpp"
#include "tunelock/runtime/first_call_ports.hpp"
#include "tunelock/tables/table.hpp"
#include "tunelock/verify/collective.hpp"

namespace tunelock::detail {

using tunelock::AgreedWinner;

// A key decided in a check: every rank receives the same list.
struct Decided {
  RecordKey key;
  AgreedWinner winner;
};

// What a rank says of itself in a consensus round.
struct ConsensusSender {
  int world_rank = 0;
  std::string run;     // the record path's file name: merge's `run`
  std::string origin;  // the rank's record file, as merge names a vote
  Provenance device;
  std::map<std::string, KernelIdentities> identities;  // the rank's kernels' code, for the table
};

class Consensus final : public ConsensusMemory {
 public:
  // The first call of `key` on this rank timed every candidate:
  // `pinned_signature` is what it launched, `local_winner` this rank's
  // fastest unflagged config, `timings` every candidate's (with the bits
  // audit's flags and classes). Kept for the next check.
  void add_timings(const RecordKey& key, std::string pinned_signature, Config local_winner,
                   std::vector<CandidateTiming> timings) override;

  // Whether this rank timed `key` (its timings sent or waiting for a check).
  bool timed(const RecordKey& key) const override;

  // The key's agreed winner, once a check decided it.
  std::optional<AgreedWinner> winner(const RecordKey& key) const override;

  // What this rank launched for `key` before the group agreed (when it
  // timed it).
  std::optional<std::string> first_launched(const RecordKey& key) const;

  // Whether checks in `group_id` decide: the first group a consensus check
  // runs in is the one that decides; checks in other groups only verify.
  bool decides_in(const std::string& group_id);

  // One round in `group` (all its ranks call it): this rank's waiting
  // timings go up, the root tallies, every rank gets the winners of the
  // keys new in this round, keeps them and returns them. The waiting
  // timings are kept until a round succeeds. Throws Error on a lost or
  // late rank (as the collective names it) and on a bad batch, naming its
  // rank.
  std::vector<Decided> exchange(Collective& group, const ConsensusSender& me, std::uint64_t check);

  // Keys timed since the last round: what a table written now would lack.
  std::size_t waiting() const;

  // The root's tables, one per arch of the gathered timings, as merge
  // writes them from every voting rank's record (empty on other ranks).
  std::vector<std::unique_ptr<InMemoryTable>> tables() const;

  // True once per change of the gathered timings: a flush at the end of a
  // program and the one at exit write the tables once.
  bool tables_changed_since_written();

  // The records the root gathered, one per voting rank, for tests.
  std::vector<RecordFile> gathered() const;

  void clear();

 private:
  struct Waiting {
    Config local_winner;
    std::vector<CandidateTiming> timings;
  };
  std::vector<Decided> decide(const std::vector<RecordFile>& batches);

  mutable std::mutex mutex_;
  std::map<RecordKey, Waiting> waiting_;
  std::map<RecordKey, std::string> first_launched_;  // every key this rank timed
  std::map<RecordKey, AgreedWinner> winners_;
  std::map<int, RecordFile> gathered_;  // the root: world rank -> its timings so far
  std::set<RecordKey> flagged_keys_;    // the root: keys some rank's audit flagged a config of
  std::optional<std::string> group_;
  std::uint64_t changes_ = 0, written_at_ = 0;
};

}  // namespace tunelock::detail
