#include "tunelock/base/environment.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "base/text.hpp"
#include "tunelock/base/error.hpp"

extern char** environ;

namespace tunelock {

std::string env_value(const Environment& env, std::string_view name) {
  auto it = env.find(name);
  return it == env.end() ? std::string() : it->second;
}

Environment process_environment() {
  Environment env;
  for (char** entry = environ; entry && *entry; ++entry) {
    std::string_view text = *entry;
    const auto eq = text.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
  }
  return env;
}

void invalid_value(std::string_view name, std::string_view text, std::string_view allowed) {
  throw Error(std::string(name) + ": invalid value '" + std::string(text) +
              "'; allowed: " + std::string(allowed));
}

std::int64_t parse_integer(std::string_view name, std::string_view text, std::int64_t min,
                           std::int64_t max, std::string_view allowed) {
  const std::string_view value = text::trimmed(text);
  std::int64_t out = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (value.empty() || ec != std::errc{} || end != value.data() + value.size() || out < min ||
      out > max) {
    if (!allowed.empty()) invalid_value(name, text, allowed);
    invalid_value(name, text,
                  "an integer from " + std::to_string(min) + " to " + std::to_string(max));
  }
  return out;
}

bool parse_boolean(std::string_view name, std::string_view text) {
  std::string value(text::trimmed(text));
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (value == "1" || value == "true" || value == "yes" || value == "on") return true;
  if (value == "0" || value == "false" || value == "no" || value == "off") return false;
  invalid_value(name, text, "1, 0, true, false, yes, no, on, off (any case)");
}

}  // namespace tunelock
