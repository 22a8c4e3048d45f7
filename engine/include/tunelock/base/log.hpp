// The engine's logger. Diagnostics go to stderr so stdout carries only a
// command's output.
#pragma once

#include <spdlog/spdlog.h>

#include <string_view>

namespace tunelock {

spdlog::logger& logger();

// TUNELOCK_LOG_LEVEL's values, as spdlog names them. A face that reads the
// policy refuses any other at start; the logger itself, for commands that
// read no policy, says so and keeps info.
inline constexpr std::string_view kLogLevelNames = "trace, debug, info, warn, error, critical, off";
bool is_log_level(std::string_view text);

}  // namespace tunelock
