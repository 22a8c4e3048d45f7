#include "tunelock/model/kernel_id.hpp"

#include <algorithm>

namespace tunelock {

std::string KernelId::qualified() const {
  std::string out;
  out.reserve(qualified_size());
  append_qualified(out);
  return out;
}

void KernelId::append_qualified(std::string& out) const {
  if (!module.empty()) out.append(module).append(1, '.');
  out.append(name);
}

std::size_t KernelId::qualified_size() const {
  return module.empty() ? name.size() : module.size() + 1 + name.size();
}

KernelId KernelId::parse(std::string_view qualified) {
  const auto dot = qualified.rfind('.');
  if (dot == std::string_view::npos) return KernelId{"", std::string(qualified)};
  return KernelId{std::string(qualified.substr(0, dot)), std::string(qualified.substr(dot + 1))};
}

bool module_covers(std::string_view scope, std::string_view module) {
  if (!module.starts_with(scope)) return false;
  return module.size() == scope.size() || module[scope.size()] == '.';
}

bool any_module_covers(std::span<const std::string> scopes, std::string_view module) {
  return std::any_of(scopes.begin(), scopes.end(),
                     [&](const std::string& scope) { return module_covers(scope, module); });
}

TableNames table_names(const KernelId& kernel, std::string_view qualified) {
  if (kernel.module.empty()) return {{qualified, {}}, 1};
  return {{qualified, kernel.name}, 2};
}

bool table_name_applies(std::string_view table_name, const KernelId& kernel) {
  const std::string qualified = kernel.qualified();
  const TableNames names = table_names(kernel, qualified);
  return std::find(names.begin(), names.end(), table_name) != names.end();
}

}  // namespace tunelock
