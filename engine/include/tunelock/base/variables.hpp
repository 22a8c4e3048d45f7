// Every TUNELOCK_* variable, named once with what it does and its default:
// the unknown-variable check accepts exactly these names, `tunelock help
// environment` prints them, and docs/policy.md is checked against them, so
// the list a user reads is the list a run accepts.
#pragma once

#include <span>
#include <string_view>

namespace tunelock {

struct VariableInfo {
  std::string_view name;           // "TUNELOCK_MODE"; "TUNELOCK_BLOCK_<NAME>" for the pattern
  std::string_view topic;          // "policy", "ranks", "verify", "files", "watch", "build"
  std::string_view meaning;        // one sentence
  std::string_view default_value;  // as a user reads it
};

// In the order `tunelock help environment` prints them, by topic.
std::span<const VariableInfo> documented_variables();

// The entry for `name` (a TUNELOCK_BLOCK_* name finds the pattern), or null.
const VariableInfo* find_variable(std::string_view name);

}  // namespace tunelock
