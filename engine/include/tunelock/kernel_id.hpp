// Which kernel a choice is about. The module scopes which kernels a policy
// acts on; the qualified name is what logs, records and manifests use.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace tunelock {

struct KernelId {
  std::string module;  // dotted package path, may be empty
  std::string name;    // bare kernel name

  // `module.name`, or just `name` when the module is empty.
  std::string qualified() const;

  // Splits `a.b.kernel` at the last dot into module `a.b` and name `kernel`.
  static KernelId parse(std::string_view qualified);

  friend bool operator==(const KernelId&, const KernelId&) = default;
};

// Prefix match on package boundaries: `a.b` covers `a.b` and `a.b.c`, not `a.bc`.
bool module_covers(std::string_view scope, std::string_view module);

// True when any scope in `scopes` covers `module`.
bool any_module_covers(std::span<const std::string> scopes, std::string_view module);

}  // namespace tunelock
