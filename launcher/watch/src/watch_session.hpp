// One process's watch: the launches recorded so far, the step marks, and
// writing the log. Kept apart from CUPTI (cupti_subscriber.cpp translates
// its callbacks into these calls) so what is recorded is plain C++.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "tunelock/logs/launch_log.hpp"

namespace tunelock::watch {

class WatchSession {
 public:
  // Reads TUNELOCK_WATCH_OUT (or `prefix` when given), the step range name
  // and the binary switch from the environment.
  explicit WatchSession(const char* prefix);

  // A launch of the kernel known by `handle` (a CUfunction or a host stub:
  // anything stable for the process). `describe` is called once per handle
  // to name it, and is never called again for the same handle.
  template <typename Describe>
  void launch(const void* handle, const LaunchShape& shape, Describe&& describe) {
    std::lock_guard lock(mutex_);
    auto found = kernels_.find(handle);
    if (found == kernels_.end()) {
      const WatchedKernel kernel = describe();
      found = kernels_.emplace(handle, recorder_.kernel(kernel.name, kernel.module)).first;
    }
    recorder_.add(found->second, shape);
  }
  // A launch of a kernel named only by text (graph nodes, graph launches).
  void launch_named(std::string_view name, std::string_view module, const LaunchShape& shape);

  void step();
  std::string take_check_digest();
  // A range pushed: a step when its name is the one steps are marked by.
  void range_pushed(std::string_view name);
  const std::string& step_range() const { return step_range_; }

  // Why nothing is observed; the log says so, and compare never calls it identical.
  void set_unobserved(std::string why);
  // Writes `<prefix>.rank<N>.launches.json` (or .tlln). Only the process
  // that started the watch writes: a forked worker inherits it but is not
  // that rank. Throws Error naming the file.
  void write();
  // A write that failed at exit: the reason goes where `tunelock watch`
  // reads it (TUNELOCK_WATCH_REPORT), so it names the cause rather than
  // guessing that CUDA never started. Never throws.
  void report_unwritten(const std::string& why) noexcept;

 private:
  std::mutex mutex_;
  LaunchRecorder recorder_;
  std::unordered_map<const void*, std::uint32_t> kernels_;
  std::string prefix_, step_range_, program_, note_, report_folder_;
  bool binary_ = false;
  pid_t owner_;
};

}  // namespace tunelock::watch
