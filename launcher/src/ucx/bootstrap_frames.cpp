#include "bootstrap_frames.hpp"

#include <flatbuffers/flatbuffers.h>

#include <cstdint>

#include "tunelock/error.hpp"
#include "tunelock/detail/bounded_verifier.hpp"

namespace tunelock::launcher::bootstrap {
namespace {

constexpr std::size_t kHeader = 8;
constexpr std::uint32_t kMaxFrame = 1 << 20;  // a hello is a few hundred bytes

}  // namespace

std::string frame(char kind, std::string_view body) {
  std::string out = "TLB";
  out += kind;
  const auto size = static_cast<std::uint32_t>(body.size());
  for (int i = 0; i < 4; ++i) out += static_cast<char>((size >> (8 * i)) & 0xff);
  out.append(body);
  return out;
}

std::optional<std::pair<char, std::string>> take_frame(std::string& buffer) {
  if (buffer.size() < kHeader) return std::nullopt;
  if (buffer.compare(0, 3, "TLB") != 0) throw Error("not a tunelock rendezvous frame");
  std::uint32_t size = 0;
  for (int i = 0; i < 4; ++i)
    size |= static_cast<std::uint32_t>(static_cast<unsigned char>(buffer[4 + i])) << (8 * i);
  if (size > kMaxFrame) throw Error("frame too large");
  if (buffer.size() < kHeader + size) return std::nullopt;
  std::pair<char, std::string> out{buffer[3], buffer.substr(kHeader, size)};
  buffer.erase(0, kHeader + size);
  return out;
}

const fb::Hello& open_hello(std::string_view body) {
  const auto* data = reinterpret_cast<const std::uint8_t*>(body.data());
  flatbuffers::Verifier verifier = tunelock::detail::bounded_verifier(data, body.size());
  if (!fb::VerifyHelloBuffer(verifier)) throw Error("malformed hello");
  return *fb::GetHello(data);
}

const fb::Roster& open_roster(std::string_view body) {
  const auto* data = reinterpret_cast<const std::uint8_t*>(body.data());
  flatbuffers::Verifier verifier = tunelock::detail::bounded_verifier(data, body.size());
  if (!verifier.VerifyBuffer<fb::Roster>(nullptr)) throw Error("malformed roster");
  return *flatbuffers::GetRoot<fb::Roster>(data);
}

}  // namespace tunelock::launcher::bootstrap
