// One libFuzzer entry point per reader: the bytes go to the reader as a
// file's contents; a tunelock::Error is the reader saying "bad input" and is
// fine, anything else (another exception, a crash, a leak, a sanitizer
// report, a hang) is a bug libFuzzer reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tunelock/base/error.hpp"

// Each target defines this: read `bytes` as the file `origin`.
void read_input(std::string_view bytes, const std::string& origin);

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    read_input({reinterpret_cast<const char*>(data), size}, "fuzz-input");
  } catch (const tunelock::Error&) {
  }
  return 0;
}
