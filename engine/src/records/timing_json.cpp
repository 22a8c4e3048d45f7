#include "tunelock/records/timing_json.hpp"

#include <algorithm>
#include <cmath>

#include "io/json_checks.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/model/batch_rows.hpp"

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
  if (const json* rows = find_member(item, "rows"))
    timing.rows = row_audit_from_json(*rows, member_path(where, "rows"));
}

json row_audit_to_json(const RowAudit& audit) {
  json out = {{"dim", audit.dim}, {"sizes", audit.sizes}};
  if (audit.row_class) out["class"] = *audit.row_class;
  if (audit.variant_at) out["variant_at"] = *audit.variant_at;
  return out;
}

void check_row_audit(const RowAudit& audit, const std::string& where) {
  check_batch_dim_name(audit.dim, where + ".dim");
  if (audit.sizes.empty()) throw Error(where + ".sizes: empty; expected the sizes compared");
  for (std::size_t i = 0; i < audit.sizes.size(); ++i) {
    if (audit.sizes[i] < 1)
      throw Error(where + ".sizes[" + std::to_string(i) + "]: " + std::to_string(audit.sizes[i]) +
                  " is not a positive size");
    if (i && audit.sizes[i] <= audit.sizes[i - 1])
      throw Error(where + ".sizes: not sorted and unique at [" + std::to_string(i) + "]");
  }
  if (audit.row_class.has_value() == audit.variant_at.has_value())
    throw Error(where +
                ": expected exactly one of \"class\" (its rows held at every size) and "
                "\"variant_at\" (the first size whose rows differed)");
  if (audit.row_class && (*audit.row_class < 0 || *audit.row_class > kMaxBitClass))
    throw Error(where + ".class: " + std::to_string(*audit.row_class) + " is out of range");
  if (audit.variant_at &&
      std::find(audit.sizes.begin(), audit.sizes.end(), *audit.variant_at) == audit.sizes.end())
    throw Error(where + ".variant_at: " + std::to_string(*audit.variant_at) +
                " is not one of the sizes compared");
}

RowAudit row_audit_from_json(const json& value, const std::string& where) {
  if (!value.is_object())
    throw Error(where + ": expected {\"dim\", \"sizes\", \"class\" or \"variant_at\"}, got " +
                describe(value));
  RowAudit audit;
  for (const auto& [name, member] : value.items()) {
    const std::string at = member_path(where, name);
    if (name == "dim") {
      audit.dim = require_string(member, at);
    } else if (name == "sizes") {
      if (!member.is_array())
        throw Error(at + ": expected a list of sizes, got " + describe(member));
      for (std::size_t i = 0; i < member.size(); ++i)
        audit.sizes.push_back(
            require_int(member[i], at + "[" + std::to_string(i) + "]", 1, kMaxRows));
    } else if (name == "class") {
      audit.row_class = static_cast<int>(require_int(member, at, 0, kMaxBitClass));
    } else if (name == "variant_at") {
      audit.variant_at = require_int(member, at, 1, kMaxRows);
    } else {
      throw Error(at + ": unknown field; known: dim, sizes, class, variant_at");
    }
  }
  if (audit.dim.empty() && !value.contains("dim"))
    throw Error(member_path(where, "dim") + ": missing");
  check_row_audit(audit, where);
  return audit;
}

}  // namespace tunelock
