// A table entry in JSON: its config in Megatron's layout, and tunelock's
// "equivalent" and "ties" lists (absent when empty, so a file Megatron
// wrote reads back unchanged).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tunelock/tables/table.hpp"

namespace tunelock {

// `where` prefixes error messages, e.g. "t.json: kernels.k[\"*\"]".
TableEntry table_entry_from_json(const nlohmann::json& value, const std::string& where);
nlohmann::json table_entry_to_json(const TableEntry& entry);

}  // namespace tunelock
