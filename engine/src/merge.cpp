#include "tunelock/merge.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <flatbuffers/flatbuffers.h>
#include <fmt/format.h>

#include "checksum_trailer.hpp"
#include "json_checks.hpp"
#include "sealed_file.hpp"
#include "tunelock/error.hpp"
#include "tunelock/fb/record_timings_generated.h"
#include "tunelock/files.hpp"
#include "tunelock/json_config.hpp"
#include "tunelock/median.hpp"
#include "tunelock/table_format.hpp"
#include "tunelock/version.hpp"

namespace tunelock {
namespace {

using namespace json_checks;
using nlohmann::json;

constexpr double kNoTiming = std::numeric_limits<double>::infinity();

// The binary sidecar is at 2 since it carries a checksum trailer
// (checksum_trailer.hpp); the JSON form stays at 1.
constexpr std::uint32_t kBinaryTimingsVersion = 2;
constexpr std::string_view kReconvert =
    "re-convert it from its JSON sidecar: tunelock timings convert IN.timings.json OUT.tlrt";
// Ranks are process indices; -1 in a binary sidecar means "not known".
constexpr std::int64_t kMaxRank = 1 << 30;

// Calls `visit(arch, qualified, key, value, where)` for every leaf of an
// {arch: {qualified: {key: value}}} object, checking the shape on the way.
template <typename Visit>
void walk_three_levels(const json& root, const std::string& where, Visit visit) {
  // At the root `where` is "file.json: ", which reads "file.json: : ..." in a message.
  require_object(root, where.ends_with(": ") ? where.substr(0, where.size() - 2) : where);
  for (const auto& [arch, kernels] : root.items()) {
    const std::string arch_where = member_path(where, arch);
    // The names a merged table will hold pass the table readers' checks here.
    check_arch_name(arch, arch_where);
    require_object(kernels, arch_where);
    for (const auto& [qualified, keys] : kernels.items()) {
      const std::string kernel_where = member_path(arch_where, qualified);
      check_kernel_name(qualified, arch_where);
      require_object(keys, kernel_where);
      for (const auto& [key, value] : keys.items()) {
        check_key(key, kernel_where);
        visit(arch, qualified, key, value, kernel_where + "[\"" + key + "\"]");
      }
    }
  }
}

double aggregated(const Vote& vote) {
  if (vote.timings_ms.empty()) return kNoTiming;
  return median_of_sorted(vote.timings_ms);  // kept sorted: the median is order-free
}

std::string key_text(const RecordKey& key) {
  return std::get<0>(key) + "|" + std::get<1>(key) + "|" + std::get<2>(key);
}

// `<prefix>.rank<N>.json` -> N, or -1: Megatron's records carry their rank
// only in the name.
int rank_in_name(const std::filesystem::path& path) {
  const std::string name = path.filename().string();
  const auto at = name.rfind(".rank");
  if (at == std::string::npos || !name.ends_with(".json")) return -1;
  const std::string digits = name.substr(at + 5, name.size() - 5 - (at + 5));
  if (digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::stoi(digits);
}

// One recording's files are one vote per rank: the same file twice, or two
// files of one rank, would count a rank twice.
void require_distinct(const std::vector<RecordFile>& records) {
  std::map<std::string, const RecordFile*> by_origin;
  std::map<int, const RecordFile*> by_rank;
  for (const RecordFile& r : records) {
    if (auto [it, fresh] = by_origin.emplace(r.origin, &r); !fresh)
      throw Error(r.origin + ": given twice; each record file is one rank's vote");
    if (r.rank < 0) continue;
    if (auto [it, fresh] = by_rank.emplace(r.rank, &r); !fresh) {
      throw Error(it->second->origin + " and " + r.origin + " are both rank " +
                  std::to_string(r.rank) + "; merge one file per rank");
    }
  }
}

}  // namespace

RecordFile record_from_json(std::string_view text, const std::string& origin) {
  const json root = parse_json(text, origin);
  RecordFile record;
  record.origin = origin;
  walk_three_levels(root, origin + ": ",
                    [&](const std::string& arch, const std::string& qualified,
                        const std::string& key, const json& value, const std::string& where) {
                      record.winners[{arch, qualified, key}] = config_from_json(value, where);
                    });
  return record;
}

void add_timings_from_json(RecordFile& record, std::string_view text, const std::string& origin) {
  const json root = parse_json(text, origin);
  const std::string where = origin + ": ";
  require_object(root, origin);
  if (const json* version = find_member(root, "format_version")) {
    if (require_int(*version, where + "format_version", 1) > 1)
      throw Error(where + "format_version " + version->dump() +
                  " is newer than this tunelock supports (1)");
  }
  if (const json* rank = find_member(root, "rank"))
    record.rank = static_cast<int>(require_int(*rank, where + "rank", 0, 1 << 30));
  if (const json* device = find_member(root, "device")) {
    require_object(*device, where + "device");
    auto text_of = [&](const char* field) {
      const json* v = find_member(*device, field);
      return v ? require_string(*v, where + "device." + field) : std::string();
    };
    record.device.device_name = text_of("device_name");
    record.device.driver_version = text_of("driver_version");
    record.device.cuda_version = text_of("cuda_version");
    record.device.tool_version = text_of("tool_version");
    record.device.recorded_at = text_of("recorded_at");
    if (const json* sm = find_member(*device, "sm_count"))
      record.device.sm_count = require_int(*sm, where + "device.sm_count", 0);
  }
  const json* timings = find_member(root, "timings");
  if (!timings) throw Error(where + "timings: missing");
  walk_three_levels(
      *timings, where + "timings",
      [&](const std::string& arch, const std::string& qualified, const std::string& key,
          const json& value, const std::string& at) {
        require_array(value, at);
        std::vector<TimedCandidate> candidates;
        for (std::size_t i = 0; i < value.size(); ++i) {
          const std::string item = index_path(at, i);
          require_object(value[i], item);
          const json* sig = find_member(value[i], "signature");
          if (!sig) throw Error(member_path(item, "signature") + ": missing");
          TimedCandidate candidate{require_string(*sig, member_path(item, "signature")), {}};
          if (const json* flag = find_member(value[i], "nondeterministic"))
            candidate.nondeterministic = require_bool(*flag, member_path(item, "nondeterministic"));
          const json* ms = find_member(value[i], "median_ms");
          if (ms && !ms->is_null()) {
            if (!ms->is_number() || !(ms->get<double>() >= 0) || !std::isfinite(ms->get<double>()))
              throw Error(member_path(item, "median_ms") +
                          ": expected a non-negative number or null, got " + describe(*ms));
            candidate.median_ms = ms->get<double>();
          }
          candidates.push_back(std::move(candidate));
        }
        record.timings[{arch, qualified, key}] = std::move(candidates);
      });
  record.has_timings = true;
}

RecordFile load_record_file(const std::filesystem::path& path) {
  RecordFile record = record_from_json(read_file(path), path.string());
  record.rank = rank_in_name(path);  // a sidecar, when there is one, says for itself
  std::string stem = path.string();
  if (!stem.ends_with(".json")) return record;
  stem.resize(stem.size() - 5);
  for (const char* extension : {".timings.json", ".timings.tlrt"}) {
    const std::string sidecar = stem + extension;
    std::error_code ec;
    if (std::filesystem::exists(sidecar, ec)) {
      add_timings(record, read_file(sidecar), sidecar);
      break;
    }
  }
  return record;
}

void add_timings(RecordFile& record, std::string_view bytes, const std::string& origin) {
  if (bytes.size() < 8 ||
      !flatbuffers::BufferHasIdentifier(bytes.data(), fb::RecordTimingsIdentifier())) {
    add_timings_from_json(record, bytes, origin);
    return;
  }
  const fb::RecordTimings* timings = &detail::open_sealed<fb::RecordTimings>(
      bytes, origin,
      {"binary timing sidecar", fb::RecordTimingsIdentifier(), kBinaryTimingsVersion, kReconvert});
  const std::string where = origin + ": ";
  if (timings->rank() < -1 || timings->rank() > kMaxRank)
    throw Error(where + "rank: " + std::to_string(timings->rank()) +
                " is out of range; allowed 0 to " + std::to_string(kMaxRank));
  if (timings->sm_count() < 0)
    throw Error(where + "sm_count: " + std::to_string(timings->sm_count()) +
                " is out of range; allowed 0 and up");
  auto str = [&](const flatbuffers::String* s, const std::string& at) {
    if (!s) return std::string();
    require_utf8({s->c_str(), s->size()}, at);
    return s->str();
  };
  record.rank = timings->rank();
  record.device.device_name = str(timings->device_name(), where + "device_name");
  record.device.sm_count = timings->sm_count();
  record.device.driver_version = str(timings->driver_version(), where + "driver_version");
  record.device.cuda_version = str(timings->cuda_version(), where + "cuda_version");
  record.device.tool_version = str(timings->tool_version(), where + "tool_version");
  record.device.recorded_at = str(timings->recorded_at(), where + "recorded_at");
  for (flatbuffers::uoffset_t k = 0; k < timings->keys()->size(); ++k) {
    const fb::TimedKey* key = timings->keys()->Get(k);
    const std::string at = where + "keys[" + std::to_string(k) + "]";
    const std::string arch = str(key->arch(), at + ".arch");
    check_arch_name(arch, at + ".arch");
    const std::string kernel = str(key->kernel(), at + ".kernel");
    check_kernel_name(kernel, at + ".kernel");
    const std::string text = str(key->key(), at + ".key");
    check_key(text, at + ".key");
    std::vector<TimedCandidate> candidates;
    for (flatbuffers::uoffset_t i = 0; i < key->candidates()->size(); ++i) {
      const fb::CandidateTiming* c = key->candidates()->Get(i);
      const std::string signature =
          str(c->signature(), at + ".candidates[" + std::to_string(i) + "].signature");
      TimedCandidate candidate{signature, {}, c->nondeterministic()};
      if (c->median_ms()) {
        if (!(*c->median_ms() >= 0) || !std::isfinite(*c->median_ms()))
          throw Error(origin + ": " + key->kernel()->str() + " [" + key->key()->str() +
                      "]: median_ms out of range");
        candidate.median_ms = *c->median_ms();
      }
      candidates.push_back(std::move(candidate));
    }
    record.timings[{arch, kernel, text}] = std::move(candidates);
  }
  record.has_timings = true;
}

std::string timings_to_json(const RecordFile& record) {
  json timings = json::object();
  for (const auto& [key, candidates] : record.timings) {
    json list = json::array();
    for (const TimedCandidate& c : candidates) {
      json item = {{"signature", c.signature},
                   {"median_ms", c.median_ms ? json(*c.median_ms) : json(nullptr)}};
      if (c.nondeterministic) item["nondeterministic"] = true;  // absent: as before the audit
      list.push_back(std::move(item));
    }
    timings[std::get<0>(key)][std::get<1>(key)][std::get<2>(key)] = std::move(list);
  }
  const Provenance& d = record.device;
  json out = {{"format_version", 1},
              {"device",
               {{"device_name", d.device_name},
                {"sm_count", d.sm_count},
                {"driver_version", d.driver_version},
                {"cuda_version", d.cuda_version},
                {"recorded_at", d.recorded_at},
                {"tool_version", d.tool_version}}},
              {"timings", timings}};
  // An unknown rank (-1) is left out: the reader then takes it from the name.
  if (record.rank >= 0) out["rank"] = record.rank;
  return out.dump(1) + "\n";
}

std::string timings_to_binary(const RecordFile& record) {
  flatbuffers::FlatBufferBuilder b(1024);
  std::vector<flatbuffers::Offset<fb::TimedKey>> keys;
  for (const auto& [key, candidates] : record.timings) {  // std::map: sorted
    std::vector<flatbuffers::Offset<fb::CandidateTiming>> list;
    for (const TimedCandidate& c : candidates) {
      const auto signature_offset = b.CreateString(c.signature);
      fb::CandidateTimingBuilder timing(b);
      timing.add_signature(signature_offset);
      if (c.median_ms) timing.add_median_ms(*c.median_ms);
      if (c.nondeterministic) timing.add_nondeterministic(true);
      list.push_back(timing.Finish());
    }
    const auto arch = b.CreateString(std::get<0>(key));
    const auto kernel = b.CreateString(std::get<1>(key));
    const auto text = b.CreateString(std::get<2>(key));
    const auto vector = b.CreateVector(list);
    keys.push_back(fb::CreateTimedKey(b, arch, kernel, text, vector));
  }
  const Provenance& d = record.device;
  // Strings and vectors are built before the root table starts, as required.
  const auto root = fb::CreateRecordTimings(
      b, kBinaryTimingsVersion, record.rank, b.CreateString(d.device_name), d.sm_count,
      b.CreateString(d.driver_version), b.CreateString(d.cuda_version),
      b.CreateString(d.tool_version), b.CreateString(d.recorded_at), b.CreateVector(keys));
  fb::FinishRecordTimingsBuffer(b, root);
  return checksum_trailer::seal(
      std::string_view(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize()));
}

std::vector<RecordFile> load_record_files(const std::vector<std::filesystem::path>& paths) {
  std::vector<RecordFile> out;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      std::error_code ec;
      if (std::filesystem::equivalent(paths[i], paths[j], ec))
        throw Error(paths[i].string() + ": the same file as " + paths[j].string() +
                    "; each record file is one rank's vote");
    }
    out.push_back(load_record_file(paths[i]));
  }
  return out;
}

// Per key, every config some rank's audit flagged as nondeterministic.
std::map<RecordKey, std::set<std::string>> flagged_configs(const std::vector<RecordFile>& records) {
  std::map<RecordKey, std::set<std::string>> out;
  for (const RecordFile& record : records)
    for (const auto& [key, candidates] : record.timings)
      for (const TimedCandidate& c : candidates)
        if (c.nondeterministic) out[key].insert(c.signature);
  return out;
}

std::vector<KeyVerdict> tally(const std::vector<RecordFile>& records) {
  require_distinct(records);
  const auto flagged = flagged_configs(records);
  std::map<RecordKey, std::map<std::string, Vote>> votes;
  for (const RecordFile& record : records) {
    for (const auto& [key, config] : record.winners) {
      Vote& vote = votes[key][signature(config)];
      vote.signature = signature(config);
      vote.config = config;
      ++vote.count;
    }
  }
  for (const RecordFile& record : records) {
    for (const auto& [key, candidates] : record.timings) {
      auto by_key = votes.find(key);
      if (by_key == votes.end()) continue;
      for (const TimedCandidate& c : candidates) {
        auto vote = by_key->second.find(c.signature);
        if (vote != by_key->second.end() && c.median_ms)
          vote->second.timings_ms.push_back(*c.median_ms);
      }
    }
  }
  std::vector<KeyVerdict> out;
  for (auto& [key, by_signature] : votes) {
    KeyVerdict verdict{key, {}, {}, "unanimous"};
    const auto flags = flagged.find(key);
    if (flags != flagged.end())
      verdict.nondeterministic.assign(flags->second.begin(), flags->second.end());
    std::map<std::string, std::string> text;  // signature -> Megatron's tie-break text
    for (auto& [sig, vote] : by_signature) {
      if (flags != flagged.end() && flags->second.count(sig)) continue;  // never pinned
      std::sort(vote.timings_ms.begin(), vote.timings_ms.end());
      text[sig] = canonical_config_text(vote.config);
      verdict.votes.push_back(std::move(vote));
    }
    std::sort(verdict.votes.begin(), verdict.votes.end(), [&](const Vote& a, const Vote& b) {
      if (a.count != b.count) return a.count > b.count;
      if (aggregated(a) != aggregated(b)) return aggregated(a) < aggregated(b);
      return text[a.signature] <
             text[b.signature];  // as Megatron's merge: same records, same table
    });
    if (verdict.votes.size() > 1) {
      const Vote& first = verdict.votes[0];
      const Vote& second = verdict.votes[1];
      if (first.count != second.count)
        verdict.decided_by = "majority";
      else if (aggregated(first) != aggregated(second))
        verdict.decided_by = "timing";
      else
        verdict.decided_by = "config_text";
    }
    out.push_back(std::move(verdict));
  }
  return out;
}

MergeResult merge_records(const std::vector<RecordFile>& records, const std::string& arch,
                          const std::string& source) {
  if (!arch.empty()) check_arch_name(arch, "--arch");
  std::set<std::string> archs;
  for (const RecordFile& r : records)
    for (const auto& [key, config] : r.winners) archs.insert(std::get<0>(key));
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
  std::set<std::string> devices, drivers, cudas;
  std::set<std::int64_t> sm_counts;
  std::string recorded_at;
  for (const RecordFile& r : records) {
    if (!r.has_timings) continue;
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

  MergeResult result{std::make_unique<InMemoryTable>(chosen, provenance), {}};
  for (KeyVerdict& verdict : tally(records)) {
    const auto& [key_arch, qualified, key] = verdict.key;
    if (key_arch != chosen || verdict.votes.empty()) continue;
    const Config& winner = verdict.votes[0].config;
    result.table->set(qualified, key, TableEntry{winner});
    if (verdict.votes.size() > 1 || !verdict.nondeterministic.empty())
      result.disagreements.push_back(std::move(verdict));
  }
  return result;
}

namespace {

void append_votes(std::string& out, const KeyVerdict& v) {
  for (const Vote& vote : v.votes) {
    out += fmt::format("  {} vote(s): {}", vote.count, vote.signature);
    if (!vote.timings_ms.empty()) {
      out += fmt::format("  timed {:.4g}..{:.4g} ms, median {:.4g} ms over {} rank(s)",
                         vote.timings_ms.front(), vote.timings_ms.back(), aggregated(vote),
                         vote.timings_ms.size());
    }
    out += "\n";
  }
  for (const std::string& sig : v.nondeterministic)
    out +=
        "  nondeterministic (bits changed between two runs of itself), never pinned: " + sig + "\n";
}

void append_decision(std::string& out, const KeyVerdict& v) {
  if (v.votes.empty()) {
    out += "  -> every winner was nondeterministic: left out of the table\n";
    return;
  }
  out += fmt::format("  -> kept {} ({})", v.votes[0].signature, v.decided_by);
  if (v.votes.size() > 1) {
    const double best = aggregated(v.votes[0]), runner = aggregated(v.votes[1]);
    if (best != kNoTiming && runner != kNoTiming && std::min(best, runner) > 0) {
      out += fmt::format("; the two best medians differ by {:.1f}%",
                         100.0 * std::abs(runner - best) / std::min(best, runner));
    }
  }
  out += "\n";
}

}  // namespace

std::vector<KeyVerdict> reported_verdicts(const std::vector<RecordFile>& records) {
  std::vector<KeyVerdict> out;
  for (KeyVerdict& verdict : tally(records))
    if (verdict.votes.size() > 1 || !verdict.nondeterministic.empty())
      out.push_back(std::move(verdict));
  return out;
}

nlohmann::json verdict_to_json(const KeyVerdict& verdict) {
  nlohmann::json votes = nlohmann::json::array();
  for (const Vote& vote : verdict.votes)
    votes.push_back(
        {{"signature", vote.signature}, {"votes", vote.count}, {"timings_ms", vote.timings_ms}});
  const auto& [arch, kernel, key] = verdict.key;
  return {{"arch", arch},
          {"kernel", kernel},
          {"key", key},
          {"winners", votes},
          {"nondeterministic", verdict.nondeterministic},
          {"kept",
           verdict.votes.empty() ? nlohmann::json() : nlohmann::json(verdict.votes[0].signature)},
          {"decided_by", verdict.decided_by}};
}

std::string disagreement_report(const std::vector<KeyVerdict>& disagreements) {
  std::vector<const KeyVerdict*> differing, flagged_only;
  for (const KeyVerdict& v : disagreements)
    (v.votes.size() > 1 ? differing : flagged_only).push_back(&v);
  std::string out;
  if (!differing.empty())
    out += fmt::format("{} key(s) where ranks chose differently:\n", differing.size());
  for (const KeyVerdict* v : differing) {
    out += key_text(v->key) + "\n";
    append_votes(out, *v);
    append_decision(out, *v);
  }
  if (!flagged_only.empty())
    out += fmt::format("{} key(s) with nondeterministic candidates:\n", flagged_only.size());
  for (const KeyVerdict* v : flagged_only) {
    out += key_text(v->key) + "\n";
    append_votes(out, *v);
    append_decision(out, *v);
  }
  return out;
}

}  // namespace tunelock
