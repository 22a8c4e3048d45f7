// Typed reads from parsed JSON that fail with the JSON path of the bad value
// ("file.json: kernels.k.key.num_warps: expected an integer ..."). Private
// to the engine's readers.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

namespace tunelock::json_checks {

// `where` + "." + `field`, or `where` + "[i]".
std::string member_path(const std::string& where, std::string_view field);
std::string index_path(const std::string& where, std::size_t index);

// A short, quoted rendering of a bad value for an error message.
std::string describe(const nlohmann::json& value);

const nlohmann::json& require_object(const nlohmann::json& value, const std::string& where);
const nlohmann::json& require_array(const nlohmann::json& value, const std::string& where);
std::string require_string(const nlohmann::json& value, const std::string& where);
bool require_bool(const nlohmann::json& value, const std::string& where);
std::int64_t require_int(const nlohmann::json& value, const std::string& where,
                         std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                         std::int64_t max = std::numeric_limits<std::int64_t>::max());

// Throws Error("<where>: invalid UTF-8 ...") unless `text` is UTF-8: strings
// read from binary files are checked so JSON output can always print them.
void require_utf8(std::string_view text, const std::string& where);

// The member `field` of `object`, or null when absent.
const nlohmann::json* find_member(const nlohmann::json& object, std::string_view field);

}  // namespace tunelock::json_checks
