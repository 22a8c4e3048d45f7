#include "tunelock/base/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>

#include <cstdlib>
#include <string>

#include "tunelock/base/environment.hpp"

namespace tunelock {
namespace {

// TUNELOCK_LOG_LEVEL: trace, debug, info (default), warn, error, critical
// or off. Anything else keeps info and says so in the words the policy
// reader refuses it with.
void apply_level_from_environment(spdlog::logger& log) {
  const std::string value = env_value(process_environment(), env_names::kLogLevel);
  if (value.empty()) return;
  if (!is_log_level(value)) {
    log.warn("{}: invalid value '{}'; allowed: {} (info used)", env_names::kLogLevel, value,
             kLogLevelNames);
    return;
  }
  log.set_level(spdlog::level::from_str(value));
}

}  // namespace

bool is_log_level(std::string_view text) {
  // from_str answers off for unknown names; only "off" itself means off.
  const std::string name(text);
  return name == "off" || spdlog::level::from_str(name) != spdlog::level::off;
}

spdlog::logger& logger() {
  // Plain stderr sink: stdout belongs to command output, and colour codes
  // would end up in captured logs. Leaked on purpose: the exit-time writer
  // logs its failures after static destructors may have run.
  static spdlog::logger* instance = [] {
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    auto* log = new spdlog::logger("tunelock", sink);
    log->set_pattern("tunelock: %l: %v");
    apply_level_from_environment(*log);
    return log;
  }();
  return *instance;
}

}  // namespace tunelock
