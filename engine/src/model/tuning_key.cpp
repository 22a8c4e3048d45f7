#include "tunelock/model/tuning_key.hpp"

#include <charconv>

namespace tunelock {
namespace {

void append_value(std::string& out, const KeyValue& value) {
  if (const auto* number = std::get_if<std::int64_t>(&value)) {
    char digits[24];
    auto [end, ec] = std::to_chars(digits, digits + sizeof digits, *number);
    out.append(digits, end);
  } else if (const auto* flag = std::get_if<bool>(&value)) {
    out += *flag ? "True" : "False";
  } else {
    out += std::get<std::string_view>(value);
  }
}

}  // namespace

void build_tuning_key(std::string& out, std::span<const KeyArg> args,
                      std::span<const std::string_view> dtypes) {
  out.clear();
  bool first = true;
  auto separate = [&] {
    if (!first) out += '|';
    first = false;
  };
  for (const KeyArg& arg : args) {
    separate();
    out += arg.name;
    out += '=';
    append_value(out, arg.value);
  }
  for (std::string_view dtype : dtypes) {
    separate();
    out += dtype;
  }
}

std::string tuning_key(std::span<const KeyArg> args, std::span<const std::string_view> dtypes) {
  std::string out;
  build_tuning_key(out, args, dtypes);
  return out;
}

}  // namespace tunelock
