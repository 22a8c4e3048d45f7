#include "runtime/consensus.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "tunelock/base/error.hpp"
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
  const std::string where =
      "consensus check: the timings from group rank " + std::to_string(from_group_rank);
  if (!batch.is_object() || !batch.contains("rank") || !batch["rank"].is_number_integer() ||
      !batch.contains("record") || !batch["record"].is_string() || !batch.contains("timings") ||
      !batch["timings"].is_string() || !batch.contains("origin") || !batch["origin"].is_string() ||
      !batch.contains("run") || !batch["run"].is_string())
    throw Error(where + " are not a consensus batch (rank, origin, run, record, timings)");
  const std::string origin = batch["origin"].get<std::string>();
  RecordFile record =
      record_from_json(batch["record"].get<std::string>(), where + " (" + origin + ")");
  add_timings_from_json(record, batch["timings"].get<std::string>(), where + " (" + origin + ")");
  record.origin = origin;
  record.run = batch["run"].get<std::string>();
  record.rank = batch["rank"].get<int>();
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
    const json batches = json::parse(partial, nullptr, /*allow_exceptions=*/false);
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

std::vector<Decided> read_verdict(const std::string& text, std::uint64_t check) {
  const json verdict = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!verdict.is_object())
    throw Error("consensus check " + std::to_string(check) + ": the root's verdict is not JSON");
  if (verdict.contains("error")) throw Error(verdict["error"].get<std::string>());
  std::vector<Decided> out;
  for (const json& w : verdict.at("winners")) {
    out.push_back(
        {{w.at(0).get<std::string>(), w.at(1).get<std::string>(), w.at(2).get<std::string>()},
         {w.at(3).get<std::string>(), verdict.at("check").get<std::uint64_t>()}});
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
