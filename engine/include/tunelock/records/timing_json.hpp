// One candidate's timing in JSON, as a record's sidecar, an audit file and
// the C ABI (tunelock_record, tunelock_audit_key) spell it: "median_ms"
// (milliseconds, 0 or more, or null: it failed to run), "nondeterministic"
// (the audit flagged it) and "class" (its bit class). One reader for all.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tunelock/records/record_file.hpp"

namespace tunelock {

// The largest bit class number a file may hold.
inline constexpr std::int64_t kMaxBitClass = std::int64_t{1} << 30;

// A median in ms: a finite number, 0 or more, or null (nullopt).
std::optional<double> median_ms_from_json(const nlohmann::json& value, const std::string& where);

// Reads "median_ms", "nondeterministic" and "class" of the object `item`
// (each optional) into `timing`; errors name `where` and the field.
void timing_fields_from_json(const nlohmann::json& item, const std::string& where,
                             CandidateTiming& timing);

}  // namespace tunelock
