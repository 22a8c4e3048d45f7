#include "tunelock/model/config.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

#include "tunelock/base/error.hpp"

namespace tunelock {
namespace {

// Multiplication that clamps at the int64 range instead of overflowing, so a
// huge config is "very expensive", never "cheap" through wrap-around.
std::int64_t saturating_mul(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (!__builtin_mul_overflow(a, b, &out)) return out;
  const bool negative = (a < 0) != (b < 0);
  return negative ? std::numeric_limits<std::int64_t>::min()
                  : std::numeric_limits<std::int64_t>::max();
}

}  // namespace

std::optional<std::int64_t> Config::param(std::string_view name) const {
  auto it = std::lower_bound(params.begin(), params.end(), name,
                             [](const Param& p, std::string_view n) { return p.name < n; });
  if (it == params.end() || it->name != name) return std::nullopt;
  return it->value;
}

void sort_params(std::vector<Param>& params) {
  std::sort(params.begin(), params.end(),
            [](const Param& a, const Param& b) { return a.name < b.name; });
  auto dup = std::adjacent_find(params.begin(), params.end(),
                                [](const Param& a, const Param& b) { return a.name == b.name; });
  if (dup != params.end()) throw Error("config parameter '" + dup->name + "' is given twice");
}

Config make_config(std::vector<Param> params, int num_warps, int num_stages, int num_ctas,
                   std::optional<int> maxnreg) {
  sort_params(params);
  return Config{std::move(params), num_warps,    num_stages,  num_ctas,
                maxnreg,           std::nullopt, std::nullopt};
}

std::string signature(const Config& config) {
  std::string out;
  out.reserve(16 * config.params.size() + 24);
  for (std::size_t i = 0; i < config.params.size(); ++i) {
    if (i) out += ',';
    out += config.params[i].name;
    out += '=';
    out += std::to_string(config.params[i].value);
  }
  out += ";warps=" + std::to_string(config.num_warps);
  out += ";stages=" + std::to_string(config.num_stages);
  if (config.num_ctas != 1) out += ";ctas=" + std::to_string(config.num_ctas);
  if (config.maxnreg) out += ";maxnreg=" + std::to_string(*config.maxnreg);
  if (config.algorithm) out += ";algorithm=" + *config.algorithm;
  if (config.ir_override) out += ";ir_override=" + *config.ir_override;
  return out;
}

bool is_algorithm_name(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  return std::none_of(name.begin(), name.end(), [](char c) {
    return static_cast<unsigned char>(c) <= ' ' || c == ',' || c == ';' || c == '=' || c == 0x7f;
  });
}

namespace {

std::int64_t signature_number(std::string_view text, std::string_view field,
                              const std::string& where) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty())
    throw Error(where + ": '" + std::string(field) + "' is not an integer in a config signature");
  return value;
}

int signature_int(std::string_view text, std::string_view field, const std::string& where) {
  const std::int64_t value = signature_number(text, field, where);
  if (value < 0 || value > std::numeric_limits<int>::max())
    throw Error(where + ": " + std::string(field) + " out of range in a config signature");
  return static_cast<int>(value);
}

}  // namespace

Config config_from_signature(std::string_view text, const std::string& where) {
  // ir_override comes last and may hold any text: split it off first.
  Config config;
  constexpr std::string_view kIr = ";ir_override=";
  if (const auto ir = text.find(kIr); ir != std::string_view::npos) {
    config.ir_override = std::string(text.substr(ir + kIr.size()));
    text = text.substr(0, ir);
  }
  const auto first = text.find(';');
  if (first == std::string_view::npos)
    throw Error(where + ": '" + std::string(text) + "' is not a config signature (no ;warps=)");
  std::string_view params = text.substr(0, first);
  while (!params.empty()) {
    const auto comma = std::min(params.find(','), params.size());
    const std::string_view item = params.substr(0, comma);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0)
      throw Error(where + ": parameter '" + std::string(item) + "' is not NAME=INT");
    config.params.push_back({std::string(item.substr(0, eq)),
                             signature_number(item.substr(eq + 1), item.substr(0, eq), where)});
    params = comma == params.size() ? std::string_view() : params.substr(comma + 1);
  }
  sort_params(config.params);
  bool warps = false, stages = false;
  std::string_view options = text.substr(first + 1);
  while (!options.empty()) {
    const auto semi = std::min(options.find(';'), options.size());
    const std::string_view item = options.substr(0, semi);
    const auto eq = item.find('=');
    const std::string_view name = item.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? "" : item.substr(eq + 1);
    if (name == "warps") {
      config.num_warps = signature_int(value, name, where), warps = true;
    } else if (name == "stages") {
      config.num_stages = signature_int(value, name, where), stages = true;
    } else if (name == "ctas") {
      config.num_ctas = signature_int(value, name, where);
    } else if (name == "maxnreg") {
      config.maxnreg = signature_int(value, name, where);
    } else if (name == "algorithm" && is_algorithm_name(value)) {
      config.algorithm = std::string(value);
    } else {
      throw Error(where + ": unknown option '" + std::string(item) + "' in a config signature");
    }
    options = semi == options.size() ? std::string_view() : options.substr(semi + 1);
  }
  if (!warps || !stages)
    throw Error(where + ": '" + std::string(text) + "' lacks warps= or stages= (not a signature)");
  return config;
}

Cost estimate_cost(const Config& config) {
  std::int64_t block = 1;
  for (const Param& p : config.params) {
    if (is_block_param(p.name)) block = saturating_mul(block, p.value);
  }
  block = saturating_mul(block, std::max(config.num_stages, 1));
  return Cost{block, std::max(config.num_warps, 1)};
}

}  // namespace tunelock
