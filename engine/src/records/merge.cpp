#include "tunelock/records/merge.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <set>

#include "tunelock/base/error.hpp"
#include "tunelock/base/median.hpp"
#include "tunelock/base/version.hpp"
#include "tunelock/model/config_json.hpp"
#include "tunelock/records/invariance_merge.hpp"
#include "tunelock/tables/table_format.hpp"
#include "tunelock/tables/table_invariance.hpp"

namespace tunelock {
namespace {

// One rank's timing of each config for `key`. A config its autotuner lists
// twice is timed twice, but it is still one rank: the median of its own
// timings counts once, so two record files never read as three ranks.
std::map<std::string, double> own_timings(const RecordFile& record, const RecordKey& key) {
  std::map<std::string, std::vector<double>> all;
  if (const auto timed = record.timings.find(key); timed != record.timings.end())
    for (const CandidateTiming& c : timed->second)
      if (c.median_ms) all[c.signature].push_back(*c.median_ms);
  std::map<std::string, double> out;
  for (auto& [sig, list] : all) {
    std::sort(list.begin(), list.end());
    out[sig] = median_of_sorted(list);
  }
  return out;
}

// One recording's files are one vote per rank: the same file twice, or two
// files of one rank, would count a rank twice.
void require_distinct(const std::vector<RecordFile>& records) {
  std::map<std::string, const RecordFile*> by_origin;
  // Ranks of one run (`<run>.rank<N>.json`): two runs may both have a rank 0.
  std::map<std::pair<std::string, int>, const RecordFile*> by_rank;
  for (const RecordFile& r : records) {
    if (auto [it, fresh] = by_origin.emplace(r.origin, &r); !fresh)
      throw Error(r.origin + ": given twice; each record file is one rank's vote");
    if (r.rank < 0) continue;
    if (auto [it, fresh] = by_rank.emplace(std::pair(r.run, r.rank), &r); !fresh) {
      throw Error(it->second->origin + " and " + r.origin + " are both rank " +
                  std::to_string(r.rank) + "; merge one file per rank");
    }
  }
}

// What a report names: disagreements, and keys with equivalent configs.
bool reported(const KeyVerdict& verdict) {
  return is_disagreement(verdict) || !verdict.equivalent.empty();
}

// Per key, every config some rank's audit flagged as nondeterministic.
std::map<RecordKey, std::set<std::string>> flagged_configs(const std::vector<RecordFile>& records) {
  std::map<RecordKey, std::set<std::string>> out;
  for (const RecordFile& record : records)
    for (const auto& [key, candidates] : record.timings)
      for (const CandidateTiming& c : candidates)
        if (c.nondeterministic) out[key].insert(c.signature);
  return out;
}

// Per (arch, kernel), every config flagged on any of its keys: the table's
// nondeterministic list, never a winner nor an equivalent on any key.
using KernelFlags = std::map<std::pair<std::string, std::string>, std::set<std::string>>;
KernelFlags flags_by_kernel(const std::map<RecordKey, std::set<std::string>>& flagged) {
  KernelFlags out;
  for (const auto& [key, signatures] : flagged)
    out[{key.arch, key.kernel}].insert(signatures.begin(), signatures.end());
  return out;
}

// Configs bit-identical to `winner` on every rank whose audit classed both,
// and classed together by at least one rank; flagged configs never count.
// Fastest first, with how many of them were timed faster than the winner.
struct Equivalents {
  std::vector<std::string> configs;
  std::size_t faster = 0;
};

Equivalents equivalent_to(const std::vector<RecordFile>& records, const RecordKey& key,
                          const std::string& winner, const std::set<std::string>& flagged) {
  std::map<std::string, bool> together;  // signature -> identical on every rank seen so far
  for (const RecordFile& record : records) {
    const auto timed = record.timings.find(key);
    if (timed == record.timings.end()) continue;
    std::optional<int> winner_class;
    for (const CandidateTiming& c : timed->second)
      if (c.signature == winner) winner_class = c.bit_class;
    if (!winner_class) continue;  // this rank did not class the winner: it has no say
    for (const CandidateTiming& c : timed->second) {
      if (c.signature == winner || !c.bit_class) continue;
      const bool same = *c.bit_class == *winner_class;
      auto [it, fresh] = together.try_emplace(c.signature, same);
      if (!fresh) it->second = it->second && same;
    }
  }
  std::vector<std::string> out;
  for (const auto& [sig, same] : together)
    if (same && !flagged.count(sig)) out.push_back(sig);
  // Fastest first by the median over the ranks' medians (a config no rank
  // timed last), then by signature: TUNELOCK_EQUIVALENT=timed times the
  // first few (selection.hpp, equivalents_worth_timing).
  std::map<std::string, std::vector<double>> times;
  for (const RecordFile& record : records)
    for (const auto& [sig, ms] : own_timings(record, key)) times[sig].push_back(ms);
  std::map<std::string, double> median_ms;
  for (auto& [sig, list] : times) {
    std::sort(list.begin(), list.end());
    median_ms[sig] = median_of_sorted(list);
  }
  auto time_of = [&](const std::string& sig) {
    const auto it = median_ms.find(sig);
    return it == median_ms.end() ? std::numeric_limits<double>::infinity() : it->second;
  };
  std::stable_sort(out.begin(), out.end(), [&](const std::string& a, const std::string& b) {
    return time_of(a) < time_of(b);
  });
  const double winner_ms = time_of(winner);
  const auto faster = static_cast<std::size_t>(std::count_if(
      out.begin(), out.end(), [&](const std::string& sig) { return time_of(sig) < winner_ms; }));
  return {std::move(out), faster};
}

// The median of `sorted` with one occurrence of `dropped` taken out, in
// O(log n); kNoTiming when nothing is left. REQUIRES: `dropped` in `sorted`.
double median_without(const std::vector<double>& sorted, double dropped) {
  const std::size_t n = sorted.size() - 1;
  if (n == 0) return kNoTiming;
  const auto at = static_cast<std::size_t>(std::lower_bound(sorted.begin(), sorted.end(), dropped) -
                                           sorted.begin());
  auto get = [&](std::size_t i) { return sorted[i < at ? i : i + 1]; };
  return n % 2 ? get(n / 2) : (get(n / 2 - 1) + get(n / 2)) / 2;
}

// Winners within the best-timed winner's own cross-rank spread: a vote
// whose aggregated median is no slower than the best's slowest rank.
std::vector<std::string> tie_set(const std::vector<Vote>& votes) {
  const Vote* best = nullptr;
  for (const Vote& v : votes)
    if (!v.timings_ms.empty() && (!best || aggregated_ms(v) < aggregated_ms(*best))) best = &v;
  if (!best) return {};
  std::vector<std::string> out;
  for (const Vote& v : votes)
    if (aggregated_ms(v) <= best->timings_ms.back()) out.push_back(v.signature);
  if (out.size() < 2) return {};
  std::sort(out.begin(), out.end());
  return out;
}

// How many voters, each dropped alone, would change the kept config. A
// key won by two or more votes clear of the runner-up cannot flip; closer
// keys replay the vote without each rank: one vote less for its winner,
// its timings out of every candidate's median.
int flip_count(const std::vector<Vote>& votes, const std::vector<const RecordFile*>& voters,
               const RecordKey& key, const std::map<std::string, std::string>& text) {
  if (votes.empty()) return 0;
  if (votes.size() == 1 ? votes[0].count >= 2 : votes[0].count - votes[1].count >= 2) return 0;
  int flips = 0;
  for (const RecordFile* rank : voters) {
    const std::string voted = signature(rank->winners.at(key));
    const std::map<std::string, double> own = own_timings(*rank, key);  // its one timing each
    const Vote* kept = nullptr;
    int kept_count = 0;
    double kept_ms = kNoTiming;
    for (const Vote& v : votes) {
      const int count = v.count - (v.signature == voted);
      if (count == 0) continue;
      const auto mine = own.find(v.signature);
      const double ms = mine == own.end() || v.timings_ms.empty()
                            ? aggregated_ms(v)
                            : median_without(v.timings_ms, mine->second);
      const bool better =
          !kept || count > kept_count ||
          (count == kept_count &&
           (ms < kept_ms || (ms == kept_ms && text.at(v.signature) < text.at(kept->signature))));
      if (better) kept = &v, kept_count = count, kept_ms = ms;
    }
    if (kept && kept != &votes[0]) ++flips;
  }
  return flips;
}

}  // namespace

bool is_disagreement(const KeyVerdict& verdict) {
  return verdict.votes.size() > 1 || !verdict.nondeterministic.empty();
}

double aggregated_ms(const Vote& vote) {
  if (vote.timings_ms.empty()) return kNoTiming;
  return median_of_sorted(vote.timings_ms);  // kept sorted: the median is order-free
}

std::string_view to_string(DecidedBy decided_by) {
  switch (decided_by) {
    case DecidedBy::unanimous:
      return "unanimous";
    case DecidedBy::majority:
      return "majority";
    case DecidedBy::timing:
      return "timing";
    case DecidedBy::config_text:
      return "config_text";
  }
  return "unknown";
}

std::vector<KeyVerdict> tally(const std::vector<RecordFile>& records) {
  require_distinct(records);
  const auto flagged = flagged_configs(records);
  const KernelFlags by_kernel = flags_by_kernel(flagged);
  const std::set<std::string> none;
  std::map<RecordKey, std::map<std::string, Vote>> votes;
  std::map<RecordKey, std::vector<const RecordFile*>> voters;
  for (const RecordFile& record : records) {
    for (const auto& [key, config] : record.winners) {
      voters[key].push_back(&record);
      Vote& vote = votes[key][signature(config)];
      vote.signature = signature(config);
      vote.config = config;
      ++vote.count;
    }
  }
  for (const RecordFile& record : records) {
    for (const auto& timed : record.timings) {
      auto by_key = votes.find(timed.first);
      if (by_key == votes.end()) continue;
      for (const auto& [sig, ms] : own_timings(record, timed.first)) {
        auto vote = by_key->second.find(sig);
        if (vote != by_key->second.end()) vote->second.timings_ms.push_back(ms);
      }
    }
  }
  std::vector<KeyVerdict> out;
  for (auto& [key, by_signature] : votes) {
    KeyVerdict verdict{key, {}, {}, DecidedBy::unanimous};
    const auto flags = flagged.find(key);
    if (flags != flagged.end())
      verdict.nondeterministic.assign(flags->second.begin(), flags->second.end());
    // A config flagged on any key of the kernel never wins: the table lists
    // it as nondeterministic for every key.
    const auto kernel_flagged = by_kernel.find({key.arch, key.kernel});
    const std::set<std::string>& never =
        kernel_flagged == by_kernel.end() ? none : kernel_flagged->second;
    std::map<std::string, std::string> text;  // signature -> Megatron's tie-break text
    for (auto& [sig, vote] : by_signature) {
      if (never.count(sig)) continue;  // never pinned
      std::sort(vote.timings_ms.begin(), vote.timings_ms.end());
      text[sig] = canonical_config_text(vote.config);
      verdict.votes.push_back(std::move(vote));
    }
    std::sort(verdict.votes.begin(), verdict.votes.end(), [&](const Vote& a, const Vote& b) {
      if (a.count != b.count) return a.count > b.count;
      if (aggregated_ms(a) != aggregated_ms(b)) return aggregated_ms(a) < aggregated_ms(b);
      return text[a.signature] <
             text[b.signature];  // as Megatron's merge: same records, same table
    });
    if (!verdict.votes.empty()) {
      Equivalents equivalents = equivalent_to(records, key, verdict.votes[0].signature, never);
      verdict.equivalent = std::move(equivalents.configs);
      verdict.faster_equivalents = equivalents.faster;
    }
    verdict.ties = tie_set(verdict.votes);
    const std::vector<const RecordFile*>& voted = voters[key];
    verdict.voters = static_cast<int>(voted.size());
    verdict.flips = flip_count(verdict.votes, voted, key, text);
    if (verdict.votes.size() > 1) {
      const Vote& first = verdict.votes[0];
      const Vote& second = verdict.votes[1];
      if (first.count != second.count)
        verdict.decided_by = DecidedBy::majority;
      else if (aggregated_ms(first) != aggregated_ms(second))
        verdict.decided_by = DecidedBy::timing;
      else
        verdict.decided_by = DecidedBy::config_text;
    }
    out.push_back(std::move(verdict));
  }
  return out;
}

namespace {

// Per kernel of `arch` that has entries, the identity most of the records
// carrying one name (the lowest text on a tie); a line for each kernel
// whose records disagree, naming the records left out.
KernelIdentities merged_identities(const std::vector<RecordFile>& records, const std::string& arch,
                                   const Table& table, std::vector<std::string>& conflicts) {
  std::map<std::string, std::map<std::string, std::vector<std::string>>>
      seen;  // kernel -> id -> origins
  for (const RecordFile& r : records) {
    const auto by_arch = r.identities.find(arch);
    if (by_arch == r.identities.end()) continue;
    for (const auto& [kernel, identity] : by_arch->second)
      if (table.has_kernel(kernel)) seen[kernel][identity].push_back(r.origin);
  }
  KernelIdentities out;
  for (const auto& [kernel, by_identity] : seen) {
    auto kept = by_identity.begin();  // std::map: lowest text first, kept on a tie
    for (auto it = by_identity.begin(); it != by_identity.end(); ++it)
      if (it->second.size() > kept->second.size()) kept = it;
    out[kernel] = kept->first;
    if (by_identity.size() == 1) continue;
    std::string others;
    for (const auto& [identity, origins] : by_identity) {
      if (identity == kept->first) continue;
      for (const std::string& origin : origins)
        others += (others.empty() ? "" : ", ") + origin + " (" + identity + ")";
    }
    conflicts.push_back(kernel + ": records disagree on the kernel's code: kept " + kept->first +
                        " (" + std::to_string(kept->second.size()) + " record(s)); different in " +
                        others + "; re-record those ranks with the same code");
  }
  return out;
}

}  // namespace

MergeResult merge_records(const std::vector<RecordFile>& records, const std::string& arch,
                          const std::string& source) {
  if (!arch.empty()) check_arch_name(arch, "--arch");
  std::set<std::string> archs;
  for (const RecordFile& r : records)
    for (const auto& [key, config] : r.winners) archs.insert(key.arch);
  std::string chosen = arch;
  if (chosen.empty()) {
    if (archs.size() > 1) {
      std::string list;
      for (const std::string& a : archs) list += (list.empty() ? "" : ", ") + a;
      throw Error("the records hold several architectures (" + list + "); pick one with --arch");
    }
    if (archs.empty()) throw Error("the records hold no entries; nothing to merge");
    chosen = *archs.begin();
  } else if (!archs.count(chosen)) {
    throw Error("the records hold no entries for " + chosen);
  }

  // Device provenance, order-free: every distinct value, sorted.
  std::set<std::string> devices, drivers, cudas, tritons;
  std::map<std::string, std::set<std::string>> packages;
  std::set<std::int64_t> sm_counts;
  std::string recorded_at;
  for (const RecordFile& r : records) {
    if (!r.has_timings) continue;
    if (!r.device.triton.empty()) tritons.insert(r.device.triton);
    for (const auto& [name, version] : r.device.packages) packages[name].insert(version);
    if (!r.device.device_name.empty()) devices.insert(r.device.device_name);
    if (!r.device.driver_version.empty()) drivers.insert(r.device.driver_version);
    if (!r.device.cuda_version.empty()) cudas.insert(r.device.cuda_version);
    if (r.device.sm_count) sm_counts.insert(r.device.sm_count);
    recorded_at = std::max(recorded_at, r.device.recorded_at);
  }
  auto joined = [](const std::set<std::string>& values) {
    std::string out;
    for (const std::string& v : values) out += (out.empty() ? "" : " | ") + v;
    return out;
  };
  Provenance provenance;
  provenance.source = source.empty() ? "tunelock merge: majority vote over " +
                                           std::to_string(records.size()) + " record file(s)"
                                     : source;
  provenance.tool_version = std::string(tool_version());
  provenance.device_name = joined(devices);
  provenance.driver_version = joined(drivers);
  provenance.cuda_version = joined(cudas);
  provenance.sm_count = sm_counts.size() == 1 ? *sm_counts.begin() : 0;
  provenance.recorded_at = recorded_at;
  provenance.triton = joined(tritons);
  for (const auto& [name, versions] : packages) provenance.packages[name] = joined(versions);
  // Who voted, and whether they ran alike: the table says so itself.
  std::set<std::string> runs;
  for (const RecordFile& r : records) runs.insert(r.run);
  provenance.ranks = static_cast<std::int64_t>(records.size());
  provenance.runs = static_cast<std::int64_t>(runs.size());
  auto note_mixed = [&](const char* field, std::size_t distinct) {
    if (distinct > 1) provenance.mixed.push_back(field);
  };
  note_mixed("device_name", devices.size());
  note_mixed("sm_count", sm_counts.size());
  note_mixed("driver_version", drivers.size());
  note_mixed("cuda_version", cudas.size());
  note_mixed("triton", tritons.size());
  for (const auto& [name, versions] : packages)
    if (versions.size() > 1) provenance.mixed.push_back("packages." + name);

  MergeResult result{std::make_unique<InMemoryTable>(chosen, provenance), {}};
  for (KeyVerdict& verdict : tally(records)) {
    const auto& [key_arch, qualified, key] = verdict.key;
    if (key_arch != chosen || verdict.votes.empty()) continue;
    TableEntry entry{verdict.votes[0].config};
    for (const std::string& sig : verdict.equivalent)
      entry.equivalent.push_back(
          config_from_signature(sig, to_string(verdict.key) + ": equivalent"));
    if (!entry.equivalent.empty()) entry.faster_equivalents = verdict.faster_equivalents;
    for (const Vote& vote : verdict.votes)  // the tie set's configs as voted, less the kept one
      if (&vote != &verdict.votes[0] &&
          std::binary_search(verdict.ties.begin(), verdict.ties.end(), vote.signature))
        entry.ties.push_back(vote.config);
    result.table->set(qualified, key, std::move(entry));
    if (reported(verdict)) result.disagreements.push_back(std::move(verdict));
  }
  // What the audits learned reaches keys no rank recorded: per kernel, every
  // config flagged on any key by any rank, for the fallback rules to skip.
  NondeterministicConfigs flagged;
  for (const auto& [arch_kernel, signatures] : flags_by_kernel(flagged_configs(records)))
    if (arch_kernel.first == chosen)
      flagged[arch_kernel.second].assign(signatures.begin(), signatures.end());
  // Batch invariance: per group of an audited kernel, one class at every
  // size (records/invariance_merge.hpp); flagged configs never join one.
  std::map<std::string, std::set<std::string>> flagged_by_name;
  for (const auto& [kernel, signatures] : flagged)
    flagged_by_name[kernel].insert(signatures.begin(), signatures.end());
  apply_batch_invariance(records, chosen, flagged_by_name, *result.table);
  check_invariance(*result.table, "merge");
  result.table->set_nondeterministic(std::move(flagged));
  result.table->set_identities(
      merged_identities(records, chosen, *result.table, result.identity_conflicts));
  return result;
}

std::vector<KeyVerdict> reported_verdicts(const std::vector<RecordFile>& records) {
  std::vector<KeyVerdict> out;
  for (KeyVerdict& verdict : tally(records))
    if (reported(verdict)) out.push_back(std::move(verdict));
  return out;
}

}  // namespace tunelock
