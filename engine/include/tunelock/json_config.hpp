// Configs in Megatron's JSON layout: {"kwargs": {...}, "num_warps": N,
// "num_stages": N} plus "num_ctas" and "maxnreg" when they matter. Readers
// check every type and range and name the JSON path of what is wrong.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tunelock/config.hpp"
#include "tunelock/table.hpp"

namespace tunelock {

// `where` prefixes error messages, e.g. "cands.json: configs[2]".
Config config_from_json(const nlohmann::json& value, const std::string& where);

// A table entry also remembers whether it named num_ctas.
TableEntry table_entry_from_json(const nlohmann::json& value, const std::string& where);

nlohmann::json config_to_json(const Config& config);
nlohmann::json table_entry_to_json(const TableEntry& entry);

// Parses JSON text, turning a syntax error into Error("<origin>: ...").
nlohmann::json parse_json(std::string_view text, const std::string& origin);

}  // namespace tunelock
