// What the process should do with autotuned kernels: the intent, kept apart
// from the rules that carry it out (selection.hpp), from the plan of a first
// call (call_plan.hpp) and from the driver that carries the plan out for
// every face (runtime/first_call.hpp). Every source — environment, command
// line flags, key/value pairs (policy_sources.hpp) — builds this same object.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunelock/decision/numerics.hpp"
#include "tunelock/model/kernel_id.hpp"

namespace tunelock {

enum class Mode {
  automatic,  // "auto": timing picks, as the autotuner would; observed and logged only
  pinned,     // choose without a clock: table, block sizes, then on_miss
  record,     // time as usual and capture every winner and timing into records
  // launch what `pinned` launches (same bits, same log, same verify) and, on
  // the first call per key, also time every live candidate and check the
  // pinned config's bits and the entry's equivalents: what the table costs
  // today, written to <record path>.rank<N>.audit.json (records/audit_file.hpp)
  audit,
  // launch what `pinned` launches from the first call, time every live
  // candidate as record mode does, and let each verify turn the ranks'
  // timings into one winner per key (merge's rule) that every rank then
  // launches; at exit the group's lowest rank writes the table
  // (runtime/consensus.hpp)
  consensus,
};

// What a pinned run does when its table was recorded on another machine
// (provenance_differences).
enum class ProvenanceCheck {
  warn,    // one line, once per table; the table is used
  strict,  // an Error: the table is not used
  ignore,  // silence
};

enum class OnMiss {
  min_cost,  // cheapest candidate, with a once-per-kernel warning
  error,     // raise, saying how to record a table
};

// What a pinned run does with an entry's equivalent configs.
enum class Equivalent {
  off,    // launch the entry's config
  timed,  // time the entry's config and its equivalents once per key, launch the fastest
};

struct BlockSize {
  std::string name;  // starts with BLOCK
  std::int64_t value = 0;

  friend bool operator==(const BlockSize&, const BlockSize&) = default;
};

struct Policy {
  // ---- Affect behaviour ----

  // Explicit mode. When omitted: a record path selects `record`, the
  // deterministic flag selects `pinned`, anything else `auto`.
  std::optional<Mode> mode;

  // A determinism request from the framework (TUNELOCK_DETERMINISTIC); it
  // only matters when `mode` is omitted.
  bool deterministic = false;

  // Module prefixes the policy acts on, on package boundaries. Empty (the
  // default) means every registered kernel family.
  std::vector<std::string> modules;

  // Kernels whose config does not change numerics (qualified or bare names).
  // They stay timed under `pinned` and are neither pinned, logged nor verified.
  std::vector<std::string> config_invariant;

  // Directories searched for `<arch>.tlb` then `<arch>.json`, in order,
  // before the installed tables. A leading `~` is the home folder.
  std::vector<std::string> table_path;

  // File prefix for records: `<record_path>.rank<N>.json`. REQUIRED in record
  // mode. A leading `~` is the home folder; a trailing '/' is an error.
  std::string record_path;

  // What a pinned choice does when no table entry and no block size decides.
  OnMiss on_miss = OnMiss::min_cost;

  // Explicit block-size overrides: the first candidate matching all of them wins.
  std::vector<BlockSize> block_sizes;

  // Check cross-rank agreement every N iterations of maybe_verify; 0 = off.
  int verify_every = 0;

  // Raise on every rank when a check finds a conflict (default: report only).
  bool verify_strict = false;

  // Report each multi-variant family once as PINNED, TIMED or UNPINNED.
  bool enumerate = false;

  // Positive control: pick a different config per rank on purpose. Never for
  // real runs; it exists to prove the divergence check is not blind.
  bool chaos = false;

  // Configs declared to change their own bits (kernel + signature): the
  // fallback rules skip them, as they skip configs a table flags.
  std::vector<DeclaredConfig> nondeterministic;

  // The first pinned call per key runs its config twice and compares the
  // bits (warns, or errors under verify_strict; never changes the choice).
  bool check_bits = true;

  // TUNELOCK_EQUIVALENT: `timed` lets a pinned rank time within an entry's
  // equivalent configs (same bits by the record's audit) and launch the
  // fastest; the log still names the entry's config, so digests and
  // verification are those of plain pinned.
  Equivalent equivalent = Equivalent::off;

  // TUNELOCK_PROVENANCE: warn (default), strict or ignore when a table's
  // provenance differs from the running device.
  ProvenanceCheck provenance = ProvenanceCheck::warn;

  // TUNELOCK_IDENTITY: warn (default), strict or ignore when a kernel's
  // code differs from the code its table entries were timed on (compared
  // once per kernel, at its first pinned call).
  ProvenanceCheck identity = ProvenanceCheck::warn;

  // TUNELOCK_BATCH_INVARIANT: kernels that declare a batch dim (rows that
  // are independent: M of a GEMM) are tuned so that the same row gives the
  // same bits at every batch size. Record runs the invariance audit (each
  // candidate on the first rows, at a ladder of sizes); pinned checks row 0
  // against a one-row call once per kernel and never leaves a table's
  // invariance class (model/batch_rows.hpp, docs/batch-invariance.md).
  bool batch_invariant = false;

  // ---- Affect robustness ----

  // Longest wait for peers in a verification, in seconds. Long by default so
  // a step that includes record-mode tuning fits.
  double verify_timeout_s = 1800;

  // The mode after resolution: explicit > record path > deterministic > auto.
  Mode effective_mode() const;

  // True when choices are made without a clock: `pinned`, and `audit` and
  // `consensus`, which launch what pinned launches (consensus until a check
  // agrees on a winner, which every rank then launches alike).
  bool pins() const {
    const Mode m = effective_mode();
    return m == Mode::pinned || m == Mode::audit || m == Mode::consensus;
  }

  // True when a pinned first call times an entry's equivalents and
  // launches the fastest (TUNELOCK_EQUIVALENT=timed). Chaos launches a
  // config at random on purpose, so it times nothing.
  bool times_equivalents() const { return equivalent == Equivalent::timed && !chaos; }

  // True when a face has to step in at call time: mode != auto, or
  // enumerate, or verification (auto mode then only observes and logs).
  bool intercepts() const;

  // True when the policy acts on this kernel (scope check only).
  bool in_scope(const KernelId& kernel) const;

  // True when the kernel is listed as config-invariant (qualified or bare name).
  bool is_config_invariant(const KernelId& kernel) const;

  // True when the kernel's choices are pinned, logged and verified: in
  // scope and not config-invariant.
  bool observes(const KernelId& kernel) const {
    return in_scope(kernel) && !is_config_invariant(kernel);
  }

  // Throws Error naming the field and the fix when the policy cannot be carried out.
  void validate() const;

  friend bool operator==(const Policy&, const Policy&) = default;
};

std::string_view to_string(Mode mode);
std::string_view to_string(OnMiss on_miss);
std::string_view to_string(Equivalent equivalent);
std::string_view to_string(ProvenanceCheck check);

// The block-size overrides' own rules (BLOCK* names, positive values, each
// name once), as Policy::validate applies them: for tools that take block
// sizes without a whole policy (`tunelock choose --block`, the page).
void validate_block_sizes(std::span<const BlockSize> block_sizes);

}  // namespace tunelock
