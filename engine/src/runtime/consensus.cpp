#include "runtime/consensus.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "io/json_checks.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/io/json_reader.hpp"
#include "tunelock/io/rank_files.hpp"
#include "tunelock/model/config_json.hpp"
#include "tunelock/records/merge.hpp"
#include "tunelock/records/timings_sidecar.hpp"

namespace tunelock::detail {
namespace {

using nlohmann::json;

// One rank's batch: its world rank and its waiting keys as a record file and
// its timing sidecar would hold them, so the root reads them with the
// readers `tunelock merge` uses, and tallies exactly what merge would.
json batch_json(const ConsensusSender& me,
                const std::map<RecordKey, std::pair<Config, std::vector<CandidateTiming>>>& keys) {
  json winners = json::object();
  RecordFile sidecar;
  sidecar.rank = me.world_rank;
  sidecar.device = me.device;
  for (const auto& [key, kept] : keys) {
    winners[key.arch][key.kernel][key.key] = config_to_json(kept.first);
    sidecar.timings[key] = kept.second;
    if (auto arch = me.identities.find(key.arch); arch != me.identities.end())
      if (auto identity = arch->second.find(key.kernel); identity != arch->second.end())
        sidecar.identities[key.arch].insert(*identity);
  }
  return json{{"rank", me.world_rank},
              {"origin", me.origin},
              {"run", me.run},
              {"record", winners.dump()},
              {"timings", timings_to_json(sidecar)}};
}

RecordFile batch_record(const json& batch, int from_group_rank) {
  using namespace json_checks;
  const std::string where =
      "consensus check: the timings from group rank " + std::to_string(from_group_rank);
  if (!batch.is_object())
    throw Error(where + " are not a consensus batch (rank, origin, run, record, timings)");
  // Each member named where it is missing or of the wrong type: a peer's
  // payload is read as strictly as a file.
  auto member = [&](std::string_view field) -> const json& {
    const json* found = find_member(batch, field);
    if (!found) throw Error(where + ": " + std::string(field) + ": missing");
    return *found;
  };
  const int rank = static_cast<int>(require_int(member("rank"), where + ": rank", 0, kMaxRank));
  const std::string origin = require_string(member("origin"), where + ": origin");
  const std::string run = require_string(member("run"), where + ": run");
  const std::string record_text = require_string(member("record"), where + ": record");
  const std::string timings_text = require_string(member("timings"), where + ": timings");
  RecordFile record = record_from_json(record_text, where + " (" + origin + ")");
  add_timings_from_json(record, timings_text, where + " (" + origin + ")");
  record.origin = origin;
  record.run = run;
  record.rank = rank;
  return record;
}

// Partials carry every batch of the sender's subtree; the root's verdict
// carries the winners of this round's new keys, or the error every rank
// then raises (a bad batch must not leave the other ranks waiting).
class TimingsRound final : public TreeReduction {
 public:
  using Decide = std::function<std::vector<Decided>(const std::vector<RecordFile>&)>;
  TimingsRound(json own, std::uint64_t check, Decide decide)
      : check_(check), decide_(std::move(decide)) {
    if (!own.is_null()) batches_.push_back(std::move(own));
  }

  void absorb(int from_group_rank, std::string_view partial) override {
    if (!error_.empty()) return;
    // The engine's reader, as for a file: a peer's payload nested deeper
    // than its limit is refused, never copied or printed recursively.
    json batches;
    try {
      batches = parse_json(partial, "partial");
    } catch (const Error& e) {
      error_ = "consensus check: group rank " + std::to_string(from_group_rank) +
               " sent a partial that is not a JSON array of batches (" + e.what() + ")";
      return;
    }
    if (batches.is_object() && batches.contains("error") && batches["error"].is_string()) {
      error_ = batches["error"].get<std::string>();  // found below this rank: passed up
      return;
    }
    if (!batches.is_array()) {
      error_ = "consensus check: group rank " + std::to_string(from_group_rank) +
               " sent a partial that is not a JSON array of batches";
      return;
    }
    for (const json& batch : batches) {
      batches_.push_back(batch);
      senders_.push_back(from_group_rank);
    }
  }

  std::string_view partial() override {
    text_ = error_.empty() ? batches_.dump() : json{{"error", error_}}.dump();
    return text_;
  }

  std::string_view verdict() override {
    json out{{"check", check_}};
    if (error_.empty()) {
      try {
        std::vector<RecordFile> records;
        for (std::size_t i = 0; i < batches_.size(); ++i)
          records.push_back(
              batch_record(batches_[i], i < own_count() ? 0 : senders_[i - own_count()]));
        json winners = json::array();
        for (const Decided& d : decide_(records))
          winners.push_back({d.key.arch, d.key.kernel, d.key.key, d.winner.signature});
        out["winners"] = std::move(winners);
      } catch (const Error& e) {
        error_ = e.what();
      }
    }
    if (!error_.empty()) out = json{{"check", check_}, {"error", error_}};
    text_ = out.dump();
    return text_;
  }

 private:
  // The root's own batch, when it sent one, comes first.
  std::size_t own_count() const { return batches_.size() - senders_.size(); }

  std::uint64_t check_;
  Decide decide_;
  json batches_ = json::array();
  std::vector<int> senders_;  // group rank each absorbed batch came through
  std::string text_, error_;
};

// Every rank reads the verdict; a malformed one is an Error naming the
// member, never a JSON library exception.
std::vector<Decided> read_verdict(const std::string& text, std::uint64_t check) {
  using namespace json_checks;
  const std::string where = "consensus check " + std::to_string(check) + ": the root's verdict";
  const json verdict = parse_json(text, where);
  require_object(verdict, where);
  if (const json* error = find_member(verdict, "error"))
    throw Error(require_string(*error, where + ": error"));
  const json* decided_at = find_member(verdict, "check");
  if (!decided_at) throw Error(where + ": check: missing");
  const auto at = static_cast<std::uint64_t>(require_int(*decided_at, where + ": check", 0));
  const json* winners = find_member(verdict, "winners");
  if (!winners) throw Error(where + ": winners: missing");
  require_array(*winners, where + ": winners");
  std::vector<Decided> out;
  for (std::size_t i = 0; i < winners->size(); ++i) {
    const std::string item = index_path(where + ": winners", i);
    const json& w = (*winners)[i];
    if (!w.is_array() || w.size() != 4)
      throw Error(item + ": expected [arch, kernel, key, signature], got " + describe(w));
    std::string fields[4];
    for (std::size_t f = 0; f < 4; ++f) fields[f] = require_string(w[f], index_path(item, f));
    out.push_back({{fields[0], fields[1], fields[2]}, {fields[3], at}});
  }
  return out;
}

}  // namespace

void Consensus::add_timings(const RecordKey& key, std::string pinned_signature, Config local_winner,
                            std::vector<CandidateTiming> timings) {
  std::lock_guard lock(mutex_);
  if (!first_launched_.emplace(key, std::move(pinned_signature)).second) return;
  waiting_[key] = Waiting{std::move(local_winner), std::move(timings)};
}

bool Consensus::timed(const RecordKey& key) const {
  std::lock_guard lock(mutex_);
  return first_launched_.count(key) > 0;
}

std::optional<AgreedWinner> Consensus::winner(const RecordKey& key) const {
  std::lock_guard lock(mutex_);
  if (auto it = winners_.find(key); it != winners_.end()) return it->second;
  return std::nullopt;
}

std::optional<std::string> Consensus::first_launched(const RecordKey& key) const {
  std::lock_guard lock(mutex_);
  if (auto it = first_launched_.find(key); it != first_launched_.end()) return it->second;
  return std::nullopt;
}

bool Consensus::decides_in(const std::string& group_id) {
  std::lock_guard lock(mutex_);
  if (!group_) group_ = group_id;
  return *group_ == group_id;
}

std::size_t Consensus::waiting() const {
  std::lock_guard lock(mutex_);
  return waiting_.size();
}

std::vector<Decided> Consensus::exchange(Collective& group, const ConsensusSender& me,
                                         std::uint64_t check) {
  std::map<RecordKey, std::pair<Config, std::vector<CandidateTiming>>> sent;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [key, waiting] : waiting_) sent[key] = {waiting.local_winner, waiting.timings};
  }
  json own = sent.empty() ? json() : batch_json(me, sent);
  TimingsRound round(std::move(own), check,
                     [this](const std::vector<RecordFile>& batches) { return decide(batches); });
  const std::vector<Decided> decided = read_verdict(group.tree_round(round), check);
  std::lock_guard lock(mutex_);
  for (const auto& [key, unused] : sent) waiting_.erase(key);
  for (const Decided& d : decided) winners_.emplace(d.key, d.winner);
  return decided;
}

// On the root: this round's batches join what each rank sent before, and
// merge's tally names the winners of the keys not decided yet. It tallies
// the new keys and, of the earlier ones, only those with a flagged config
// (merge never pins a config flagged on any key of its kernel), so a
// round costs O(new keys), not O(every key so far). A key whose every vote
// was flagged gets no winner: its ranks keep launching the deterministic
// choice, which skips flagged configs too.
std::vector<Decided> Consensus::decide(const std::vector<RecordFile>& batches) {
  std::set<RecordKey> fresh;
  std::vector<RecordFile> voting;
  {
    std::lock_guard lock(mutex_);
    for (const RecordFile& batch : batches) {
      RecordFile& kept = gathered_[batch.rank];
      if (kept.origin.empty()) {
        kept.origin = batch.origin;
        kept.run = batch.run;
        kept.rank = batch.rank;
        kept.has_timings = true;
      }
      kept.device = batch.device;
      for (const auto& [arch, kernels] : batch.identities)
        for (const auto& [kernel, identity] : kernels)
          kept.identities[arch].insert_or_assign(kernel, identity);
      for (const auto& [key, config] : batch.winners) {
        if (!winners_.count(key)) fresh.insert(key);
        kept.winners.insert_or_assign(key, config);
      }
      for (const auto& [key, timings] : batch.timings) {
        if (std::any_of(timings.begin(), timings.end(),
                        [](const CandidateTiming& t) { return t.nondeterministic; }))
          flagged_keys_.insert(key);
        kept.timings.insert_or_assign(key, timings);
      }
      ++changes_;
    }
    if (fresh.empty()) return {};
    for (const auto& gathered : gathered_) {
      const RecordFile& record =
          gathered.second;  // named: lambdas cannot capture bindings in C++20
      RecordFile& vote = voting.emplace_back();
      vote.origin = record.origin;
      vote.run = record.run;
      vote.rank = record.rank;
      vote.has_timings = true;
      vote.device = record.device;
      auto take = [&](const RecordKey& key) {
        if (auto w = record.winners.find(key); w != record.winners.end()) vote.winners.insert(*w);
        if (auto t = record.timings.find(key); t != record.timings.end()) vote.timings.insert(*t);
      };
      for (const RecordKey& key : fresh) take(key);
      for (const RecordKey& key : flagged_keys_) take(key);
    }
  }
  std::vector<Decided> out;
  for (const KeyVerdict& verdict : tally(voting)) {
    if (!fresh.count(verdict.key) || verdict.votes.empty()) continue;
    out.push_back({verdict.key, {verdict.votes[0].signature, 0}});
  }
  return out;
}

std::vector<std::unique_ptr<InMemoryTable>> Consensus::tables() const {
  const std::vector<RecordFile> records = gathered();
  std::set<std::string> archs;
  for (const RecordFile& r : records)
    for (const auto& [key, config] : r.winners) archs.insert(key.arch);
  std::vector<std::unique_ptr<InMemoryTable>> out;
  for (const std::string& arch : archs)
    out.push_back(merge_records(records, arch, /*source=*/"").table);
  return out;
}

bool Consensus::tables_changed_since_written() {
  std::lock_guard lock(mutex_);
  const bool changed = changes_ != written_at_;
  written_at_ = changes_;
  return changed;
}

std::vector<RecordFile> Consensus::gathered() const {
  std::lock_guard lock(mutex_);
  std::vector<RecordFile> out;
  for (const auto& [rank, record] : gathered_) out.push_back(record);
  return out;
}

void Consensus::clear() {
  std::lock_guard lock(mutex_);
  waiting_.clear();
  first_launched_.clear();
  winners_.clear();
  gathered_.clear();
  flagged_keys_.clear();
  group_.reset();
  changes_ = written_at_ = 0;
}

}  // namespace tunelock::detail
