// What tunelock knows about a config's bits, and the rules that use it.
// A config is pinned for its bits: one whose outputs differ between two
// runs of itself on identical inputs (float atomics, races) gives different
// results on every run however firmly its name is pinned. Such configs are
// known three ways — a record's audit flagged them and merge filed them in
// the table, the user declared them in the policy, or the user declared them
// on a launcher variant — and the fallback rules (block sizes, cheapest)
// skip every one of them, identically on every rank.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunelock/model/config.hpp"
#include "tunelock/model/kernel_id.hpp"

namespace tunelock {

class Table;

// A config the user declares nondeterministic for a kernel (qualified or
// bare name), by its signature.
struct DeclaredConfig {
  std::string kernel;
  std::string signature;

  friend bool operator==(const DeclaredConfig&, const DeclaredConfig&) = default;
};

// `kernel@signature` items joined by `|` (signatures hold `,` and `;`), as
// TUNELOCK_NONDETERMINISTIC spells them. Throws Error naming `origin`.
std::vector<DeclaredConfig> parse_declared_configs(std::string_view text,
                                                   const std::string& origin);
std::string declared_configs_text(std::span<const DeclaredConfig> declared);

// Where a kernel's known-nondeterministic configs come from.
struct KnownNondeterministic {
  const Table* table = nullptr;              // the table's per-kernel lists
  std::span<const DeclaredConfig> declared;  // the policy's declarations, any kernel
  std::span<const std::string> variants;     // signatures declared on this kernel's variants
};

// Per candidate, true when a source names it for `kernel` (its qualified or
// bare name); empty when no source names any config of the kernel, which
// costs no signature (the common case, on the fallback's path).
std::vector<bool> known_nondeterministic(const KernelId& kernel, std::span<const Config> candidates,
                                         const KnownNondeterministic& known);

// The first pinned call's bits check, in words every face shares: the
// pinned config gave different bits in two runs on identical inputs.
std::string changed_bits_message(std::string_view qualified, std::string_view key,
                                 std::string_view config_signature);
// The check could not run: the call declares nothing to compare.
std::string unchecked_bits_message(std::string_view qualified);

}  // namespace tunelock
