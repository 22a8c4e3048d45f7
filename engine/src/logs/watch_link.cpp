#include "logs/watch_link.hpp"

#if !defined(__EMSCRIPTEN__)
#include <dlfcn.h>
#endif

#include <atomic>

#include "tunelock/base/log.hpp"

namespace tunelock {
namespace {

using CheckDigest = int (*)(char*, std::size_t);

#if !defined(__EMSCRIPTEN__)
// The watch's entry in this process: linked in, or loaded by the driver
// from CUDA_INJECTION64_PATH, or from TUNELOCK_WATCH_LIBRARY. RTLD_NOLOAD:
// only a library already loaded is running a watch.
CheckDigest find_check_digest(const Environment& env) {
  if (void* linked = ::dlsym(RTLD_DEFAULT, "tunelock_watch_check_digest"))
    return reinterpret_cast<CheckDigest>(linked);
  for (const std::string& path :
       {env_value(env, "CUDA_INJECTION64_PATH"), env_value(env, env_names::kWatchLibrary)}) {
    if (path.empty()) continue;
    if (void* handle = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD)) {
      if (void* found = ::dlsym(handle, "tunelock_watch_check_digest"))
        return reinterpret_cast<CheckDigest>(found);
    }
  }
  return nullptr;
}
#else
CheckDigest find_check_digest(const Environment&) { return nullptr; }
#endif

}  // namespace

std::function<std::string()> watch_digest_source(const Environment& env) {
  const std::string enabled = env_value(env, env_names::kWatchVerify);
  if (enabled.empty() || !parse_boolean(env_names::kWatchVerify, enabled)) return {};
  auto found = std::make_shared<std::atomic<CheckDigest>>(nullptr);
  auto warned = std::make_shared<std::atomic<bool>>(false);
  return [env, found, warned]() -> std::string {
    CheckDigest check = found->load();
    if (!check) {
      check = find_check_digest(env);
      found->store(check);
    }
    char digest[32] = "";
    if (check && check(digest, sizeof digest) == 0) return digest;
    if (!warned->exchange(true))
      logger().warn(
          "{}=1 but no launch watch runs in this process (run it under `tunelock watch`); the "
          "checks compare no launches",
          env_names::kWatchVerify);
    return "unwatched";
  };
}

}  // namespace tunelock
