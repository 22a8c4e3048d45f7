#include "tunelock/tables/table_diff.hpp"

#include <algorithm>
#include <iterator>
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
  std::set<std::string> kernels;
  for (const Table* table : {&a, &b}) {
    for (const auto& [kernel, flagged] : table->nondeterministic()) kernels.insert(kernel);
    for (const auto& [kernel, identity] : table->identities()) kernels.insert(kernel);
  }
  for (const std::string& kernel : kernels) {
    const std::span<const std::string> was = a.nondeterministic(kernel);
    const std::span<const std::string> now = b.nondeterministic(kernel);
    FlagChange flags{kernel, {}, {}, {}};
    std::set_difference(now.begin(), now.end(), was.begin(), was.end(),
                        std::back_inserter(flags.added));
    std::set_difference(was.begin(), was.end(), now.begin(), now.end(),
                        std::back_inserter(flags.removed));
    if (!flags.added.empty()) {
      for (const std::string& key : a.keys(kernel))
        if (const auto entry = a.entry(kernel, key); entry && b.flags(kernel, entry->config))
          flags.pinned_now_flagged.push_back(key);
    }
    if (!flags.added.empty() || !flags.removed.empty()) out.flags.push_back(std::move(flags));
    const std::string before(a.identity(kernel)), after(b.identity(kernel));
    if (before != after) out.identities.push_back({kernel, before, after});
  }
  return out;
}

std::vector<std::string_view> changed_fields(const EntryChange& change) {
  std::vector<std::string_view> out;
  if (!change.before || !change.after) return out;
  const TableEntry& a = *change.before;
  const TableEntry& b = *change.after;
  if (a.config != b.config) out.push_back("config");
  if (a.equivalent != b.equivalent) out.push_back("equivalent");
  if (a.faster_equivalents != b.faster_equivalents) out.push_back("faster_equivalents");
  if (a.ties != b.ties) out.push_back("ties");
  return out;
}

nlohmann::json table_diff_to_json(const TableDiff& diff) {
  nlohmann::json out = {{"added", nlohmann::json::array()},
                        {"removed", nlohmann::json::array()},
                        {"changed", nlohmann::json::array()}};
  if (diff.arch) out["arch"] = {diff.arch->first, diff.arch->second};
  for (const EntryChange& c : diff.changes) {
    nlohmann::json row = {{"kernel", c.kernel}, {"key", c.key}};
    if (c.before) row["before"] = signature(c.before->config);
    if (c.after) row["after"] = signature(c.after->config);
    for (const auto& [side, entry] :
         {std::pair{"before_equivalent", &c.before}, std::pair{"after_equivalent", &c.after}}) {
      if (!*entry || (*entry)->equivalent.empty()) continue;
      nlohmann::json list = nlohmann::json::array();
      for (const Config& config : (*entry)->equivalent) list.push_back(signature(config));
      row[side] = std::move(list);
    }
    if (c.before && c.after) {
      const std::vector<std::string_view> fields = changed_fields(c);
      row["changed_fields"] = fields;
      row["same_config"] = c.before->config == c.after->config;
    }
    out[!c.before ? "added" : !c.after ? "removed" : "changed"].push_back(row);
  }
  for (const FlagChange& f : diff.flags)
    out["nondeterministic"].push_back({{"kernel", f.kernel},
                                       {"added", f.added},
                                       {"removed", f.removed},
                                       {"pinned_now_flagged", f.pinned_now_flagged}});
  for (const IdentityChange& i : diff.identities)
    out["identities"].push_back({{"kernel", i.kernel}, {"before", i.before}, {"after", i.after}});
  return out;
}

}  // namespace tunelock
