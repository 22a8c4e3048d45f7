#include "tunelock/base/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>

#include <cstdlib>
#include <string>

#include "tunelock/base/environment.hpp"

namespace tunelock {
namespace {

// TUNELOCK_LOG_LEVEL: trace, debug, info (default), warn, error, critical
// or off, as spdlog names them. Anything else keeps info and says so.
void apply_level_from_environment(spdlog::logger& log) {
  const std::string value = env_value(process_environment(), env_names::kLogLevel);
  if (value.empty()) return;
  const char* text = value.c_str();
  const spdlog::level::level_enum level = spdlog::level::from_str(text);
  // from_str answers off for unknown names; only "off" itself means off.
  if (level == spdlog::level::off && std::string(text) != "off") {
    log.warn(
        "TUNELOCK_LOG_LEVEL={} is not a level (trace, debug, info, warn, error, critical, off); "
        "using info",
        text);
    return;
  }
  log.set_level(level);
}

}  // namespace

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
