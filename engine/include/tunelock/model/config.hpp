// A kernel configuration as data: named integer parameters plus launch
// options. Its signature is the stable text every rank and platform agrees
// on; its cost is the static estimate the timing-free fallback ranks by.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunelock/base/same_bytes.hpp"

namespace tunelock {

struct Param {
  std::string name;
  std::int64_t value = 0;

  friend bool operator==(const Param&, const Param&) = default;
};

// REQUIRES: `params` sorted by name with unique names. Build configs with
// make_config() (or sort_params()) to keep that invariant; equality and
// signatures rely on it.
struct Config {
  std::vector<Param> params;
  int num_warps = 4;   // Triton's default
  int num_stages = 3;  // Triton's default
  int num_ctas = 1;
  std::optional<int> maxnreg;
  // Triton's user-supplied IR file for this config; carried as data only, so
  // a table entry that names one never matches a candidate without it.
  std::optional<std::string> ir_override;
  // The algorithm the parameters belong to, for a chooser whose candidates
  // are different kernels (Inductor: a template's name, or an ATen call);
  // unset for one kernel's configs. A name, never empty, without ',', ';',
  // '=' or spaces (is_algorithm_name), so signatures stay parseable.
  std::optional<std::string> algorithm;

  // The value of parameter `name`, if the config has it.
  std::optional<std::int64_t> param(std::string_view name) const;

  // Every field equal. Written out rather than defaulted to compare the
  // cheap fields first: a table hit compares its entry with candidates that
  // mostly differ in a number, and parameter names are the costly part.
  // A new field must be added here.
  friend bool operator==(const Config& a, const Config& b) {
    if (a.num_warps != b.num_warps || a.num_stages != b.num_stages || a.num_ctas != b.num_ctas ||
        a.maxnreg != b.maxnreg || a.params.size() != b.params.size())
      return false;
    for (std::size_t i = 0; i < a.params.size(); ++i)
      if (a.params[i].value != b.params[i].value) return false;
    for (std::size_t i = 0; i < a.params.size(); ++i)
      if (!detail::same_text(a.params[i].name, b.params[i].name)) return false;
    return a.ir_override == b.ir_override && a.algorithm == b.algorithm;
  }
};

// Sorts by name; throws Error naming the duplicate when a name repeats.
void sort_params(std::vector<Param>& params);

Config make_config(std::vector<Param> params, int num_warps = 4, int num_stages = 3,
                   int num_ctas = 1, std::optional<int> maxnreg = std::nullopt);

// `BLOCK_M=128,BLOCK_N=64;warps=4;stages=3` then `;ctas=N` when num_ctas != 1,
// `;maxnreg=N` when set, `;algorithm=NAME` when set and `;ir_override=TEXT`
// when set. Two configs that differ anywhere differ here.
std::string signature(const Config& config);

// The config a signature names: its exact inverse, so files that name
// configs by signature (timing sidecars) give back the full form. Throws
// Error starting with `where` when the text is not a signature.
Config config_from_signature(std::string_view text, const std::string& where);

// Static shared-memory proxy, lower is cheaper. Compared lexicographically:
// block cost first, then warps. Not a speed model.
struct Cost {
  std::int64_t block = 0;  // product of BLOCK* params x max(num_stages, 1), saturating
  std::int64_t warps = 0;  // max(num_warps, 1)

  friend auto operator<=>(const Cost&, const Cost&) = default;
};

Cost estimate_cost(const Config& config);

// True for a usable algorithm name: 1 to 128 characters, none of them a
// space, control character, ',', ';' or '='.
bool is_algorithm_name(std::string_view name);

// True for parameter names the cost and block-size overrides look at.
inline bool is_block_param(std::string_view name) { return name.starts_with("BLOCK"); }

}  // namespace tunelock
