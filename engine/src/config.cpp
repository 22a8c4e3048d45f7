#include "tunelock/config.hpp"

#include <algorithm>
#include <limits>

#include "tunelock/error.hpp"

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
  return Config{std::move(params), num_warps, num_stages, num_ctas, maxnreg, std::nullopt};
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
  if (config.ir_override) out += ";ir_override=" + *config.ir_override;
  return out;
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
