#include "bootstrap_frames.hpp"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cstdint>

#include "tunelock/detail/bounded_verifier.hpp"
#include "tunelock/error.hpp"

namespace tunelock::launcher::bootstrap {
namespace {

constexpr std::size_t kHeader = 8;

}  // namespace

std::string frame(char kind, std::string_view body) {
  std::string out = "TLB";
  out += kind;
  const auto size = static_cast<std::uint32_t>(body.size());
  for (int i = 0; i < 4; ++i) out += static_cast<char>((size >> (8 * i)) & 0xff);
  out.append(body);
  return out;
}

std::optional<std::pair<char, std::string>> take_frame(std::string& buffer,
                                                       std::uint32_t max_body) {
  if (buffer.size() < kHeader) return std::nullopt;
  if (buffer.compare(0, 3, "TLB") != 0) throw Error("not a tunelock rendezvous frame");
  std::uint32_t size = 0;
  for (int i = 0; i < 4; ++i)
    size |= static_cast<std::uint32_t>(static_cast<unsigned char>(buffer[4 + i])) << (8 * i);
  if (size > max_body) {
    throw Error("frame too large (" + std::to_string(size) + " bytes announced, at most " +
                std::to_string(max_body) + ")");
  }
  if (buffer.size() < kHeader + size) return std::nullopt;
  std::pair<char, std::string> out{buffer[3], buffer.substr(kHeader, size)};
  buffer.erase(0, kHeader + size);
  return out;
}

std::string printable_peer_text(std::string_view text, std::size_t limit) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  std::size_t used = 0;
  for (; used < text.size() && out.size() < limit; ++used) {
    const auto byte = static_cast<unsigned char>(text[used]);
    if (byte >= 0x20 && byte < 0x7f && byte != '\\') {
      out += static_cast<char>(byte);
    } else {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
  }
  if (used < text.size())
    out += "... (" + std::to_string(text.size() - used) + " more bytes not shown)";
  return out;
}

std::string summarise_refusals(const std::vector<std::string>& refusals) {
  std::vector<std::pair<std::string, std::size_t>> counted;  // in order of first sight
  for (const std::string& refusal : refusals) {
    auto it = std::find_if(counted.begin(), counted.end(),
                           [&](const auto& seen) { return seen.first == refusal; });
    if (it == counted.end())
      counted.emplace_back(refusal, 1);
    else
      ++it->second;
  }
  constexpr std::size_t kShown = 8;  // distinct refusals named; the rest counted
  std::string out;
  for (std::size_t i = 0; i < counted.size() && i < kShown; ++i) {
    out += (i ? "; " : "") + counted[i].first;
    if (counted[i].second > 1) out += " (x" + std::to_string(counted[i].second) + ")";
  }
  if (counted.size() > kShown)
    out += "; and " + std::to_string(counted.size() - kShown) + " other kinds of refusal";
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
