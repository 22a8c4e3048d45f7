#include "tunelock/records/timing_json.hpp"

#include <cmath>

#include "io/json_checks.hpp"
#include "tunelock/base/error.hpp"

namespace tunelock {

using namespace json_checks;
using nlohmann::json;

std::optional<double> median_ms_from_json(const json& value, const std::string& where) {
  if (value.is_null()) return std::nullopt;
  if (!value.is_number() || !(value.get<double>() >= 0) || !std::isfinite(value.get<double>()))
    throw Error(where + ": expected a non-negative number or null, got " + describe(value));
  return value.get<double>();
}

void timing_fields_from_json(const json& item, const std::string& where, CandidateTiming& timing) {
  if (const json* ms = find_member(item, "median_ms"))
    timing.median_ms = median_ms_from_json(*ms, member_path(where, "median_ms"));
  if (const json* flag = find_member(item, "nondeterministic"))
    timing.nondeterministic = require_bool(*flag, member_path(where, "nondeterministic"));
  if (const json* number = find_member(item, "class"))
    timing.bit_class =
        static_cast<int>(require_int(*number, member_path(where, "class"), 0, kMaxBitClass));
}

}  // namespace tunelock
