// The machine and software a table, record or audit was timed with, in
// JSON: one reader and one writer of the device fields, shared by the
// record's timing sidecar, the audit file, a table's "provenance" object
// and the C ABI's tunelock_set_device.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tunelock/tables/table.hpp"

namespace tunelock {

// {"device_name", "sm_count", "driver_version", "cuda_version",
// "recorded_at", "tool_version"}, then "triton" and "packages" when known.
nlohmann::json device_to_json(const Provenance& device);

// The fields above that are present (older files leave some out), each
// type-checked; errors name `where` and the field ("x.json: device.sm_count").
// Other fields are left to the caller.
Provenance device_from_json(const nlohmann::json& value, const std::string& where);

}  // namespace tunelock
