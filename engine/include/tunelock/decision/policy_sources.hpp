// Building a Policy from the places a user states one: environment
// variables, key/value pairs (a config file, a framework's arguments) and,
// through key/value pairs, command line flags. Every source parses values the
// same way and names the variable or key in its errors.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunelock/base/environment.hpp"
#include "tunelock/base/notices.hpp"
#include "tunelock/decision/policy.hpp"

namespace tunelock {

// Policy from TUNELOCK_* variables, with Megatron's MCORE_AUTOTUNE_* and
// TRITON_AUTOTUNE_BLOCK_* as aliases (the TUNELOCK_ name wins when both are
// set). An empty variable counts as unset. An unknown TUNELOCK_* or
// MCORE_AUTOTUNE_* variable is an error, as is any invalid value. The result
// is validated.
Policy policy_from_environment(const Environment& env);

// Applies `key=value` pairs over `base`. Keys are the Policy field names
// (`mode`, `modules`, `config_invariant`, `table_path`, `record_path`,
// `on_miss`, `block_sizes` as `BLOCK_M=64,BLOCK_N=32`, `verify_every`,
// `verify_strict`, `enumerate`, `chaos`, `deterministic`,
// `verify_timeout_s`, `nondeterministic` as `KERNEL@SIGNATURE|...`,
// `check_bits`, `equivalent` as `off` or `timed`). An unknown key is an error. The result is
// validated.
Policy policy_from_key_values(const std::vector<std::pair<std::string, std::string>>& pairs,
                              Policy base = {});

// `min_cost` or `error`; an Error starting with `origin` names the allowed values.
OnMiss parse_on_miss(std::string_view raw, const std::string& origin);

// Parses `BLOCK_M=64,BLOCK_N=32`; errors start with `origin` (a flag or
// variable name). Names are checked by Policy::validate().
std::vector<BlockSize> parse_block_sizes(std::string_view text, const std::string& origin);

// The resolved policy as JSON: every field under its key name (mode as the
// effective mode, block_sizes as {name: value}) plus "intercepts". What
// `tunelock policy --json` prints and the Python package reads.
nlohmann::json policy_to_json(const Policy& policy);

// The keys policy_from_key_values accepts, in documentation order.
std::vector<std::string_view> policy_keys();

// Points out, once per policy, that MAMBA_DETERMINISTIC is set but does not
// pin anything: only this policy does. Returns true when it spoke.
bool warn_if_mamba_env_ignored(const Environment& env, const Policy& policy,
                               Notices& notices = process_notices());

// Warns once per policy, in one line, when a setting is set under a mode
// that does not use it (a table path under `auto`, a choice log that auto
// never fills, a record path under `pinned`): the forgotten TUNELOCK_MODE.
// Returns true when it spoke.
bool warn_if_settings_ignored(const Environment& env, const Policy& policy,
                              Notices& notices = process_notices());

}  // namespace tunelock
