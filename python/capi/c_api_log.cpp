// The engine's log, routed to the caller: Python's `logging` installs a
// sink here so its handlers, filters and pytest's caplog see (and can
// silence) what the engine says, under the one logger name "tunelock".
#include <spdlog/sinks/base_sink.h>

#include <mutex>

#include "c_api_support.hpp"
#include "tunelock/base/log.hpp"
#include "tunelock/c_api.h"

namespace tunelock::c_api {
namespace {

// spdlog's extension point for a new destination: every message, formatted
// as its payload only, handed to the caller's function with its level.
class CallbackSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  CallbackSink(tunelock_log_fn fn, void* user) : fn_(fn), user_(user) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& message) override {
    const std::string text(message.payload.data(), message.payload.size());
    fn_(static_cast<int>(message.level), text.c_str(), user_);
  }
  void flush_() override {}

 private:
  tunelock_log_fn fn_;
  void* user_;
};

// The sinks the logger had before any callback: put back on NULL.
std::vector<spdlog::sink_ptr>& original_sinks() {
  static std::vector<spdlog::sink_ptr> sinks = logger().sinks();
  return sinks;
}

}  // namespace
}  // namespace tunelock::c_api

extern "C" int tunelock_set_log_sink(tunelock_log_fn fn, void* user) {
  using namespace tunelock;
  return c_api::guarded([&] {
    auto& sinks = logger().sinks();
    const std::vector<spdlog::sink_ptr>& original = c_api::original_sinks();
    sinks = original;
    if (fn) sinks = {std::make_shared<c_api::CallbackSink>(fn, user)};
  });
}
