#include "watch_session.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "tunelock/base/environment.hpp"
#include "tunelock/base/rank_environment.hpp"

namespace tunelock::watch {
namespace {

// The watched command line, for people reading the log.
std::string program_of_this_process() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && text.back() == '\0') text.pop_back();
  for (char& c : text)
    if (c == '\0') c = ' ';
  return text;
}

}  // namespace

WatchSession::WatchSession(const char* prefix) : owner_(::getpid()) {
  const Environment env = process_environment();
  prefix_ = prefix && *prefix ? prefix : env_value(env, env_names::kWatchOut);
  if (prefix_.empty()) prefix_ = "tunelock-watch";
  step_range_ = env_value(env, env_names::kWatchStepNvtx);
  const std::string binary = env_value(env, env_names::kWatchBinary);
  binary_ = !binary.empty() && parse_boolean(env_names::kWatchBinary, binary);
  program_ = program_of_this_process();
  report_folder_ = env_value(env, env_names::kWatchReport);
}

void WatchSession::launch_named(std::string_view name, std::string_view module,
                                const LaunchShape& shape) {
  std::lock_guard lock(mutex_);
  recorder_.add(recorder_.kernel(name, module), shape);
}

void WatchSession::step() {
  std::lock_guard lock(mutex_);
  recorder_.step();
}

std::string WatchSession::take_check_digest() {
  std::lock_guard lock(mutex_);
  return recorder_.take_check_digest();
}

void WatchSession::range_pushed(std::string_view name) {
  if (!step_range_.empty() && name == step_range_) step();
}

void WatchSession::set_unobserved(std::string why) {
  std::lock_guard lock(mutex_);
  note_ = std::move(why);
}

void WatchSession::write() {
  if (::getpid() != owner_) return;
  const int rank = rank_from_environment(process_environment()).rank;
  LaunchLog log;
  {
    std::lock_guard lock(mutex_);
    log = recorder_.log(rank, program_, note_);
  }
  write_launch_log(log, launch_log_path(prefix_, rank, binary_));
}

void WatchSession::report_unwritten(const std::string& why) noexcept {
  if (report_folder_.empty()) return;
  try {
    // One file per process: ranks of one command never share a name.
    const std::string rank = std::to_string(rank_from_environment(process_environment()).rank);
    std::ofstream out(report_folder_ + "/rank" + rank + ".pid" + std::to_string(::getpid()));
    out << "rank " << rank << ": " << why << "\n";
  } catch (...) {
    // At exit, with the message already on stderr: nothing more to do.
  }
}

}  // namespace tunelock::watch
