// Captures what the engine logs while in scope, so tests can assert that a
// warning was (or was not) issued.
#pragma once

#include <spdlog/sinks/ostream_sink.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "tunelock/base/log.hpp"

namespace tunelock::testing {

class CapturedLog {
 public:
  CapturedLog() : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_)) {
    logger().sinks().push_back(sink_);
  }
  ~CapturedLog() {
    auto& sinks = logger().sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;

  std::string text() const { return stream_.str(); }

  // How many times `needle` occurs in the captured text.
  std::size_t count(const std::string& needle) const {
    const std::string all = text();
    std::size_t n = 0;
    for (auto at = all.find(needle); at != std::string::npos; at = all.find(needle, at + 1)) ++n;
    return n;
  }

 private:
  std::ostringstream stream_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

}  // namespace tunelock::testing
