// A FlatBuffers verifier whose work is bounded by the buffer's size. Every
// table the verifier enters starts at its own 4-byte offset, so a buffer of N
// bytes without shared (aliased) tables holds at most N / 4 of them; a buffer
// that makes the verifier enter more is one whose offsets point many times at
// one table (K offsets at a kernel of M keys cost K x M) and is refused
// instead of being walked for hours. Vectors of strings are not tables: a
// reader whose schema nests them in vectors of tables checks first that those
// lists are not shared (table_binary.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <flatbuffers/flatbuffers.h>

namespace tunelock::detail {

inline flatbuffers::Verifier bounded_verifier(const std::uint8_t* data, std::size_t size) {
  flatbuffers::Verifier::Options options;
  options.max_depth = 64;
  options.max_tables = static_cast<flatbuffers::uoffset_t>(
      std::min<std::size_t>(size / 4 + 1, FLATBUFFERS_MAX_BUFFER_SIZE));
  return flatbuffers::Verifier(data, size, options);
}

}  // namespace tunelock::detail
