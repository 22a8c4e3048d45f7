// The read prologue every binary file (.tlb, .tlrt, .tlcl) shares: the
// checksum trailer, the FlatBuffers verifier, and the format_version check,
// written once so the three readers give the same errors and nobody spells
// a version number twice.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "io/checksum_trailer.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/io/bounded_verifier.hpp"

namespace tunelock::detail {

struct SealedFormat {
  std::string_view what;       // "binary table", for messages
  const char* identifier;      // the schema's file_identifier
  std::uint32_t version;       // the only format_version this tunelock reads
  std::string_view reconvert;  // how to make a current file from an older one
  // Before the verifier, where a schema nests string lists in table vectors:
  // false when those lists are shared, which the verifier would walk once per
  // reference (bounded_verifier.hpp).
  bool (*lists_unshared)(const std::uint8_t* data, std::size_t size) = nullptr;
};

// The verified root of a sealed file. Throws Error naming `origin`: a
// checksum that does not match, a buffer the verifier rejects, or another
// format_version (newer: which one is supported; older: how to re-convert).
template <typename Root>
const Root& open_sealed(std::string_view bytes, const std::string& origin,
                        const SealedFormat& format) {
  const std::string_view payload =
      checksum_trailer::open(bytes, origin, format.what, format.reconvert);
  const auto* data = reinterpret_cast<const std::uint8_t*>(payload.data());
  if (format.lists_unshared && !format.lists_unshared(data, payload.size())) {
    throw Error(origin + ": corrupt " + std::string(format.what) +
                " (its offsets point many times at one list, which tunelock never writes)");
  }
  // The limit on tables grows with the file: a million-entry file holds far
  // more than the verifier's default of a million.
  flatbuffers::Verifier verifier = bounded_verifier(data, payload.size());
  if (!verifier.VerifyBuffer<Root>(format.identifier)) {
    throw Error(origin + ": corrupt " + std::string(format.what) +
                " (truncated or damaged; the FlatBuffers verifier rejected it)");
  }
  const Root& root = *flatbuffers::GetRoot<Root>(data);
  if (root.format_version() > format.version) {
    throw Error(origin + ": format_version " + std::to_string(root.format_version()) +
                " is newer than this tunelock supports (" + std::to_string(format.version) +
                "); upgrade tunelock");
  }
  if (root.format_version() < format.version) {
    throw Error(origin + ": format_version " + std::to_string(root.format_version()) +
                " is older than this tunelock reads; " + std::string(format.reconvert));
  }
  return root;
}

}  // namespace tunelock::detail
