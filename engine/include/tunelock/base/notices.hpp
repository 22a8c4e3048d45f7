// Once-per-policy notices ("no tuned config for X, using the cheapest").
// A notice is issued the first time its key is seen; installing a new policy
// resets the set so the new policy reports again.
#pragma once

#include <mutex>
#include <set>
#include <string>
#include <string_view>

namespace tunelock {

class Notices {
 public:
  // True the first time `key` is seen since construction or the last reset().
  bool first(std::string_view key);
  void reset();

 private:
  std::mutex mutex_;
  std::set<std::string, std::less<>> seen_;
};

// The process-wide set the engine uses when a caller passes none.
Notices& process_notices();

}  // namespace tunelock
