// One candidate's timing in JSON, as a record's sidecar and an audit file
// spell it: "median_ms"
// (milliseconds, 0 or more, or null: it failed to run), "nondeterministic"
// (the audit flagged it) and "class" (its bit class). One reader for all.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tunelock/records/record_file.hpp"

namespace tunelock {

// The largest bit class number a file may hold.
inline constexpr std::int64_t kMaxBitClass = std::int64_t{1} << 30;
// The largest batch size an invariance audit may name.
inline constexpr std::int64_t kMaxRows = std::int64_t{1} << 40;

// A median in ms: a finite number, 0 or more, or null (nullopt).
std::optional<double> median_ms_from_json(const nlohmann::json& value, const std::string& where);

// Reads "median_ms", "nondeterministic", "class" and "rows" of the object
// `item` (each optional) into `timing`; errors name `where` and the field.
void timing_fields_from_json(const nlohmann::json& item, const std::string& where,
                             CandidateTiming& timing);

// A candidate's invariance audit: {"dim": "M", "sizes": [1, 2, ..., rows],
// "class": n} or {..., "variant_at": size}. The reader refuses an audit
// that is not one of the two, sizes that are not sorted positive integers,
// and a `variant_at` that is not one of its sizes, naming `where`.
nlohmann::json row_audit_to_json(const RowAudit& audit);
RowAudit row_audit_from_json(const nlohmann::json& value, const std::string& where);
// The same rules for an audit read from another encoding (the binary sidecar).
void check_row_audit(const RowAudit& audit, const std::string& where);

}  // namespace tunelock
