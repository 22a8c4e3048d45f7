#include "tunelock/tables/table_invariance.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "tunelock/base/error.hpp"
#include "tunelock/model/batch_rows.hpp"

namespace tunelock {
namespace {

template <typename T>
bool sorted_unique(const std::vector<T>& items) {
  return std::adjacent_find(items.begin(), items.end(),
                            [](const T& a, const T& b) { return !(a < b); }) == items.end();
}

void check_sizes(const std::vector<std::int64_t>& sizes, const std::string& where) {
  for (std::int64_t size : sizes)
    if (size < 1) throw Error(where + ": " + std::to_string(size) + " is not a positive size");
  if (!sorted_unique(sizes)) throw Error(where + ": not sorted and unique");
}

void check_signatures(const std::vector<std::string>& signatures, const std::string& where) {
  for (const std::string& sig : signatures) config_from_signature(sig, where);
  if (!sorted_unique(signatures)) throw Error(where + ": not sorted and unique");
}

std::string sizes_text(const std::vector<std::int64_t>& sizes) {
  std::string out;
  for (std::int64_t size : sizes) out += (out.empty() ? "" : ", ") + std::to_string(size);
  return "{" + out + "}";
}

std::vector<std::int64_t> sizes_from(const nlohmann::json& value, const std::string& where) {
  if (!value.is_array()) throw Error(where + ": expected a list of sizes, got " + value.dump());
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_number_integer())
      throw Error(where + "[" + std::to_string(i) + "]: expected a positive integer, got " +
                  value[i].dump());
    out.push_back(value[i].get<std::int64_t>());
  }
  return out;
}

std::vector<std::string> signatures_from(const nlohmann::json& value, const std::string& where) {
  if (!value.is_array())
    throw Error(where + ": expected a list of signatures, got " + value.dump());
  std::vector<std::string> out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string())
      throw Error(where + "[" + std::to_string(i) + "]: expected a signature, got " +
                  value[i].dump());
    out.push_back(value[i].get<std::string>());
  }
  return out;
}

void require_object_at(const nlohmann::json& value, const std::string& where) {
  if (!value.is_object()) throw Error(where + ": expected an object, got " + value.dump());
}

}  // namespace

nlohmann::json batch_invariance_to_json(const BatchInvariance& invariance) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [kernel, k] : invariance) {
    if (k.dim.empty()) {
      out[kernel] = {{"dim", nullptr}};
      continue;
    }
    nlohmann::json groups = nlohmann::json::object();
    for (const auto& [group_key, g] : k.groups)
      groups[group_key] = {
          {"class", g.class_configs}, {"proven", g.proven}, {"recorded", g.recorded}};
    out[kernel] = {{"dim", k.dim}, {"groups", std::move(groups)}, {"variant", k.variant}};
  }
  return out;
}

BatchInvariance batch_invariance_from_json(const nlohmann::json& value, const std::string& where) {
  require_object_at(value, where);
  BatchInvariance out;
  for (const auto& [kernel, item] : value.items()) {
    const std::string at = where + "." + kernel;
    require_object_at(item, at);
    KernelInvariance k;
    for (const auto& [name, member] : item.items()) {
      const std::string member_at = at + "." + name;
      if (name == "dim") {
        if (member.is_null()) continue;
        if (!member.is_string())
          throw Error(member_at + ": expected a key argument's name or null");
        k.dim = member.get<std::string>();
        check_batch_dim_name(k.dim, member_at);
      } else if (name == "variant") {
        k.variant = signatures_from(member, member_at);
      } else if (name == "groups") {
        require_object_at(member, member_at);
        for (const auto& [group_key, group] : member.items()) {
          const std::string group_at = member_at + "[\"" + group_key + "\"]";
          require_object_at(group, group_at);
          InvariantGroup g;
          for (const auto& [field, data] : group.items()) {
            if (field == "class") {
              g.class_configs = signatures_from(data, group_at + ".class");
            } else if (field == "proven") {
              g.proven = sizes_from(data, group_at + ".proven");
            } else if (field == "recorded") {
              g.recorded = sizes_from(data, group_at + ".recorded");
            } else {
              throw Error(group_at + "." + field +
                          ": unknown field; known: class, proven, recorded");
            }
          }
          k.groups[group_key] = std::move(g);
        }
      } else {
        throw Error(member_at + ": unknown field; known: dim, groups, variant");
      }
    }
    if (!item.contains("dim")) throw Error(at + ".dim: missing");
    out[kernel] = std::move(k);
  }
  return out;
}

void check_invariance(const Table& table, const std::string& origin) {
  for (const auto& [kernel, invariance] : table.invariance()) {
    const std::string where = origin + ": invariance of " + kernel;
    if (invariance.dim.empty()) {
      if (!invariance.groups.empty() || !invariance.variant.empty())
        throw Error(where + ": groups or batch-variant configs without a batch dim");
      continue;
    }
    check_batch_dim_name(invariance.dim, where + ": dim");
    check_signatures(invariance.variant, where + ": variant");
    for (const auto& [group_key, group] : invariance.groups) {
      const std::string at = where + " [" + group_key + "]";
      if (group.class_configs.empty()) throw Error(at + ": class: empty");
      check_signatures(group.class_configs, at + ": class");
      check_sizes(group.proven, at + ": proven");
      check_sizes(group.recorded, at + ": recorded");
      if (group.recorded.empty()) throw Error(at + ": recorded: empty");
      for (const std::string& sig : group.class_configs)
        if (std::binary_search(invariance.variant.begin(), invariance.variant.end(), sig))
          throw Error(at + ": " + sig + " is both in the class and batch-variant");
    }
    // Every entry of a group pins a config of its class, at a recorded size;
    // every recorded size has its entry.
    std::map<std::string, std::set<std::int64_t>, std::less<>> entered;
    for (const std::string& key : table.keys(kernel)) {
      const std::optional<std::int64_t> size = batch_size_of(key, invariance.dim);
      if (!size) continue;
      const std::string group_key = group_key_of(key, invariance.dim);
      const auto group = invariance.groups.find(group_key);
      if (group == invariance.groups.end()) continue;
      const std::optional<TableEntry> entry = table.entry(kernel, key);
      const std::string sig = signature(entry->config);
      const auto& members = group->second.class_configs;
      if (!std::binary_search(members.begin(), members.end(), sig))
        throw Error(where + " [" + key + "]: the entry pins " + sig +
                    ", outside its invariance class; re-merge the table from its records");
      if (!std::binary_search(group->second.recorded.begin(), group->second.recorded.end(), *size))
        throw Error(where + " [" + key + "]: an entry at " + invariance.dim + "=" +
                    std::to_string(*size) + ", a size its group does not list as recorded");
      entered[group_key].insert(*size);
    }
    for (const auto& [group_key, group] : invariance.groups)
      for (std::int64_t size : group.recorded)
        if (!entered[group_key].count(size))
          throw Error(where + " [" + group_key + "]: recorded size " + std::to_string(size) +
                      " has no entry");
  }
}

std::string_view to_string(InvarianceVerdict verdict) {
  switch (verdict) {
    case InvarianceVerdict::proven:
      return "proven";
    case InvarianceVerdict::no_batch_dim:
      return "no batch dim";
    case InvarianceVerdict::extrapolated:
      return "extrapolated";
    case InvarianceVerdict::unproven:
      return "unproven";
  }
  return "unproven";
}

std::vector<KernelInvarianceReport> invariance_report(const Table& table) {
  std::vector<KernelInvarianceReport> out;
  for (const std::string& kernel : table.kernels()) {
    KernelInvarianceReport report{kernel};
    const KernelInvariance* invariance = table.invariance(kernel);
    if (!invariance) {
      out.push_back(std::move(report));
      continue;
    }
    if (invariance->dim.empty()) {
      report.verdict = InvarianceVerdict::no_batch_dim;
      out.push_back(std::move(report));
      continue;
    }
    report.dim = invariance->dim;
    report.variant = invariance->variant;
    report.groups = invariance->groups.size();
    std::set<std::int64_t> proven;
    for (const auto& [group_key, group] : invariance->groups)
      proven.insert(group.proven.begin(), group.proven.end());
    report.proven.assign(proven.begin(), proven.end());
    for (const std::string& key : table.keys(kernel)) {
      const std::optional<std::int64_t> size = batch_size_of(key, invariance->dim);
      const auto group = size ? invariance->groups.find(group_key_of(key, invariance->dim))
                              : invariance->groups.end();
      const bool proven_here =
          group != invariance->groups.end() &&
          std::binary_search(group->second.proven.begin(), group->second.proven.end(), *size);
      if (!proven_here) report.unproven.push_back(key);
    }
    report.verdict = report.unproven.empty() ? InvarianceVerdict::proven
                     : report.groups         ? InvarianceVerdict::extrapolated
                                             : InvarianceVerdict::unproven;
    out.push_back(std::move(report));
  }
  return out;
}

bool invariance_passes(const std::vector<KernelInvarianceReport>& reports) {
  bool any_proven = false;
  for (const KernelInvarianceReport& r : reports) {
    if (r.verdict == InvarianceVerdict::proven) any_proven = true;
    if (r.verdict == InvarianceVerdict::extrapolated || r.verdict == InvarianceVerdict::unproven)
      return false;
  }
  return any_proven;
}

std::string invariance_report_text(const std::vector<KernelInvarianceReport>& reports) {
  std::string out;
  for (const KernelInvarianceReport& r : reports) {
    out += r.kernel + ": ";
    switch (r.verdict) {
      case InvarianceVerdict::proven:
        out += "proven over " + r.dim + " in " + sizes_text(r.proven) + " (" +
               std::to_string(r.groups) + (r.groups == 1 ? " group" : " groups") +
               "); other sizes take the nearest recorded size's class config (extrapolated)";
        break;
      case InvarianceVerdict::no_batch_dim:
        out += "no batch dim: recorded under batch invariance, declares no rows to compare";
        break;
      case InvarianceVerdict::extrapolated:
        out += "extrapolated: rows never compared at its entries for";
        for (const std::string& key : r.unproven) out += " [" + key + "]";
        if (!r.proven.empty()) out += "; proven over " + r.dim + " in " + sizes_text(r.proven);
        break;
      case InvarianceVerdict::unproven:
        out +=
            "unproven: no invariance audit (record it under TUNELOCK_BATCH_INVARIANT=1 with a "
            "declared batch dim)";
        break;
    }
    if (!r.variant.empty()) {
      out += "; batch-variant, never pinned:";
      for (const std::string& sig : r.variant) out += " " + sig;
    }
    out += "\n";
  }
  if (reports.empty()) out += "the table has no kernels: nothing is proven\n";
  return out;
}

nlohmann::json invariance_report_to_json(const std::vector<KernelInvarianceReport>& reports) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const KernelInvarianceReport& r : reports)
    kernels.push_back({{"kernel", r.kernel},
                       {"verdict", std::string(to_string(r.verdict))},
                       {"dim", r.dim},
                       {"proven", r.proven},
                       {"variant", r.variant},
                       {"unproven", r.unproven},
                       {"groups", r.groups}});
  return {{"passes", invariance_passes(reports)}, {"kernels", kernels}};
}

std::vector<std::string> invariance_lines(const Table& table) {
  std::vector<std::string> lines;
  for (const auto& [kernel, item] : table.invariance()) {
    if (item.dim.empty()) {
      lines.push_back(kernel + " declares no batch dim");
      continue;
    }
    for (const auto& [group_key, group] : item.groups) {
      std::string line = kernel + " [" + group_key + "] over " + item.dim + ": class";
      for (const std::string& sig : group.class_configs) line += " " + sig;
      line += "; proven at " + std::to_string(group.proven.size()) + " size(s), up to " +
              std::to_string(group.proven.empty() ? 0 : group.proven.back());
      lines.push_back(std::move(line));
    }
    for (const std::string& sig : item.variant)
      lines.push_back(kernel + " " + sig + " is batch-variant, never pinned");
  }
  return lines;
}

}  // namespace tunelock
