// Small text helpers the engine's parsers share. Private to the engine.
#pragma once

#include <string_view>

namespace tunelock::text {

// `value` without leading and trailing blanks (space, tab, CR, LF).
inline std::string_view trimmed(std::string_view value) {
  const auto first = value.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return value.substr(first, value.find_last_not_of(" \t\r\n") - first + 1);
}

}  // namespace tunelock::text
