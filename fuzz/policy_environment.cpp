// The policy's environment: the input is NAME=VALUE lines, read as the
// process environment would be.
#include <algorithm>

#include "fuzz_target.hpp"
#include "tunelock/decision/policy_sources.hpp"

void read_input(std::string_view bytes, const std::string&) {
  tunelock::Environment env;
  while (!bytes.empty()) {
    const std::size_t end = std::min(bytes.find('\n'), bytes.size());
    const std::string_view line = bytes.substr(0, end);
    const std::size_t equals = line.find('=');
    if (equals != std::string_view::npos)
      env[std::string(line.substr(0, equals))] = std::string(line.substr(equals + 1));
    bytes.remove_prefix(std::min(end + 1, bytes.size()));
  }
  (void)tunelock::policy_from_environment(env);
}
