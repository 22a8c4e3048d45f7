#include "tunelock/model/config_json.hpp"

#include <algorithm>
#include <limits>

#include "io/json_checks.hpp"
#include "tunelock/base/error.hpp"

namespace tunelock {
namespace {

using namespace json_checks;
using nlohmann::json;

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();

// Triton's defaults, used for candidates only: a recorded entry must say.
constexpr int kTritonWarps = 4;
constexpr int kTritonStages = 3;

// The integer, or require_int's error naming its path: a table holds
// millions of these, so the path is only spelled out for a bad one.
std::int64_t int_at(const json& value, const std::string& where, std::string_view field,
                    std::int64_t min, std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
  if (value.is_number_integer() && !value.is_number_unsigned()) {
    const std::int64_t number = value.get<std::int64_t>();
    if (number >= min && number <= max) return number;
  }
  return require_int(value, member_path(where, field), min, max);
}

int launch_option(const json& object, std::string_view field, const std::string& where,
                  std::int64_t min, std::optional<int> fallback) {
  const json* value = find_member(object, field);
  if (!value) {
    if (fallback) return *fallback;
    throw Error(member_path(where, field) +
                ": missing; a recorded config names num_warps and num_stages");
  }
  return static_cast<int>(int_at(*value, where, field, min, kIntMax));
}

void reject_unknown_fields(const json& value, const std::string& where,
                           std::initializer_list<std::string_view> also_allowed) {
  for (const auto& [field, member] : value.get_ref<const json::object_t&>()) {
    if (field != "kwargs" && field != "num_warps" && field != "num_stages" && field != "num_ctas" &&
        field != "maxnreg" && field != "ir_override" && field != "algorithm" &&
        std::find(also_allowed.begin(), also_allowed.end(), field) == also_allowed.end()) {
      throw Error(member_path(where, field) +
                  ": unknown config field; known: kwargs, num_warps, num_stages, num_ctas, "
                  "maxnreg, ir_override, algorithm");
    }
  }
}

std::vector<Param> kwargs_from(const json& value, const std::string& where) {
  std::vector<Param> params;
  const json* kwargs = find_member(value, "kwargs");
  if (!kwargs) return params;
  if (!kwargs->is_object()) require_object(*kwargs, member_path(where, "kwargs"));
  params.reserve(kwargs->size());
  for (const auto& [name, number] : kwargs->get_ref<const json::object_t&>()) {
    if (name.empty()) throw Error(member_path(where, "kwargs") + ": empty parameter name");
    // Block sizes are extents; anything else (flags, counts) may be any integer.
    const std::int64_t min = is_block_param(name) ? 1 : std::numeric_limits<std::int64_t>::min();
    const bool fine = number.is_number_integer() && !number.is_number_unsigned() &&
                      number.get<std::int64_t>() >= min;
    params.push_back(Param{
        name, fine ? number.get<std::int64_t>()
                   : require_int(number, member_path(member_path(where, "kwargs"), name), min)});
  }
  sort_params(params);  // JSON objects cannot repeat keys after parsing
  return params;
}

Config read_config(const json& value, const std::string& where, bool triton_defaults,
                   std::initializer_list<std::string_view> also_allowed = {}) {
  require_object(value, where);
  reject_unknown_fields(value, where, also_allowed);
  Config config;
  config.params = kwargs_from(value, where);
  config.num_warps = launch_option(value, "num_warps", where, 0,
                                   triton_defaults ? std::optional(kTritonWarps) : std::nullopt);
  config.num_stages = launch_option(value, "num_stages", where, 0,
                                    triton_defaults ? std::optional(kTritonStages) : std::nullopt);
  config.num_ctas = launch_option(value, "num_ctas", where, 1, 1);
  if (const json* maxnreg = find_member(value, "maxnreg"); maxnreg && !maxnreg->is_null()) {
    config.maxnreg = static_cast<int>(int_at(*maxnreg, where, "maxnreg", 1, kIntMax));
  }
  if (const json* ir = find_member(value, "ir_override"); ir && !ir->is_null()) {
    const std::string at = member_path(where, "ir_override");
    if (!ir->is_string()) throw Error(at + ": expected a string or null, got " + describe(*ir));
    config.ir_override = ir->get<std::string>();
  }
  if (const json* algorithm = find_member(value, "algorithm"); algorithm && !algorithm->is_null()) {
    const std::string at = member_path(where, "algorithm");
    if (!algorithm->is_string())
      throw Error(at + ": expected a string, got " + describe(*algorithm));
    if (!is_algorithm_name(algorithm->get_ref<const std::string&>()))
      throw Error(at + ": '" + algorithm->get<std::string>() +
                  "' is not an algorithm name (1-128 characters, no space, ',', ';' or '=')");
    config.algorithm = algorithm->get<std::string>();
  }
  return config;
}

// Python's json.dumps layout over nlohmann's tokens: nlohmann writes every
// scalar and key (escaping as Python does with ensure_ascii); only the
// separators differ. Objects iterate sorted, as sort_keys=True does.
std::string python_layout(const json& value) {
  if (value.is_object()) {
    std::string out = "{";
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (it != value.begin()) out += ", ";
      out += json(it.key()).dump(-1, ' ', true) + ": " + python_layout(it.value());
    }
    return out + "}";
  }
  if (value.is_array()) {
    std::string out = "[";
    for (std::size_t i = 0; i < value.size(); ++i) out += (i ? ", " : "") + python_layout(value[i]);
    return out + "]";
  }
  return value.dump(-1, ' ', true);
}

}  // namespace

Config config_from_json(const json& value, const std::string& where,
                        std::initializer_list<std::string_view> also_allowed) {
  return read_config(value, where, false, also_allowed);
}

Config candidate_from_json(const json& value, const std::string& where) {
  return read_config(value, where, true);
}

json config_to_json(const Config& config) {
  json kwargs = json::object();
  for (const Param& p : config.params) kwargs[p.name] = p.value;
  json out = {{"kwargs", std::move(kwargs)},
              {"num_warps", config.num_warps},
              {"num_stages", config.num_stages},
              {"num_ctas", config.num_ctas},
              {"maxnreg", config.maxnreg ? json(*config.maxnreg) : json(nullptr)},
              {"ir_override", config.ir_override ? json(*config.ir_override) : json(nullptr)}};
  // Megatron's layout has no algorithm: written only when set, so a Triton
  // config's text stays exactly Megatron's.
  if (config.algorithm) out["algorithm"] = *config.algorithm;
  return out;
}

std::string canonical_config_text(const Config& config) {
  return python_layout(config_to_json(config));
}

}  // namespace tunelock
