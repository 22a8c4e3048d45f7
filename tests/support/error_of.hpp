// What the engine's error says when `action` fails, for tests that check
// messages name what and where; empty when it does not fail.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "tunelock/base/error.hpp"

namespace tunelock::testing {

inline std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

inline bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

}  // namespace tunelock::testing
