#include "tunelock/tables/provenance_json.hpp"

#include "io/json_checks.hpp"

namespace tunelock {

using namespace json_checks;
using nlohmann::json;

json device_to_json(const Provenance& d) {
  json out = {{"device_name", d.device_name},       {"sm_count", d.sm_count},
              {"driver_version", d.driver_version}, {"cuda_version", d.cuda_version},
              {"recorded_at", d.recorded_at},       {"tool_version", d.tool_version}};
  // Absent when unknown: older readers and Megatron's tools see no change.
  if (!d.triton.empty()) out["triton"] = d.triton;
  if (!d.packages.empty()) out["packages"] = d.packages;
  return out;
}

Provenance device_from_json(const json& value, const std::string& where) {
  require_object(value, where);
  Provenance d;
  auto text = [&](std::string_view field, std::string& into) {
    if (const json* member = find_member(value, field))
      into = require_string(*member, member_path(where, field));
  };
  text("device_name", d.device_name);
  text("driver_version", d.driver_version);
  text("cuda_version", d.cuda_version);
  text("recorded_at", d.recorded_at);
  text("tool_version", d.tool_version);
  text("triton", d.triton);
  if (const json* sm = find_member(value, "sm_count"))
    d.sm_count = require_int(*sm, member_path(where, "sm_count"), 0);
  if (const json* packages = find_member(value, "packages")) {
    const std::string at = member_path(where, "packages");
    for (const auto& [name, version] : require_object(*packages, at).items())
      d.packages[name] = require_string(version, member_path(at, name));
  }
  return d;
}

}  // namespace tunelock
