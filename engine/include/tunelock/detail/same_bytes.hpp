// Equality of two short byte strings, inline. Names, keys and raw call keys
// are tens of bytes, and comparing them is on the hot path of every choice
// and every cached launch; a call into the C library's memcmp cost more
// than the comparison itself there.
//
// Internal (detail/): not part of the API and may change between versions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace tunelock::detail {

inline bool same_bytes(const char* a, const char* b, std::size_t size) {
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    std::uint64_t x, y;  // memcpy: unaligned loads without undefined behaviour
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    if (x != y) return false;
  }
  for (; i < size; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

inline bool same_text(std::string_view a, std::string_view b) {
  return a.size() == b.size() && same_bytes(a.data(), b.data(), a.size());
}

}  // namespace tunelock::detail
