// The online launch check (TUNELOCK_WATCH_VERIFY=1): a trainer that already
// verifies adds, at each check, the digest of the kernel launches the watch
// (libtunelock_watch.so, see `tunelock watch`) saw since the previous check,
// so a rank that launched differently is named at the next step boundary,
// before a collective can hang on it.
#pragma once

#include <functional>
#include <string>

#include "tunelock/base/environment.hpp"

namespace tunelock {

// What Runtime::verify calls for the digest: empty when the variable is
// off. The watch library is looked up at each call until found (the CUDA
// driver loads it on the program's first CUDA call, which may come after
// the runtime starts); while it is not running the digest is "unwatched",
// the same on every rank, and one warning says so.
std::function<std::string()> watch_digest_source(const Environment& env);

}  // namespace tunelock
