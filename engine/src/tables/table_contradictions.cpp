#include "tunelock/tables/table_contradictions.hpp"

namespace tunelock {

std::string Contradiction::text() const {
  return "kernel " + kernel + " [" + key + "]: " + role + " config " + config +
         " is also listed as nondeterministic for that kernel";
}

std::vector<Contradiction> table_contradictions(const Table& table) {
  std::vector<Contradiction> out;
  if (table.nondeterministic().empty()) return out;
  for (const std::string& kernel : table.kernels()) {
    if (table.nondeterministic(kernel).empty()) continue;
    for (const std::string& key : table.keys(kernel)) {
      const TableEntry entry = *table.entry(kernel, key);
      auto check = [&](const Config& config, const char* role) {
        if (table.flags(kernel, config)) out.push_back({kernel, key, signature(config), role});
      };
      check(entry.config, "pinned");
      for (const Config& c : entry.equivalent) check(c, "equivalent");
      for (const Config& c : entry.ties) check(c, "tied");
    }
  }
  return out;
}

}  // namespace tunelock
