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

// {"added"|"removed"|"changed": [{"kernel", "key", "before", "after"}], "arch": [a, b] when they
// differ}
nlohmann::json table_diff_to_json(const TableDiff& diff);

}  // namespace tunelock
