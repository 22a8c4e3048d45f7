#include "tunelock/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>

namespace tunelock {

spdlog::logger& logger() {
  // Plain stderr sink: stdout belongs to command output, and colour codes
  // would end up in captured logs.
  static std::shared_ptr<spdlog::logger> instance = [] {
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    auto log = std::make_shared<spdlog::logger>("tunelock", sink);
    log->set_pattern("tunelock: %l: %v");
    return log;
  }();
  return *instance;
}

}  // namespace tunelock
