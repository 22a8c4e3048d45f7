#include "tunelock/audit_file.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "json_checks.hpp"
#include "tunelock/error.hpp"
#include "tunelock/files.hpp"
#include "tunelock/json_config.hpp"
#include "tunelock/rank_files.hpp"
#include "tunelock/version.hpp"

namespace tunelock {
namespace {

using nlohmann::json;
using namespace json_checks;

constexpr int kAuditFormatVersion = 1;

json device_to_json(const Provenance& d) {
  json out = {{"device_name", d.device_name},
              {"sm_count", d.sm_count},
              {"driver_version", d.driver_version},
              {"cuda_version", d.cuda_version},
              {"triton", d.triton},
              {"tool_version", d.tool_version}};
  if (!d.packages.empty()) out["packages"] = d.packages;
  return out;
}

std::string string_member(const json& object, std::string_view field, const std::string& where) {
  const json* value = find_member(object, field);
  if (!value) throw Error(member_path(where, field) + ": missing");
  return require_string(*value, member_path(where, field));
}

std::string optional_string(const json& object, std::string_view field, const std::string& where) {
  const json* value = find_member(object, field);
  return value ? require_string(*value, member_path(where, field)) : std::string();
}

Provenance device_from_json(const json& value, const std::string& where) {
  require_object(value, where);
  Provenance d;
  d.device_name = optional_string(value, "device_name", where);
  d.driver_version = optional_string(value, "driver_version", where);
  d.cuda_version = optional_string(value, "cuda_version", where);
  d.triton = optional_string(value, "triton", where);
  d.tool_version = optional_string(value, "tool_version", where);
  if (const json* sm = find_member(value, "sm_count"))
    d.sm_count = require_int(*sm, member_path(where, "sm_count"), 0);
  if (const json* packages = find_member(value, "packages")) {
    const std::string at = member_path(where, "packages");
    for (const auto& [name, version] : require_object(*packages, at).items())
      d.packages[name] = require_string(version, member_path(at, name));
  }
  return d;
}

std::optional<double> timing_from_json(const json& value, const std::string& where) {
  if (value.is_null()) return std::nullopt;
  if (!value.is_number() || !(value.get<double>() >= 0))
    throw Error(where + ": expected a time in ms (0 or more) or null, got " + describe(value));
  return value.get<double>();
}

AuditEntry entry_from_json(const json& value, const std::string& where) {
  require_object(value, where);
  AuditEntry e;
  e.arch = string_member(value, "arch", where);
  e.kernel = string_member(value, "kernel", where);
  e.key = string_member(value, "key", where);
  e.pinned = string_member(value, "pinned", where);
  e.reason = string_member(value, "reason", where);
  if (const json* stale = find_member(value, "stale"))
    e.stale = require_bool(*stale, member_path(where, "stale"));
  if (const json* repeats = find_member(value, "repeats"); repeats && !repeats->is_null())
    e.repeats = require_bool(*repeats, member_path(where, "repeats"));
  if (const json* differs = find_member(value, "equivalent_differs")) {
    const std::string at = member_path(where, "equivalent_differs");
    require_array(*differs, at);
    for (std::size_t i = 0; i < differs->size(); ++i)
      e.equivalent_differs.push_back(require_string((*differs)[i], index_path(at, i)));
  }
  const json* calls = find_member(value, "calls");
  if (!calls) throw Error(member_path(where, "calls") + ": missing");
  e.calls = require_int(*calls, member_path(where, "calls"), 0);
  const json* candidates = find_member(value, "candidates");
  if (!candidates) throw Error(member_path(where, "candidates") + ": missing");
  const std::string at = member_path(where, "candidates");
  require_array(*candidates, at);
  for (std::size_t i = 0; i < candidates->size(); ++i) {
    const std::string item = index_path(at, i);
    const json& c = require_object((*candidates)[i], item);
    const json* ms = find_member(c, "median_ms");
    if (!ms) throw Error(member_path(item, "median_ms") + ": missing");
    AuditedCandidate candidate{string_member(c, "signature", item),
                               timing_from_json(*ms, member_path(item, "median_ms"))};
    if (const json* flagged = find_member(c, "nondeterministic"))
      candidate.nondeterministic = require_bool(*flagged, member_path(item, "nondeterministic"));
    e.candidates.push_back(std::move(candidate));
  }
  return e;
}

}  // namespace

std::optional<double> AuditEntry::pinned_ms() const {
  for (const AuditedCandidate& c : candidates)
    if (c.signature == pinned) return c.median_ms;
  return std::nullopt;
}

std::filesystem::path audit_file_path(const std::filesystem::path& prefix, int rank) {
  return rank_file(prefix, rank, rank_file_endings::kAudit);
}

std::string audit_to_json(const AuditFile& audit) {
  json entries = json::array();
  for (const AuditEntry& e : audit.entries) {
    json candidates = json::array();
    for (const AuditedCandidate& c : e.candidates) {
      json item = {{"signature", c.signature},
                   {"median_ms", c.median_ms ? json(*c.median_ms) : json(nullptr)}};
      if (c.nondeterministic) item["nondeterministic"] = true;
      candidates.push_back(std::move(item));
    }
    entries.push_back({{"arch", e.arch},
                       {"kernel", e.kernel},
                       {"key", e.key},
                       {"pinned", e.pinned},
                       {"reason", e.reason},
                       {"stale", e.stale},
                       {"repeats", e.repeats ? json(*e.repeats) : json(nullptr)},
                       {"equivalent_differs", e.equivalent_differs},
                       {"calls", e.calls},
                       {"candidates", std::move(candidates)}});
  }
  return json{{"format_version", kAuditFormatVersion},
              {"rank", audit.rank},
              {"device", device_to_json(audit.device)},
              {"entries", std::move(entries)}}
             .dump(1) +
         "\n";
}

AuditFile audit_from_json(std::string_view text, const std::string& origin) {
  const json root = parse_json(text, origin);
  const std::string where = origin + ": ";
  require_object(root, origin);
  const json* version = find_member(root, "format_version");
  if (!version) throw Error(origin + ": format_version: missing; is this an audit file?");
  const std::int64_t v = require_int(*version, member_path(where, "format_version"), 1);
  if (v != kAuditFormatVersion)
    throw Error(origin + ": format_version " + std::to_string(v) + " is not supported; this " +
                "tunelock reads audit files of version " + std::to_string(kAuditFormatVersion));
  AuditFile out;
  out.origin = origin;
  if (const json* rank = find_member(root, "rank"))
    out.rank = static_cast<int>(require_int(*rank, member_path(where, "rank"), -1, 1 << 30));
  if (const json* device = find_member(root, "device"))
    out.device = device_from_json(*device, member_path(where, "device"));
  const json* entries = find_member(root, "entries");
  if (!entries) throw Error(origin + ": entries: missing");
  const std::string at = member_path(where, "entries");
  require_array(*entries, at);
  for (std::size_t i = 0; i < entries->size(); ++i)
    out.entries.push_back(entry_from_json((*entries)[i], index_path(at, i)));
  return out;
}

AuditFile load_audit_file(const std::filesystem::path& path) {
  return audit_from_json(read_file(path), path.string());
}

std::size_t AuditStore::add(AuditEntry entry) {
  std::lock_guard lock(mutex_);
  entries_.push_back(std::move(entry));
  return entries_.size() - 1;
}

void AuditStore::count_call(std::size_t id, std::int64_t calls) {
  std::lock_guard lock(mutex_);
  if (id < entries_.size()) entries_[id].calls += calls;
}

void AuditStore::set_device(Provenance device) {
  std::lock_guard lock(mutex_);
  device_ = std::move(device);
}

bool AuditStore::empty() const {
  std::lock_guard lock(mutex_);
  return entries_.empty();
}

void AuditStore::clear() {
  std::lock_guard lock(mutex_);
  entries_.clear();
}

void AuditStore::write(const std::filesystem::path& prefix, int rank) const {
  AuditFile file;
  {
    std::lock_guard lock(mutex_);
    if (entries_.empty()) return;
    file.entries = entries_;
    file.device = device_;
  }
  file.rank = rank;
  file.device.tool_version = std::string(tool_version());
  // Sorted, so two runs' files compare line by line.
  std::sort(file.entries.begin(), file.entries.end(), [](const AuditEntry& a, const AuditEntry& b) {
    return std::tie(a.arch, a.kernel, a.key) < std::tie(b.arch, b.kernel, b.key);
  });
  write_file_atomically(audit_file_path(prefix, rank), audit_to_json(file));
}

}  // namespace tunelock
