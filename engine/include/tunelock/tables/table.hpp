// A tuned table: one architecture's recorded winners, `kernel -> key (or
// "*") -> config`, plus where they came from. The interface lets a table be
// backed by parsed JSON or, in place, by a binary file: lookups never need a
// copy of the whole table.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunelock/model/config.hpp"

namespace tunelock {

// The key a table uses for "any shape of this kernel".
inline constexpr std::string_view kWildcardKey = "*";

// Where a table came from, so a stale one can be noticed. Recording time is
// taken from the recordings, never from the clock of the tool writing it.
struct Provenance {
  std::string source;        // free text, e.g. "96-GPU recording, majority vote"
  std::string tool_version;  // tunelock version that wrote it
  std::string device_name;
  std::int64_t sm_count = 0;  // 0 = unknown
  std::string driver_version;
  std::string cuda_version;
  std::string recorded_at;
  std::string triton;                           // Megatron's field, kept as read
  std::map<std::string, std::string> packages;  // Megatron's field, kept as read
  // Who voted, for a merged table: record files (one per rank) and distinct
  // runs (`<run>` of `<run>.rank<N>.json`); 0 = not said.
  std::int64_t ranks = 0;
  std::int64_t runs = 0;
  // The fields whose values differed among the records merged (each value
  // is then listed, joined by " | "): empty when every record agreed.
  std::vector<std::string> mixed = {};

  friend bool operator==(const Provenance&, const Provenance&) = default;
};

// What differs between a table's provenance and the running device, one
// line per field ("device_name: table 'H100' vs device 'H200'"), on what
// changes which config is fastest: the GPU's name and SM count, Triton's
// major.minor and CUDA's major version. Fields either side leaves empty are
// not compared; a table merged from several values of a field (" | ")
// matches a device with any of them.
std::vector<std::string> provenance_differences(const Provenance& table, const Provenance& device);

// A table's provenance for people: (label, value) per field it says
// something about (source, device, recorded, driver, cuda, triton,
// packages, voted, mixed, tool), what `tunelock table show` and the page print.
std::vector<std::pair<std::string, std::string>> provenance_lines(const Provenance& provenance);

// The differences on one line, "; "-joined: what a pinned run warns (or,
// under TUNELOCK_PROVENANCE=strict, fails) with.
std::string provenance_difference_line(const Provenance& table, const Provenance& device);

// Per kernel name as filed, the signatures (signature(config)) of configs a
// record saw change their own bits in two runs on identical inputs, or that
// a user declared racy: sorted and unique per kernel. The fallback rules
// (block sizes, cheapest) skip them for every key of the kernel, so every
// rank holding the table skips the same ones. Kept beside "kernels" (a
// top-level member), which Megatron's reader never looks at.
using NondeterministicConfigs = std::map<std::string, std::vector<std::string>, std::less<>>;

// Per kernel name as filed, the identity of the code its entries were
// timed on: "triton:<hash>" (the JIT function's source and dependencies),
// "image:<hash>" (a loaded module's code) or a family's own
// "version:<text>". Kept beside "kernels";
// Megatron's tables have none, and a kernel without one is never compared.
using KernelIdentities = std::map<std::string, std::string, std::less<>>;

// Batch invariance of one kernel's entries, as merge found it from records
// made under TUNELOCK_BATCH_INVARIANT (records/invariance_merge.hpp). Per
// group key (the tuning key less its batch dim, model/batch_rows.hpp):
struct InvariantGroup {
  // The invariance class every entry of the group pins: configs whose rows
  // gave the same bits as each other and as themselves at every size
  // compared. Sorted signatures.
  std::vector<std::string> class_configs;
  // Sizes whose first rows were compared (proven), and the sizes with an
  // entry of their own (recorded): sorted, unique, positive. A size never
  // recorded takes the class config of the nearest recorded size.
  std::vector<std::int64_t> proven;
  std::vector<std::int64_t> recorded;

  friend bool operator==(const InvariantGroup&, const InvariantGroup&) = default;
};

struct KernelInvariance {
  // The key argument that counts rows ("M"); empty: the kernel was recorded
  // under batch invariance and declares no batch dim (its calls have no
  // independent rows: nothing to prove).
  std::string dim;
  std::map<std::string, InvariantGroup, std::less<>> groups;  // group key -> group
  // Configs whose own rows changed with the batch (split-K picked from M,
  // atomics, a grid that follows M): sorted signatures, never pinned.
  std::vector<std::string> variant;

  friend bool operator==(const KernelInvariance&, const KernelInvariance&) = default;
};

// Per kernel name as filed. Kept beside "kernels", as the lists above.
using BatchInvariance = std::map<std::string, KernelInvariance, std::less<>>;

// A recorded config. Matching is Megatron's: the reader fills what an entry
// leaves out (num_ctas 1, maxnreg unset, ir_override null), then every field
// must equal the candidate's, so an entry without num_ctas never pins a
// candidate with num_ctas 2.
struct TableEntry {
  Config config;
  // Configs a record found bit-identical to `config` on every rank that ran
  // both (never `config` itself, never a flagged config): a pinned run may
  // time within them (TUNELOCK_EQUIVALENT=timed) and keep the same bits.
  std::vector<Config> equivalent = {};
  // How many of `equivalent`'s first configs (merge lists them fastest
  // first) the record timed faster than `config`: the ones worth timing
  // beside the tie set. Absent where the file does not say (older or
  // foreign tables).
  std::optional<std::size_t> faster_equivalents = std::nullopt;
  // The merge's tie set less `config`: winners whose timings lay within the
  // ranks' own spread of the best (KeyVerdict::ties). Kept for the audit
  // and for reading; selection never uses it.
  std::vector<Config> ties = {};

  bool matches(const Config& candidate) const { return config == candidate; }
  friend bool operator==(const TableEntry&, const TableEntry&) = default;
};

// `signature`, then ` (equivalent: a, b)` and ` (within noise: c)` when the
// entry lists any: how the table tools print an entry.
std::string describe(const TableEntry& entry);

// Result of asking a table about one (kernel, key) against live candidates.
struct EntryMatch {
  bool present = false;              // the table has an entry for it
  std::optional<std::size_t> index;  // the candidate it names; empty when stale

  bool stale() const { return present && !index; }
};

namespace detail {
// One kernel name asked about several keys in order (selection's exact key,
// then "*"), stopping at the first key whose entry names a live candidate.
// Selection's hot path, not part of the API (detail/table_index.hpp).
struct NameMatch {
  bool kernel_present = false;     // the table has any entry for the name
  std::size_t tried = 0;           // keys asked: up to and including the deciding one
  std::array<EntryMatch, 2> keys;  // the first `tried` are filled
};
struct TableIndexAccess;
}  // namespace detail

class Table {
 public:
  virtual ~Table() = default;

  virtual std::string_view arch() const = 0;
  virtual const Provenance& provenance() const = 0;

  // The entry stored under exactly this kernel name and key (no fallback).
  virtual std::optional<TableEntry> entry(std::string_view kernel, std::string_view key) const = 0;

  // True when the table has any entry for `kernel`: lets a lookup skip a
  // name's keys at once (Megatron's tables hold bare names only).
  virtual bool has_kernel(std::string_view kernel) const = 0;

  // The first candidate the exact entry matches. This is the hot path of a
  // pinned choice: implementations compare in place, without copying configs.
  virtual EntryMatch match(std::string_view kernel, std::string_view key,
                           std::span<const Config> candidates) const = 0;

  // Kernel names and each kernel's keys, sorted, for tools that walk a table.
  virtual std::vector<std::string> kernels() const = 0;
  virtual std::vector<std::string> keys(std::string_view kernel) const = 0;

  // Number of (kernel, key) entries. Tables that know it cheaply override.
  virtual std::size_t entry_count() const;

  // The configs flagged nondeterministic for `kernel` exactly as filed
  // (sorted signatures; empty when none), and every kernel's list.
  std::span<const std::string> nondeterministic(std::string_view kernel) const;
  const NondeterministicConfigs& nondeterministic() const { return nondeterministic_; }
  // Whether `kernel`'s list names `config`: an entry pinning such a config
  // contradicts its own table (never written by merge), and is skipped.
  bool flags(std::string_view kernel, const Config& config) const;
  // Replaces the lists: each sorted and de-duplicated, empty ones dropped.
  void set_nondeterministic(NondeterministicConfigs flagged);

  // The identity of the code `kernel`'s entries were timed on, as filed
  // (empty when the table has none), and every kernel's.
  std::string_view identity(std::string_view kernel) const;
  const KernelIdentities& identities() const { return identities_; }
  // Replaces them; empty identities are dropped.
  void set_identities(KernelIdentities identities);

  // The batch invariance of `kernel` as filed (null when the table says
  // nothing of it), and every kernel's.
  const KernelInvariance* invariance(std::string_view kernel) const;
  const BatchInvariance& invariance() const { return invariance_; }
  // Replaces it. Readers and merge check it against the entries first
  // (tables/table_invariance.hpp).
  void set_invariance(BatchInvariance invariance);

 protected:
  NondeterministicConfigs nondeterministic_;
  KernelIdentities identities_;
  BatchInvariance invariance_;

 protected:
  // Selection's hot-path hooks, reached through detail::TableIndexAccess.
  friend struct detail::TableIndexAccess;

  // False only when the table holds no kernel name of this length. Lets
  // selection skip a name without building it: the qualified name, built
  // and looked up, cost more than the rest of a table hit, and Megatron's
  // tables hold bare names only. The default cannot tell, so says true.
  virtual bool may_hold_kernel_name_of_length(std::size_t length) const;

  // Selection's question for one name (REQUIRES: keys.size() <= 2). The
  // default asks has_kernel and match; a table that can look the name up
  // once overrides it, since this is every pinned choice's path.
  virtual detail::NameMatch match_in_order(std::string_view kernel,
                                           std::span<const std::string_view> keys,
                                           std::span<const Config> candidates) const;
};

// A table held in memory: what the JSON loader builds and what merge fills.
class InMemoryTable final : public Table {
 public:
  explicit InMemoryTable(std::string arch, Provenance provenance = {});
  // `entries`' kernels and keys under this arch and provenance: a reader
  // fills entries before it knows the header that may follow them.
  InMemoryTable(std::string arch, Provenance provenance, InMemoryTable&& entries);
  ~InMemoryTable() override;
  InMemoryTable(InMemoryTable&&) noexcept;
  InMemoryTable& operator=(InMemoryTable&&) noexcept;

  // Sets the entry; true when the key was new to the kernel.
  bool set(std::string kernel, std::string key, TableEntry entry);

  std::string_view arch() const override { return arch_; }
  const Provenance& provenance() const override { return provenance_; }
  std::optional<TableEntry> entry(std::string_view kernel, std::string_view key) const override;
  bool has_kernel(std::string_view kernel) const override;
  EntryMatch match(std::string_view kernel, std::string_view key,
                   std::span<const Config> candidates) const override;
  std::vector<std::string> kernels() const override;
  std::vector<std::string> keys(std::string_view kernel) const override;

 protected:
  bool may_hold_kernel_name_of_length(std::size_t length) const override;
  detail::NameMatch match_in_order(std::string_view kernel, std::span<const std::string_view> keys,
                                   std::span<const Config> candidates) const override;

 private:
  struct Index;  // kernel -> key -> entry, in flat hash maps (table.cpp)

  const TableEntry* find(std::string_view kernel, std::string_view key) const;

  std::string arch_;
  Provenance provenance_;
  std::unique_ptr<Index> index_;
};

}  // namespace tunelock
