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

template <typename Word>
inline bool same_word(const char* a, const char* b) {
  Word x, y;  // memcpy: unaligned loads without undefined behaviour
  std::memcpy(&x, a, sizeof x);
  std::memcpy(&y, b, sizeof y);
  return x == y;
}

// Whole words, and the tail as one more word ending at the last byte
// (overlapping the previous one): no loop over single bytes, whose branches
// cost more than the loads.
inline bool same_bytes(const char* a, const char* b, std::size_t size) {
  if (size >= 8) {
    for (std::size_t i = 0; i + 8 <= size; i += 8)
      if (!same_word<std::uint64_t>(a + i, b + i)) return false;
    return size % 8 == 0 || same_word<std::uint64_t>(a + size - 8, b + size - 8);
  }
  if (size >= 4)
    return same_word<std::uint32_t>(a, b) && same_word<std::uint32_t>(a + size - 4, b + size - 4);
  if (size >= 2)
    return same_word<std::uint16_t>(a, b) && same_word<std::uint16_t>(a + size - 2, b + size - 2);
  return size == 0 || a[0] == b[0];
}

inline bool same_text(std::string_view a, std::string_view b) {
  return a.size() == b.size() && same_bytes(a.data(), b.data(), a.size());
}

}  // namespace tunelock::detail
