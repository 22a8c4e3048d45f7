#include "tunelock/table_diff.hpp"

#include <set>

namespace tunelock {

TableDiff diff_tables(const Table& a, const Table& b) {
  TableDiff out;
  if (a.arch() != b.arch()) out.arch = {std::string(a.arch()), std::string(b.arch())};
  std::set<std::pair<std::string, std::string>> keys;
  for (const Table* table : {&a, &b})
    for (const std::string& kernel : table->kernels())
      for (const std::string& key : table->keys(kernel)) keys.emplace(kernel, key);
  for (const auto& [kernel, key] : keys) {
    auto before = a.entry(kernel, key);
    auto after = b.entry(kernel, key);
    if (before && after && *before == *after) continue;
    out.changes.push_back(EntryChange{kernel, key, std::move(before), std::move(after)});
  }
  return out;
}

}  // namespace tunelock
