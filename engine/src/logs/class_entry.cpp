#include "tunelock/logs/class_entry.hpp"

#include <algorithm>
#include <string>

#include "tunelock/model/batch_rows.hpp"

namespace tunelock {

std::optional<ChoiceEntry> class_choice_entry(const Table& table, std::string_view arch,
                                              const KernelId& kernel, std::string_view key,
                                              std::string_view launched) {
  if (table.invariance().empty()) return std::nullopt;  // the common case: one check
  const std::string qualified = kernel.qualified();
  for (std::string_view name : {std::string_view(qualified), std::string_view(kernel.name)}) {
    const KernelInvariance* invariance = table.invariance(name);
    if (!invariance || invariance->dim.empty()) continue;
    if (!batch_size_of(key, invariance->dim)) continue;
    const auto group = invariance->groups.find(group_key_of(key, invariance->dim));
    if (group == invariance->groups.end()) continue;
    const std::vector<std::string>& members = group->second.class_configs;
    if (!std::binary_search(members.begin(), members.end(), launched)) return std::nullopt;
    std::string value = "class{";
    for (std::size_t i = 0; i < members.size(); ++i) value += (i ? " | " : "") + members[i];
    value += "}";
    return ChoiceEntry{
        choice_log_key(kClassEntryArch, qualified,
                       std::string(arch) + "|" + key_at_every_size(key, invariance->dim)),
        choice_log_value(value, ChoiceOrigin::pinned)};
  }
  return std::nullopt;
}

}  // namespace tunelock
