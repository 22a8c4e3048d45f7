#include "tunelock/base/notices.hpp"

namespace tunelock {

bool Notices::first(std::string_view key) {
  std::lock_guard lock(mutex_);
  // Looked up before inserting: emplace would build (and free) a string
  // node on every call, and most calls ask about a key already seen.
  if (seen_.find(key) != seen_.end()) return false;
  seen_.emplace(key);
  return true;
}

void Notices::reset() {
  std::lock_guard lock(mutex_);
  seen_.clear();
}

Notices& process_notices() {
  static Notices notices;
  return notices;
}

}  // namespace tunelock
