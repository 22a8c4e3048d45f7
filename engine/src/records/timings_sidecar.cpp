#include "tunelock/records/timings_sidecar.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

#include <flatbuffers/flatbuffers.h>
#include <nlohmann/json.hpp>

#include "io/checksum_trailer.hpp"
#include "io/json_checks.hpp"
#include "io/sealed_file.hpp"
#include "records/record_layout.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/fb/record_timings_generated.h"
#include "tunelock/io/json_reader.hpp"
#include "tunelock/io/rank_files.hpp"
#include "tunelock/records/timing_json.hpp"
#include "tunelock/tables/provenance_json.hpp"
#include "tunelock/tables/table_format.hpp"

namespace tunelock {
namespace {

using namespace json_checks;
using nlohmann::json;

// The binary sidecar is at 2 since it carries a checksum trailer
// (checksum_trailer.hpp); the JSON form stays at 1.
constexpr std::uint32_t kBinaryTimingsVersion = 2;
constexpr std::string_view kReconvert =
    "re-convert it from its JSON sidecar: tunelock timings convert IN.timings.json OUT.tlrt";
// Ranks are process indices; -1 in a binary sidecar means "not known".

}  // namespace

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
    record.rank = static_cast<int>(require_int(*rank, where + "rank", 0, kMaxRank));
  if (const json* device = find_member(root, "device"))
    record.device = device_from_json(*device, where + "device");
  const json* timings = find_member(root, "timings");
  if (!timings) throw Error(where + "timings: missing");
  record_layout::walk_three_levels(
      *timings, where + "timings",
      [&](const std::string& arch, const std::string& qualified, const std::string& key,
          const json& value, const std::string& at) {
        require_array(value, at);
        std::vector<CandidateTiming> candidates;
        for (std::size_t i = 0; i < value.size(); ++i) {
          const std::string item = index_path(at, i);
          require_object(value[i], item);
          const json* sig = find_member(value[i], "signature");
          if (!sig) throw Error(member_path(item, "signature") + ": missing");
          CandidateTiming candidate{require_string(*sig, member_path(item, "signature")), {}};
          timing_fields_from_json(value[i], item, candidate);
          candidates.push_back(std::move(candidate));
        }
        record.timings[{arch, qualified, key}] = std::move(candidates);
      });
  if (const json* flag = find_member(root, "batch_invariant"))
    record.batch_invariant = require_bool(*flag, where + "batch_invariant");
  if (const json* identities = find_member(root, "identities")) {
    const std::string at = where + "identities";
    for (const auto& [arch, kernels] : require_object(*identities, at).items()) {
      check_arch_name(arch, at);
      const std::string arch_at = member_path(at, arch);
      for (const auto& [kernel, identity] : require_object(kernels, arch_at).items()) {
        check_kernel_name(kernel, arch_at);
        std::string code = require_string(identity, member_path(arch_at, kernel));
        if (code.empty())
          throw Error(member_path(arch_at, kernel) +
                      ": empty; expected the kernel's code identity");
        record.identities[arch][kernel] = std::move(code);
      }
    }
  }
  record.has_timings = true;
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
  record.device.triton = str(timings->triton(), where + "triton");
  const auto* names = timings->package_names();
  const auto* versions = timings->package_versions();
  if ((names ? names->size() : 0) != (versions ? versions->size() : 0))
    throw Error(where + "package_names and package_versions differ in length");
  for (flatbuffers::uoffset_t i = 0; names && i < names->size(); ++i) {
    const std::string at = where + "packages[" + std::to_string(i) + "]";
    record.device.packages[str(names->Get(i), at)] = str(versions->Get(i), at);
  }
  for (flatbuffers::uoffset_t k = 0; k < timings->keys()->size(); ++k) {
    const fb::TimedKey* key = timings->keys()->Get(k);
    const std::string at = where + "keys[" + std::to_string(k) + "]";
    const std::string arch = str(key->arch(), at + ".arch");
    check_arch_name(arch, at + ".arch");
    const std::string kernel = str(key->kernel(), at + ".kernel");
    check_kernel_name(kernel, at + ".kernel");
    const std::string text = str(key->key(), at + ".key");
    check_key(text, at + ".key");
    std::vector<CandidateTiming> candidates;
    for (flatbuffers::uoffset_t i = 0; i < key->candidates()->size(); ++i) {
      const fb::CandidateTiming* c = key->candidates()->Get(i);
      const std::string signature =
          str(c->signature(), at + ".candidates[" + std::to_string(i) + "].signature");
      CandidateTiming candidate{signature, {}, c->nondeterministic()};
      if (c->bit_class() < -1)
        throw Error(at + ".candidates[" + std::to_string(i) + "].bit_class: out of range");
      if (c->bit_class() >= 0) candidate.bit_class = c->bit_class();
      if (const fb::RowAudit* rows = c->rows()) {
        const std::string rows_at = at + ".candidates[" + std::to_string(i) + "].rows";
        RowAudit audit{str(rows->dim(), rows_at + ".dim"), {}};
        if (rows->sizes()) audit.sizes.assign(rows->sizes()->begin(), rows->sizes()->end());
        if (rows->row_class() >= 0) audit.row_class = rows->row_class();
        if (rows->variant_at() > 0) audit.variant_at = rows->variant_at();
        if (rows->row_class() < -1 || rows->variant_at() < 0)
          throw Error(rows_at + ": class or variant_at out of range");
        check_row_audit(audit, rows_at);
        candidate.rows = std::move(audit);
      }
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
  record.batch_invariant = timings->batch_invariant();
  for (flatbuffers::uoffset_t k = 0; timings->identities() && k < timings->identities()->size();
       ++k) {
    const fb::TimedIdentity* item = timings->identities()->Get(k);
    const std::string at = where + "identities[" + std::to_string(k) + "]";
    const std::string arch = str(item->arch(), at + ".arch");
    check_arch_name(arch, at + ".arch");
    const std::string kernel = str(item->kernel(), at + ".kernel");
    check_kernel_name(kernel, at + ".kernel");
    const std::string identity = str(item->identity(), at + ".identity");
    if (identity.empty()) throw Error(at + ".identity: empty; expected the kernel's code identity");
    if (!record.identities[arch].emplace(kernel, identity).second)
      throw Error(at + ": " + arch + " " + kernel + " given twice");
  }
  record.has_timings = true;
}

std::string timings_to_json(const RecordFile& record) {
  json timings = json::object();
  for (const auto& [key, candidates] : record.timings) {
    json list = json::array();
    for (const CandidateTiming& c : candidates) {
      json item = {{"signature", c.signature},
                   {"median_ms", c.median_ms ? json(*c.median_ms) : json(nullptr)}};
      if (c.nondeterministic) item["nondeterministic"] = true;  // absent: as before the audit
      if (c.bit_class) item["class"] = *c.bit_class;
      if (c.rows) item["rows"] = row_audit_to_json(*c.rows);
      list.push_back(std::move(item));
    }
    timings[key.arch][key.kernel][key.key] = std::move(list);
  }
  json out = {
      {"format_version", 1}, {"device", device_to_json(record.device)}, {"timings", timings}};
  // An unknown rank (-1) is left out: the reader then takes it from the name.
  if (record.rank >= 0) out["rank"] = record.rank;
  if (record.batch_invariant) out["batch_invariant"] = true;  // absent: recorded without it
  if (!record.identities.empty()) {  // absent: as before records knew their kernels' code
    json identities = json::object();
    for (const auto& [arch, kernels] : record.identities)
      for (const auto& [kernel, identity] : kernels) identities[arch][kernel] = identity;
    out["identities"] = std::move(identities);
  }
  return out.dump(1) + "\n";
}

std::string timings_to_binary(const RecordFile& record) {
  flatbuffers::FlatBufferBuilder b(1024);
  std::vector<flatbuffers::Offset<fb::TimedKey>> keys;
  for (const auto& [key, candidates] : record.timings) {  // std::map: sorted
    std::vector<flatbuffers::Offset<fb::CandidateTiming>> list;
    for (const CandidateTiming& c : candidates) {
      const auto signature_offset = b.CreateString(c.signature);
      flatbuffers::Offset<fb::RowAudit> rows_offset;
      if (c.rows)
        rows_offset =
            fb::CreateRowAudit(b, b.CreateString(c.rows->dim), b.CreateVector(c.rows->sizes),
                               c.rows->row_class.value_or(-1), c.rows->variant_at.value_or(0));
      fb::CandidateTimingBuilder timing(b);
      timing.add_signature(signature_offset);
      if (c.rows) timing.add_rows(rows_offset);
      if (c.median_ms) timing.add_median_ms(*c.median_ms);
      if (c.nondeterministic) timing.add_nondeterministic(true);
      if (c.bit_class) timing.add_bit_class(*c.bit_class);
      list.push_back(timing.Finish());
    }
    const auto arch = b.CreateString(key.arch);
    const auto kernel = b.CreateString(key.kernel);
    const auto text = b.CreateString(key.key);
    const auto vector = b.CreateVector(list);
    keys.push_back(fb::CreateTimedKey(b, arch, kernel, text, vector));
  }
  const Provenance& d = record.device;
  std::vector<std::string> package_names, package_versions;
  for (const auto& [name, version] : d.packages) {  // std::map: sorted
    package_names.push_back(name);
    package_versions.push_back(version);
  }
  std::vector<flatbuffers::Offset<fb::TimedIdentity>> identities;
  for (const auto& [arch, kernels] : record.identities) {  // std::map: sorted
    for (const auto& [kernel, identity] : kernels) {
      const auto arch_offset = b.CreateString(arch);
      const auto kernel_offset = b.CreateString(kernel);
      const auto identity_offset = b.CreateString(identity);
      identities.push_back(fb::CreateTimedIdentity(b, arch_offset, kernel_offset, identity_offset));
    }
  }
  const auto identities_offset = identities.empty() ? 0 : b.CreateVector(identities);
  // Strings and vectors are built before the root table starts, as required.
  const auto root = fb::CreateRecordTimings(
      b, kBinaryTimingsVersion, record.rank, b.CreateString(d.device_name), d.sm_count,
      b.CreateString(d.driver_version), b.CreateString(d.cuda_version),
      b.CreateString(d.tool_version), b.CreateString(d.recorded_at), b.CreateVector(keys),
      d.triton.empty() ? 0 : b.CreateString(d.triton),
      d.packages.empty() ? 0 : b.CreateVectorOfStrings(package_names),
      d.packages.empty() ? 0 : b.CreateVectorOfStrings(package_versions), identities_offset,
      record.batch_invariant);
  fb::FinishRecordTimingsBuffer(b, root);
  return checksum_trailer::seal(
      std::string_view(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize()));
}

}  // namespace tunelock
