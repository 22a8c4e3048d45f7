#include "tunelock/json_config.hpp"

#include "json_checks.hpp"
#include "tunelock/error.hpp"

namespace tunelock {
namespace {

using namespace json_checks;
using nlohmann::json;

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();

int launch_option(const json& object, std::string_view field, const std::string& where,
                  std::int64_t min, int fallback) {
  const json* value = find_member(object, field);
  if (!value) return fallback;
  return static_cast<int>(require_int(*value, member_path(where, field), min, kIntMax));
}

}  // namespace

TableEntry table_entry_from_json(const json& value, const std::string& where) {
  require_object(value, where);
  for (const auto& [field, member] : value.items()) {
    if (field != "kwargs" && field != "num_warps" && field != "num_stages" && field != "num_ctas" &&
        field != "maxnreg") {
      throw Error(member_path(where, field) +
                  ": unknown config field; known: kwargs, num_warps, num_stages, num_ctas, "
                  "maxnreg");
    }
  }
  TableEntry entry;
  Config& config = entry.config;
  if (const json* kwargs = find_member(value, "kwargs")) {
    const std::string kwargs_where = member_path(where, "kwargs");
    require_object(*kwargs, kwargs_where);
    for (const auto& [name, number] : kwargs->items()) {
      if (name.empty()) throw Error(kwargs_where + ": empty parameter name");
      // Block sizes are extents; anything else (flags, counts) may be any integer.
      const std::int64_t min = is_block_param(name) ? 1 : std::numeric_limits<std::int64_t>::min();
      config.params.push_back(
          Param{name, require_int(number, member_path(kwargs_where, name), min)});
    }
    sort_params(config.params);  // JSON objects cannot repeat keys after parsing
  }
  config.num_warps = launch_option(value, "num_warps", where, 0, config.num_warps);
  config.num_stages = launch_option(value, "num_stages", where, 0, config.num_stages);
  config.num_ctas = launch_option(value, "num_ctas", where, 1, config.num_ctas);
  entry.names_ctas = find_member(value, "num_ctas") != nullptr;
  if (const json* maxnreg = find_member(value, "maxnreg"); maxnreg && !maxnreg->is_null()) {
    config.maxnreg =
        static_cast<int>(require_int(*maxnreg, member_path(where, "maxnreg"), 1, kIntMax));
  }
  return entry;
}

Config config_from_json(const json& value, const std::string& where) {
  return table_entry_from_json(value, where).config;
}

json config_to_json(const Config& config) {
  json kwargs = json::object();
  for (const Param& p : config.params) kwargs[p.name] = p.value;
  json out = {{"kwargs", std::move(kwargs)},
              {"num_warps", config.num_warps},
              {"num_stages", config.num_stages}};
  if (config.num_ctas != 1) out["num_ctas"] = config.num_ctas;
  if (config.maxnreg) out["maxnreg"] = *config.maxnreg;
  return out;
}

json table_entry_to_json(const TableEntry& entry) {
  json out = config_to_json(entry.config);
  if (entry.names_ctas) out["num_ctas"] = entry.config.num_ctas;
  return out;
}

json parse_json(std::string_view text, const std::string& origin) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw Error(origin + ": empty file, expected JSON");
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(origin + ": not valid JSON at byte " + std::to_string(e.byte));
  }
}

}  // namespace tunelock
