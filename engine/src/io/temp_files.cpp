#include "io/temp_files.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <string>

namespace tunelock::temp_files {
namespace {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || !name[0]) return "host";
  return name;
}

std::string prefix_of(const std::filesystem::path& target) {
  static const std::string host = host_name();
  return "." + target.filename().string() + ".tmp." + host + ".";
}

// Whether process `pid` of this host is gone. Unknown counts as alive.
bool process_gone(long pid) {
#ifdef __EMSCRIPTEN__
  (void)pid;
  return false;  // no processes to ask about in a browser
#else
  return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
#endif
}

}  // namespace

std::filesystem::path beside(const std::filesystem::path& target) {
  static std::atomic<unsigned> counter{0};
  const std::filesystem::path dir =
      target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  return dir / (prefix_of(target) + std::to_string(::getpid()) + "." + std::to_string(counter++));
}

void remove_stale(const std::filesystem::path& target) {
  namespace fs = std::filesystem;
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string prefix = prefix_of(target);
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(prefix)) continue;
    // The rest is `<pid>.<n>`.
    const std::string rest = name.substr(prefix.size());
    long pid = 0;
    const auto [end_of_pid, error] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
    if (error != std::errc() || end_of_pid == rest.data() + rest.size() || *end_of_pid != '.')
      continue;
    std::error_code ignored;
    if (process_gone(pid)) fs::remove(it->path(), ignored);
  }
}

}  // namespace tunelock::temp_files
