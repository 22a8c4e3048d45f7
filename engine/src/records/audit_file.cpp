#include "tunelock/records/audit_file.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "io/json_checks.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/base/version.hpp"
#include "tunelock/io/file_kind.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/io/json_reader.hpp"
#include "tunelock/io/rank_files.hpp"
#include "tunelock/records/timing_json.hpp"
#include "tunelock/tables/provenance_json.hpp"

namespace tunelock {
namespace {

using nlohmann::json;
using namespace json_checks;

constexpr int kAuditFormatVersion = 1;

std::string string_member(const json& object, std::string_view field, const std::string& where) {
  const json* value = find_member(object, field);
  if (!value) throw Error(member_path(where, field) + ": missing");
  return require_string(*value, member_path(where, field));
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
                               median_ms_from_json(*ms, member_path(item, "median_ms"))};
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
  require_file_kind(origin, text, FileKind::audit,
                    "table audit reads the audit files an audit run writes "
                    "(TUNELOCK_MODE=audit TUNELOCK_RECORD=PREFIX: PREFIX.rank<N>.audit.json)");
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
    out.rank = static_cast<int>(require_int(*rank, member_path(where, "rank"), -1, kMaxRank));
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

}  // namespace tunelock
