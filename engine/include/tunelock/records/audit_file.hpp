// What a `TUNELOCK_MODE=audit` run found on one rank, and its file
// `<prefix>.rank<N>.audit.json`: per pinned (arch, kernel, key), the config
// pinned launched, every live candidate's timing on this machine today, what
// the bits checks saw, and how many calls the key took. Written by the
// runtime at exit; read by `tunelock table audit`, `tunelock.audit` and the
// page (audit_report.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunelock/tables/table.hpp"

namespace tunelock {

struct AuditedCandidate {
  std::string signature;
  std::optional<double> median_ms;  // empty when it failed to run
  // Gave different bits in two runs of itself: never a config a table
  // could pin, so never the "fastest" a regret is measured against.
  bool nondeterministic = false;
};

struct AuditEntry {
  std::string arch;
  std::string kernel;  // qualified
  std::string key;
  std::string pinned;  // signature of the config pinned launches
  std::string reason;  // the rule that chose it: table, table*, block_sizes, min_cost
  // The table has an entry for the key that names no live candidate, so a
  // fallback rule chose.
  bool stale = false;
  // Two runs of the pinned config on identical inputs: true same bits,
  // false changed, empty not compared (nothing declared, or inside a capture).
  std::optional<bool> repeats;
  // The entry's equivalent configs whose bits differed from the pinned
  // config's on this call's inputs (sorted signatures).
  std::vector<std::string> equivalent_differs = {};
  std::vector<AuditedCandidate> candidates = {};  // every live candidate, in candidate order
  std::int64_t calls = 0;                         // calls this key took in the run

  // The pinned config's timing, when it ran.
  std::optional<double> pinned_ms() const;
};

struct AuditFile {
  std::string origin;  // for messages
  int rank = -1;
  Provenance device;
  std::vector<AuditEntry> entries;
};

// `<prefix>.rank<N>.audit.json`.
std::filesystem::path audit_file_path(const std::filesystem::path& prefix, int rank);

std::string audit_to_json(const AuditFile& audit);
// Throws Error naming `origin` and the JSON path of anything malformed.
AuditFile audit_from_json(std::string_view text, const std::string& origin);
AuditFile load_audit_file(const std::filesystem::path& path);

// One rank's audit as a run collects it: thread-safe; entries are numbered
// so a launcher counts a key's calls without looking the key up again.

}  // namespace tunelock
