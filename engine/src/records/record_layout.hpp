// The {arch: {qualified: {key: value}}} layout that a record file and a JSON
// timing sidecar's "timings" share, walked with the table readers' name
// checks, so every name a merged table will hold is checked on the way in.
// Private to the engine's record readers.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "io/json_checks.hpp"
#include "tunelock/tables/table_format.hpp"

namespace tunelock::record_layout {

// Calls `visit(arch, qualified, key, value, where)` for every leaf of an
// {arch: {qualified: {key: value}}} object, checking the shape on the way.
template <typename Visit>
void walk_three_levels(const nlohmann::json& root, const std::string& where, Visit visit) {
  using namespace json_checks;
  // At the root `where` is "file.json: ", which reads "file.json: : ..." in a message.
  require_object(root, where.ends_with(": ") ? where.substr(0, where.size() - 2) : where);
  for (const auto& [arch, kernels] : root.items()) {
    const std::string arch_where = member_path(where, arch);
    // The names a merged table will hold pass the table readers' checks here.
    check_arch_name(arch, arch_where);
    require_object(kernels, arch_where);
    for (const auto& [qualified, keys] : kernels.items()) {
      const std::string kernel_where = member_path(arch_where, qualified);
      check_kernel_name(qualified, arch_where);
      require_object(keys, kernel_where);
      for (const auto& [key, value] : keys.items()) {
        check_key(key, kernel_where);
        visit(arch, qualified, key, value, kernel_where + "[\"" + key + "\"]");
      }
    }
  }
}

}  // namespace tunelock::record_layout
