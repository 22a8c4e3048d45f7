#include "io/checksum_trailer.hpp"

#include <xxhash.h>

#include <array>
#include <cstdint>

#include "tunelock/base/error.hpp"

namespace tunelock::checksum_trailer {
namespace {

// The tag says "this file has a trailer": files from before checksums end
// in FlatBuffers data, so a missing tag names an old file, not only damage.
constexpr std::string_view kTag = "TLX3";
constexpr std::size_t kHashSize = 8;
constexpr std::size_t kTrailerSize = kTag.size() + kHashSize;

// Little-endian, so a file means the same on every machine.
std::array<char, kHashSize> hash_bytes(std::string_view covered) {
  std::uint64_t hash = XXH3_64bits(covered.data(), covered.size());
  std::array<char, kHashSize> out{};
  for (char& byte : out) {
    byte = static_cast<char>(hash & 0xff);
    hash >>= 8;
  }
  return out;
}

}  // namespace

std::string seal(std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + kTrailerSize);
  out.append(payload);
  out.append(kTag);
  const auto hash = hash_bytes(out);
  out.append(hash.data(), hash.size());
  return out;
}

std::string_view open(std::string_view bytes, const std::string& origin, std::string_view what,
                      std::string_view reconvert) {
  if (bytes.size() < kTrailerSize ||
      bytes.substr(bytes.size() - kTrailerSize, kTag.size()) != kTag) {
    throw Error(origin + ": " + std::string(what) +
                " without a checksum: written by a tunelock older than this format, or damaged; " +
                std::string(reconvert));
  }
  const std::string_view covered = bytes.substr(0, bytes.size() - kHashSize);
  const auto expected = hash_bytes(covered);
  if (bytes.substr(covered.size()) != std::string_view(expected.data(), expected.size())) {
    throw Error(origin + ": " + std::string(what) +
                " fails its checksum: the file is damaged (changed after it was written)");
  }
  return bytes.substr(0, bytes.size() - kTrailerSize);
}

}  // namespace tunelock::checksum_trailer
