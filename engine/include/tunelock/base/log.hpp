// The engine's logger. Diagnostics go to stderr so stdout carries only a
// command's output.
#pragma once

#include <spdlog/spdlog.h>

namespace tunelock {

spdlog::logger& logger();

}  // namespace tunelock
