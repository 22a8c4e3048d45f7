// The shape/dtype signature of one kernel call: the kernel's declared key
// arguments as `name=value`, then the dtype of every tensor argument, joined
// by `|`. It must be at least as fine as what the tiling depends on; a key
// that drifts only misses the table, which still chooses deterministically.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>

namespace tunelock {

// A key argument's value. Booleans print as `True`/`False` so keys match
// tables recorded from Python (`IS_CAUSAL=False`).
using KeyValue = std::variant<std::int64_t, bool, std::string_view>;

struct KeyArg {
  std::string_view name;
  KeyValue value;
};

std::string tuning_key(std::span<const KeyArg> args, std::span<const std::string_view> dtypes);

// Appends into `out` (cleared first), so a caller on a hot path can reuse
// one buffer and avoid an allocation per call.
void build_tuning_key(std::string& out, std::span<const KeyArg> args,
                      std::span<const std::string_view> dtypes);

}  // namespace tunelock
