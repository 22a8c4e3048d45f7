// What every C entry point shares: exceptions become a status and a
// thread-local message (nothing C++ crosses the ABI), strings go out as
// malloc'd copies, and JSON comes in with errors naming the argument.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "tunelock/base/error.hpp"
#include "tunelock/io/json_reader.hpp"
#include "tunelock/model/config.hpp"
#include "tunelock/model/config_json.hpp"

namespace tunelock::c_api {

inline thread_local std::string last_error;

// Runs `body`; 0 when it returned, 1 with last_error set when it threw.
template <typename Body>
int guarded(Body&& body) noexcept {
  try {
    body();
    last_error.clear();
    return 0;
  } catch (const std::exception& e) {
    last_error = e.what();
  } catch (...) {
    last_error = "unknown error";
  }
  return 1;
}

inline void put(char** out, std::string_view text) {
  if (!out) throw Error("an output argument is NULL");
  char* copy = static_cast<char*>(std::malloc(text.size() + 1));
  if (!copy) throw Error("out of memory");
  std::memcpy(copy, text.data(), text.size());
  copy[text.size()] = '\0';
  *out = copy;
}

inline std::string text_of(const char* value, const char* what) {
  if (!value) throw Error(std::string(what) + " is NULL");
  return value;
}

inline nlohmann::json json_of(const char* value, const char* what) {
  return parse_json(text_of(value, what), what);
}

// A non-empty JSON array of configs in Megatron's form, each named by its
// place ("candidates[2].kwargs") when malformed.
inline std::vector<Config> configs_of(const char* candidates_json) {
  const nlohmann::json list = json_of(candidates_json, "candidates");
  if (!list.is_array() || list.empty()) throw Error("candidates: expected a non-empty JSON array");
  std::vector<Config> out;
  for (std::size_t i = 0; i < list.size(); ++i)
    out.push_back(config_from_json(list[i], "candidates[" + std::to_string(i) + "]"));
  return out;
}

}  // namespace tunelock::c_api
