#include "tunelock/notices.hpp"

namespace tunelock {

bool Notices::first(std::string_view key) {
  std::lock_guard lock(mutex_);
  return seen_.emplace(key).second;
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
