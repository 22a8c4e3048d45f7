// What each mode does, as one table: which modes time, read a table, log
// choices, verify and write files. `tunelock help modes`, the documents and
// the ignored-settings warning all read it, so they cannot drift apart.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunelock/decision/policy.hpp"

namespace tunelock {

struct ModeBehaviour {
  Mode mode;
  std::string_view times;         // does a first call time candidates?
  std::string_view reads_table;   // is a table consulted?
  std::string_view logs_choices;  // does the choice log get entries?
  std::string_view verifies;      // what a check compares
  std::string_view writes;        // the files the mode writes
};

// The five modes, in documentation order (auto, pinned, record, audit, consensus).
std::span<const ModeBehaviour> mode_behaviours();

// The table as Markdown, one row per mode: what the README, docs/policy.md
// and `tunelock help modes --markdown` print.
std::string modes_markdown();

// A setting that the policy's effective mode does not use.
struct IgnoredSetting {
  std::string setting;  // the policy key and its variable: "table_path (TUNELOCK_TABLE_PATH)"
  std::string why;      // "auto reads no table"
};

// The settings that are set (differ from their defaults) but that the
// effective mode ignores. `choice_log_set`: TUNELOCK_CHOICE_LOG names a
// prefix (it is not a policy field). Empty when every setting is used.
std::vector<IgnoredSetting> ignored_settings(const Policy& policy, bool choice_log_set);

// One line naming every ignored setting and why, or "" when there is none.
std::string ignored_settings_line(const Policy& policy, bool choice_log_set);

}  // namespace tunelock
