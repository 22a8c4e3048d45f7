// Which kernel a choice is about. The module scopes which kernels a policy
// acts on; the qualified name is what logs, records and manifests use.
#pragma once

#include <array>
#include <span>
#include <string>
#include <string_view>

namespace tunelock {

struct KernelId {
  std::string module;  // dotted package path, may be empty
  std::string name;    // bare kernel name

  // `module.name`, or just `name` when the module is empty.
  std::string qualified() const;
  // The same name appended to `out`, and its length without building it:
  // for hot paths that keep a reused buffer or skip the name altogether.
  void append_qualified(std::string& out) const;
  std::size_t qualified_size() const;

  // Splits `a.b.kernel` at the last dot into module `a.b` and name `kernel`.
  static KernelId parse(std::string_view qualified);

  friend bool operator==(const KernelId&, const KernelId&) = default;
};

// The names a table may file a kernel's entries under, in the order a
// lookup tries them: the qualified name, then the bare name (Megatron's
// tables use bare names). The one statement of that rule for selection, the
// page and the table tools. `qualified` is kernel.qualified(), passed in so
// the hot path can keep it in a reused buffer (selection leaves it unbuilt,
// and skips names[0], when the table holds no name that long). The names
// are views into `kernel` and `qualified`: both must outlive the result
// (never pass a temporary KernelId or string).
struct TableNames {
  std::array<std::string_view, 2> names;
  std::size_t count = 0;
  const std::string_view* begin() const { return names.data(); }
  const std::string_view* end() const { return names.data() + count; }
};
TableNames table_names(const KernelId& kernel, std::string_view qualified);

// The same rule read the other way: whether a table's entries filed under
// `table_name` apply to `kernel`.
bool table_name_applies(std::string_view table_name, const KernelId& kernel);

// Prefix match on package boundaries: `a.b` covers `a.b` and `a.b.c`, not `a.bc`.
bool module_covers(std::string_view scope, std::string_view module);

// True when any scope in `scopes` covers `module`.
bool any_module_covers(std::span<const std::string> scopes, std::string_view module);

}  // namespace tunelock
