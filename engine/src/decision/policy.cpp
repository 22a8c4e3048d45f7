#include "tunelock/decision/policy.hpp"

#include <algorithm>
#include <set>

#include "tunelock/base/error.hpp"
#include "tunelock/model/config.hpp"

namespace tunelock {

std::string_view to_string(Mode mode) {
  switch (mode) {
    case Mode::automatic:
      return "auto";
    case Mode::pinned:
      return "pinned";
    case Mode::record:
      return "record";
    case Mode::audit:
      return "audit";
    case Mode::consensus:
      return "consensus";
  }
  return "unknown";
}

std::string_view to_string(OnMiss on_miss) {
  return on_miss == OnMiss::error ? "error" : "min_cost";
}

std::string_view to_string(Equivalent equivalent) {
  return equivalent == Equivalent::timed ? "timed" : "off";
}

std::string_view to_string(ProvenanceCheck check) {
  switch (check) {
    case ProvenanceCheck::warn:
      return "warn";
    case ProvenanceCheck::strict:
      return "strict";
    case ProvenanceCheck::ignore:
      return "ignore";
  }
  return "unknown";
}

Mode Policy::effective_mode() const {
  if (mode) return *mode;
  if (!record_path.empty()) return Mode::record;
  if (deterministic) return Mode::pinned;
  return Mode::automatic;
}

bool Policy::intercepts() const {
  return effective_mode() != Mode::automatic || enumerate || verify_every > 0;
}

bool Policy::in_scope(const KernelId& kernel) const {
  return modules.empty() || any_module_covers(modules, kernel.module);
}

bool Policy::is_config_invariant(const KernelId& kernel) const {
  const std::string qualified = kernel.qualified();
  return std::any_of(config_invariant.begin(), config_invariant.end(),
                     [&](const std::string& n) { return n == qualified || n == kernel.name; });
}

void validate_block_sizes(std::span<const BlockSize> block_sizes) {
  std::set<std::string_view> names;
  for (const BlockSize& b : block_sizes) {
    if (!is_block_param(b.name)) {
      throw Error("policy: block size '" + b.name +
                  "' must be a BLOCK* parameter name (e.g. BLOCK_M=64)");
    }
    if (b.value <= 0) {
      throw Error("policy: block size " + b.name + "=" + std::to_string(b.value) +
                  " must be a positive integer");
    }
    if (!names.insert(b.name).second) {
      throw Error("policy: block size '" + b.name + "' is given twice");
    }
  }
}

void Policy::validate() const {
  const Mode effective = effective_mode();
  if ((effective == Mode::record || effective == Mode::audit || effective == Mode::consensus) &&
      record_path.empty()) {
    throw Error("policy: mode '" + std::string(to_string(effective_mode())) +
                "' needs a record path (TUNELOCK_RECORD=<file prefix> or "
                "record_path=<file prefix>)");
  }
  if (record_path.ends_with('/')) {
    // A prefix naming a folder would write hidden files such as `dir/.rank0.json`.
    throw Error("policy: record path '" + record_path +
                "' ends in '/'; it is a file prefix, e.g. '" + record_path +
                "rec' writes rec.rank<N>.json there");
  }
  if (effective == Mode::consensus && chaos) {
    // Chaos picks a different config per rank on purpose; consensus exists
    // to make every rank launch one. Together they would prove nothing.
    throw Error(
        "policy: chaos cannot be combined with mode 'consensus' (chaos makes ranks choose "
        "differently on purpose, consensus makes them agree); use chaos with pinned");
  }
  validate_block_sizes(block_sizes);
  auto no_empty = [](const std::vector<std::string>& list, std::string_view field) {
    for (const std::string& item : list) {
      if (item.empty()) throw Error("policy: " + std::string(field) + " has an empty entry");
    }
  };
  no_empty(modules, "modules");
  no_empty(config_invariant, "config_invariant");
  no_empty(table_path, "table_path");
  if (verify_every < 0) {
    throw Error("policy: verify_every must be 0 (off) or a positive number of iterations, not " +
                std::to_string(verify_every));
  }
  if (!(verify_timeout_s > 0)) {
    throw Error("policy: verify_timeout_s must be a positive number of seconds");
  }
}

}  // namespace tunelock
