#include "tunelock/decision/modes.hpp"

#include <array>

namespace tunelock {

std::span<const ModeBehaviour> mode_behaviours() {
  static constexpr std::array<ModeBehaviour, 5> kModes{{
      {Mode::automatic, "yes: the autotuner times, as without tunelock", "no",
       "only with verify_every or enumerate", "with verify_every", "nothing"},
      {Mode::pinned, "no (equivalent=timed: an entry's equivalents)", "yes", "yes",
       "with verify_every", "nothing"},
      {Mode::record, "yes: every candidate, with the bits audit", "no", "yes", "with verify_every",
       "records: `<record_path>.rank<N>.json`"},
      {Mode::audit, "yes: after choosing, once per key", "yes", "yes", "with verify_every",
       "audit files: `<record_path>.rank<N>.audit.json`"},
      {Mode::consensus, "yes: once per key, kept for the next check", "yes", "yes",
       "with verify_every; each check picks winners",
       "records, and the table at exit: `<record_path>.tables/<arch>.json`"},
  }};
  return kModes;
}

std::string modes_markdown() {
  std::string out =
      "| mode | times? | reads a table? | logs choices? | verifies? | writes |\n"
      "|---|---|---|---|---|---|\n";
  for (const ModeBehaviour& m : mode_behaviours()) {
    out += "| `" + std::string(to_string(m.mode)) + "` | " + std::string(m.times) + " | " +
           std::string(m.reads_table) + " | " + std::string(m.logs_choices) + " | " +
           std::string(m.verifies) + " | " + std::string(m.writes) + " |\n";
  }
  return out;
}

std::vector<IgnoredSetting> ignored_settings(const Policy& policy, bool choice_log_set) {
  const Mode mode = policy.effective_mode();
  const std::string name(to_string(mode));
  std::vector<IgnoredSetting> out;
  auto add = [&](std::string setting, std::string why) {
    out.push_back({std::move(setting), std::move(why)});
  };
  if (!policy.pins()) {  // auto and record: a clock decides, no table is read
    const std::string no_table = name + " reads no table";
    if (!policy.table_path.empty()) add("table_path (TUNELOCK_TABLE_PATH)", no_table);
    if (policy.on_miss != OnMiss::min_cost) add("on_miss (TUNELOCK_ON_MISS)", no_table);
    if (!policy.block_sizes.empty()) add("block_sizes (TUNELOCK_BLOCK_*)", name + " pins nothing");
    if (policy.equivalent != Equivalent::off)
      add("equivalent (TUNELOCK_EQUIVALENT)", name + " pins nothing");
    if (policy.provenance != ProvenanceCheck::warn)
      add("provenance (TUNELOCK_PROVENANCE)", no_table);
    if (policy.identity != ProvenanceCheck::warn) add("identity (TUNELOCK_IDENTITY)", no_table);
    if (policy.chaos) add("chaos (TUNELOCK_CHAOS)", name + " pins nothing to scatter");
  }
  if (mode == Mode::automatic && policy.batch_invariant)
    add("batch_invariant (TUNELOCK_BATCH_INVARIANT)",
        "auto lets the clock pick per batch size; record audits rows, pinned keeps a class");
  if (!policy.intercepts()) {  // auto without a check: tunelock stays out of the call
    const std::string nothing_logged = name + " logs no choice without verify_every or enumerate";
    if (choice_log_set) add("TUNELOCK_CHOICE_LOG", nothing_logged);
    if (policy.verify_strict) add("verify_strict (TUNELOCK_VERIFY_STRICT)", nothing_logged);
  }
  const bool writes_records =
      mode == Mode::record || mode == Mode::audit || mode == Mode::consensus;
  if (!writes_records && !policy.record_path.empty())
    add("record_path (TUNELOCK_RECORD)", name + " writes no records");
  return out;
}

std::string ignored_settings_line(const Policy& policy, bool choice_log_set) {
  const std::vector<IgnoredSetting> ignored = ignored_settings(policy, choice_log_set);
  if (ignored.empty()) return {};
  std::string out = "mode '" + std::string(to_string(policy.effective_mode())) +
                    (policy.mode ? "'" : "' (no mode set)") + " ignores ";
  for (std::size_t i = 0; i < ignored.size(); ++i)
    out += (i ? "; " : "") + ignored[i].setting + ": " + ignored[i].why;
  out +=
      ". Set the mode that uses them (TUNELOCK_MODE=pinned reads a table; "
      "`tunelock help modes`)";
  return out;
}

}  // namespace tunelock
