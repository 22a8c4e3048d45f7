#include "bootstrap_frames.hpp"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cstdint>

#include "tunelock/base/error.hpp"
#include "tunelock/io/bounded_verifier.hpp"

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

namespace {

const std::uint8_t* bytes_of(std::string_view text) {
  return reinterpret_cast<const std::uint8_t*>(text.data());
}

std::string finished(const flatbuffers::FlatBufferBuilder& b) {
  return {reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize()};
}

template <typename Message>
const Message& of_wire_version(const Message& message, const char* what) {
  if (message.format_version() != kWireVersion)
    throw Error(std::string(what) + " of wire version " + std::to_string(message.format_version()) +
                "; this tunelock speaks version " + std::to_string(kWireVersion) +
                " (run one tunelock on every rank)");
  return message;
}

}  // namespace

std::string hello_bytes(std::string_view token, int rank, int world_size,
                        std::string_view address) {
  flatbuffers::FlatBufferBuilder b;
  const auto token_offset = b.CreateString(token);
  const auto bytes = b.CreateVector(bytes_of(address), address.size());
  fb::FinishHelloBuffer(
      b, fb::CreateHello(b, kWireVersion, token_offset, static_cast<std::uint32_t>(rank),
                         static_cast<std::uint32_t>(world_size), bytes));
  return finished(b);
}

std::string roster_bytes(std::string_view token, const std::vector<std::string>& addresses) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::RosterEntry>> entries;
  for (std::size_t i = 0; i < addresses.size(); ++i) {
    const auto bytes = b.CreateVector(bytes_of(addresses[i]), addresses[i].size());
    entries.push_back(fb::CreateRosterEntry(b, static_cast<std::uint32_t>(i), bytes));
  }
  const auto token_offset = b.CreateString(token);
  const auto vector = b.CreateVector(entries);
  b.Finish(fb::CreateRoster(b, kWireVersion, token_offset, vector));
  return finished(b);
}

const fb::Hello& open_hello(std::string_view body) {
  flatbuffers::Verifier verifier = tunelock::detail::bounded_verifier(bytes_of(body), body.size());
  if (!fb::VerifyHelloBuffer(verifier)) throw Error("malformed hello");
  return of_wire_version(*fb::GetHello(bytes_of(body)), "a hello");
}

const fb::Roster& open_roster(std::string_view body) {
  flatbuffers::Verifier verifier = tunelock::detail::bounded_verifier(bytes_of(body), body.size());
  if (!verifier.VerifyBuffer<fb::Roster>(nullptr)) throw Error("malformed roster");
  return of_wire_version(*flatbuffers::GetRoot<fb::Roster>(bytes_of(body)), "a roster");
}

}  // namespace tunelock::launcher::bootstrap
