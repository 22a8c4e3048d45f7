#include "tunelock/decision/numerics.hpp"

#include <algorithm>

#include "base/text.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/tables/table.hpp"
#include "tunelock/tables/table_format.hpp"

namespace tunelock {
namespace {

bool names_kernel(std::string_view filed, const KernelId& kernel, std::string_view qualified) {
  return filed == qualified || filed == kernel.name;
}

}  // namespace

std::vector<DeclaredConfig> parse_declared_configs(std::string_view text,
                                                   const std::string& origin) {
  std::vector<DeclaredConfig> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t bar = std::min(text.find('|', start), text.size());
    const std::string_view item = text::trimmed(text.substr(start, bar - start));
    start = bar + 1;
    if (item.empty()) continue;
    const auto at = item.find('@');
    if (at == std::string_view::npos || at == 0 || at + 1 == item.size()) {
      throw Error(origin + ": '" + std::string(item) +
                  "' is not KERNEL@SIGNATURE; expected items such as "
                  "'pkg.matvec@BLOCK_K=64,SPLIT=4;warps=4;stages=2' joined by '|'");
    }
    DeclaredConfig declared{std::string(text::trimmed(item.substr(0, at))),
                            std::string(text::trimmed(item.substr(at + 1)))};
    check_kernel_name(declared.kernel, origin);
    if (std::find(out.begin(), out.end(), declared) == out.end())
      out.push_back(std::move(declared));
  }
  // Separators alone ("|") declare nothing: a mistake, not an empty list.
  if (out.empty() && !text::trimmed(text).empty())
    throw Error(origin + ": '" + std::string(text) +
                "' names no config; expected items such as "
                "'pkg.matvec@BLOCK_K=64,SPLIT=4;warps=4;stages=2' joined by '|'");
  return out;
}

std::string declared_configs_text(std::span<const DeclaredConfig> declared) {
  std::string out;
  for (const DeclaredConfig& d : declared)
    out += (out.empty() ? "" : "|") + d.kernel + "@" + d.signature;
  return out;
}

std::vector<bool> known_nondeterministic(const KernelId& kernel, std::span<const Config> candidates,
                                         const KnownNondeterministic& known) {
  // The common case, on every fallback's path: nothing is known at all.
  if ((!known.table ||
       (known.table->nondeterministic().empty() && known.table->invariance().empty())) &&
      known.declared.empty() && known.variants.empty())
    return {};
  const std::string qualified = kernel.qualified();
  std::vector<std::string_view> flagged(known.variants.begin(), known.variants.end());
  if (known.table) {
    for (std::string_view name : {std::string_view(qualified), std::string_view(kernel.name)}) {
      for (const std::string& sig : known.table->nondeterministic(name)) flagged.push_back(sig);
      // Batch-variant configs are never pinned either: their rows change
      // with the batch (tables/table.hpp, KernelInvariance).
      if (const KernelInvariance* invariance = known.table->invariance(name))
        for (const std::string& sig : invariance->variant) flagged.push_back(sig);
      if (name == kernel.name) break;  // a kernel without a module has one name
    }
  }
  for (const DeclaredConfig& d : known.declared)
    if (names_kernel(d.kernel, kernel, qualified)) flagged.push_back(d.signature);
  if (flagged.empty()) return {};
  std::vector<bool> out(candidates.size(), false);
  for (std::size_t i = 0; i < candidates.size(); ++i)
    out[i] = std::find(flagged.begin(), flagged.end(), signature(candidates[i])) != flagged.end();
  return out;
}

std::string changed_bits_message(std::string_view qualified, std::string_view key,
                                 std::string_view config_signature) {
  return "pinned config " + std::string(config_signature) + " of kernel '" +
         std::string(qualified) + "' [" + std::string(key) +
         "] gave different bits in two runs on identical inputs: pinning its name does not make "
         "its results repeat (float atomics or a race). The choice stands, so ranks stay alike. "
         "Fix: record a table (TUNELOCK_RECORD; the record's audit flags such configs and merge "
         "files them, so every rank skips them), or declare it nondeterministic "
         "(TUNELOCK_NONDETERMINISTIC='" +
         std::string(qualified) + "@" + std::string(config_signature) +
         "', or on the launcher variant)";
}

std::string unchecked_bits_message(std::string_view qualified) {
  return "kernel '" + std::string(qualified) +
         "' declares no output buffers (outputs, reset_to_zero or restore hooks): the first "
         "pinned call's bits check cannot compare its runs, so its pinned configs are not "
         "checked for repeating bits";
}

}  // namespace tunelock
