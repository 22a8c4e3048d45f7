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

struct TableDiff {
  std::optional<std::pair<std::string, std::string>> arch;  // set when the archs differ
  std::vector<EntryChange> changes;                         // sorted by kernel, then key

  bool empty() const { return !arch && changes.empty(); }
};

TableDiff diff_tables(const Table& a, const Table& b);

// What differs between a changed entry's two sides, in this order:
// "config", "equivalent", "faster_equivalents", "ties". Without "config"
// both tables launch the same config: only what was measured around it moved.
std::vector<std::string_view> changed_fields(const EntryChange& change);

// {"added"|"removed"|"changed": [{"kernel", "key", "before", "after"}], "arch": [a, b] when they
// differ}; a changed row also has "changed_fields" (changed_fields) and
// "same_config" (true when both sides launch the same config).
nlohmann::json table_diff_to_json(const TableDiff& diff);

}  // namespace tunelock
