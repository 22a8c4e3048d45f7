#include "tunelock/verify/verify.hpp"

#include "tunelock/logs/choice_log_file.hpp"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>

#include "tunelock/base/error.hpp"
#include "tunelock/fb/verify_batch_generated.h"
#include "tunelock/io/bounded_verifier.hpp"

namespace tunelock {

ChoiceLogCheck check_choice_logs(std::span<const NamedLog> logs) {
  std::vector<RankBatch> batches;
  std::set<int> ranks;
  for (const auto& [name, log] : logs) {
    if (!ranks.insert(log->rank).second)
      throw Error(name + ": rank " + std::to_string(log->rank) + " appears in two logs of one run");
    RankBatch batch{log->rank, {}};
    for (const auto& [key, value] : log->entries) batch.entries.push_back({key, value});
    batches.push_back(std::move(batch));
  }
  GroupAgreement agreement;
  ChoiceLogCheck out;
  out.result = agreement.fold(batches);
  out.agreed_keys = agreement.agreed_count();
  return out;
}

VerifyResult GroupAgreement::fold(std::span<const RankBatch> batches) {
  // key -> value -> ranks, for every entry sent this round.
  std::map<std::string, std::map<std::string, std::set<int>>> seen;
  VerifyResult result;
  for (const RankBatch& batch : batches) {
    result.compared += batch.entries.size();
    for (const ChoiceEntry& e : batch.entries) seen[e.key][e.value].insert(batch.rank);
  }
  for (auto& [key, values] : seen) {
    if (conflicted_.count(key)) continue;  // already reported; the verdict is sticky anyway
    auto agreed = agreed_.find(key);
    if (agreed != agreed_.end()) {
      // Earlier rounds' ranks count as having chosen the agreed value.
      values[agreed->second.value].insert(agreed->second.ranks.begin(), agreed->second.ranks.end());
    }
    if (values.size() > 1) {
      result.conflicts.push_back(Conflict{key, values});
      conflicted_.insert(key);
      if (agreed != agreed_.end()) agreed_.erase(agreed);
      continue;
    }
    Agreed& slot = agreed_[key];
    slot.value = values.begin()->first;
    slot.ranks = values.begin()->second;
  }
  if (!result.conflicts.empty()) failed_ = true;
  result.agreed = !failed_;
  return result;
}

std::string conflict_report(std::span<const Conflict> conflicts) {
  if (conflicts.empty()) return {};
  std::string out = "autotune choices differ across ranks for " + std::to_string(conflicts.size()) +
                    " kernel/shape key(s), which may change floating-point results:";
  for (const Conflict& c : conflicts) {
    out += "\n  " + c.key + ":";
    for (const auto& [value, ranks] : c.ranks_by_value) {
      out += " '" + value + "' on rank" + (ranks.size() > 1 ? "s " : " ");
      bool first = true;
      for (int r : ranks) {
        out += (first ? "" : ",") + std::to_string(r);
        first = false;
      }
      out += ";";
    }
    out.pop_back();
  }
  return out;
}

// The verify batch's format_version: every rank of a job runs one tunelock.
constexpr std::uint32_t kVerifyBatchVersion = 1;

std::string encode_batch(int rank, std::span<const ChoiceEntry> entries) {
  flatbuffers::FlatBufferBuilder builder(64 + 64 * entries.size());
  std::vector<flatbuffers::Offset<fb::ChoiceEntry>> offsets;
  offsets.reserve(entries.size());
  for (const ChoiceEntry& e : entries) {
    offsets.push_back(
        fb::CreateChoiceEntry(builder, builder.CreateString(e.key), builder.CreateString(e.value)));
  }
  auto batch = fb::CreateVerifyBatch(builder, kVerifyBatchVersion, static_cast<std::uint32_t>(rank),
                                     builder.CreateVector(offsets));
  fb::FinishVerifyBatchBuffer(builder, batch);
  return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize());
}

RankBatch decode_batch(std::string_view bytes, const std::string& origin) {
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  flatbuffers::Verifier verifier = detail::bounded_verifier(data, bytes.size());
  // The verifier checks the identifier too, within the buffer's bounds; a
  // bare identifier check first would read past a buffer shorter than 8.
  if (!fb::VerifyVerifyBatchBuffer(verifier))
    throw Error(origin + ": not a valid verify batch (" + std::to_string(bytes.size()) + " bytes)");
  const fb::VerifyBatch* batch = fb::GetVerifyBatch(data);
  if (batch->format_version() != kVerifyBatchVersion) {
    throw Error(origin + ": verify batch format " + std::to_string(batch->format_version()) +
                " is not supported (this tunelock speaks " + std::to_string(kVerifyBatchVersion) +
                ")");
  }
  RankBatch out;
  out.rank = static_cast<int>(batch->rank());
  if (batch->entries()) {
    out.entries.reserve(batch->entries()->size());
    for (const fb::ChoiceEntry* e : *batch->entries())
      out.entries.push_back(ChoiceEntry{e->key()->str(), e->value()->str()});
  }
  return out;
}

std::vector<RankBatch> gather_batches(Collective& group, std::span<const ChoiceEntry> entries) {
  const std::string id = group.group_id();
  const std::vector<std::string> gathered = group.all_gather(encode_batch(group.rank(), entries));
  if (gathered.size() != static_cast<std::size_t>(group.size())) {
    throw Error("verify: group '" + id + "' returned " + std::to_string(gathered.size()) +
                " payloads for " + std::to_string(group.size()) + " ranks");
  }
  std::vector<RankBatch> batches;
  batches.reserve(gathered.size());
  for (std::size_t r = 0; r < gathered.size(); ++r) {
    const std::string origin = "verify: rank " + std::to_string(r) + " of group '" + id + "'";
    batches.push_back(decode_batch(gathered[r], origin));
    if (batches.back().rank != static_cast<int>(r))
      throw Error(origin + ": batch claims rank " + std::to_string(batches.back().rank));
    batches.back().rank = group.world_rank(static_cast<int>(r));
  }
  return batches;
}

}  // namespace tunelock
