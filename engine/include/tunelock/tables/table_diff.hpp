// What changed from one table to another: entries added, removed or
// changed, and the arch when it differs. One definition for every tool that
// shows a diff (the CLI, the browser preview).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tunelock/tables/table.hpp"

namespace tunelock {

struct EntryChange {
  std::string kernel;
  std::string key;
  std::optional<TableEntry> before;  // empty: added
  std::optional<TableEntry> after;   // empty: removed
};

// A kernel's nondeterministic list, changed: configs the second table
// flags that the first did not, and the reverse. A newly flagged config is
// skipped by the second table's fallback rules and contradicts an entry
// that pins it, so the two tables launch different configs.
struct FlagChange {
  std::string kernel;
  std::vector<std::string> added;    // signatures
  std::vector<std::string> removed;  // signatures
  // Keys of the first table whose entry pins a config the second now flags.
  std::vector<std::string> pinned_now_flagged;
};

// A kernel's code identity, changed (empty: none filed on that side).
struct IdentityChange {
  std::string kernel;
  std::string before;
  std::string after;
};

struct TableDiff {
  std::optional<std::pair<std::string, std::string>> arch;  // set when the archs differ
  std::vector<EntryChange> changes;                         // sorted by kernel, then key
  std::vector<FlagChange> flags;                            // sorted by kernel
  std::vector<IdentityChange> identities;                   // sorted by kernel

  bool empty() const { return !arch && changes.empty() && flags.empty() && identities.empty(); }
  // Entries, flag lists and identities that differ, and the arch: what the
  // text report counts.
  std::size_t differences() const {
    return changes.size() + flags.size() + identities.size() + (arch ? 1 : 0);
  }
};

TableDiff diff_tables(const Table& a, const Table& b);

// What differs between a changed entry's two sides, in this order:
// "config", "equivalent", "faster_equivalents", "ties". Without "config"
// both tables launch the same config: only what was measured around it moved.
std::vector<std::string_view> changed_fields(const EntryChange& change);

// {"added"|"removed"|"changed": [{"kernel", "key", "before", "after"}], "arch": [a, b] when they
// differ}; a changed row also has "changed_fields" (changed_fields) and
// "same_config" (true when both sides launch the same config);
// "nondeterministic": [{"kernel", "added", "removed", "pinned_now_flagged"}]
// and "identities": [{"kernel", "before", "after"}] when any changed.
nlohmann::json table_diff_to_json(const TableDiff& diff);

}  // namespace tunelock
