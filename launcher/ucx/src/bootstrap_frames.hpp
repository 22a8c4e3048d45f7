// The rendezvous wire format, apart from the sockets: frames and the
// hello and roster inside them. Kept separate so the decoders that face the
// network can be fuzzed without a network (fuzz/bootstrap_hello.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunelock/fb/bootstrap_generated.h"

namespace tunelock::launcher::bootstrap {

// Frames: "TLB" + kind + little-endian uint32 length + body.
enum FrameKind : char {
  kHelloFrame = 'H',    // a rank's hello, to rank 0
  kRosterFrame = 'R',   // rank 0's roster, to each rank
  kFailureFrame = 'F',  // rank 0's refusal or failure, as text
};
std::string frame(char kind, std::string_view body);

// The hello's and the roster's format_version: both ends of one job run
// one tunelock, and a message of another version is refused by name.
constexpr std::uint32_t kWireVersion = 1;

// The largest body rank 0 reads from a connection that has not yet said a
// valid hello: a hello is a few hundred bytes (a worker address and a
// token), and a stranger must not make rank 0 buffer more.
constexpr std::uint32_t kMaxHelloFrame = 16 << 10;
// The largest body a rank reads from rank 0 (a roster of every rank's address).
constexpr std::uint32_t kMaxFrame = 1 << 20;

// A frame parsed out of `buffer` when complete: {kind, body}, removed from
// the buffer; nothing while incomplete. Throws Error on garbage, or on a
// header announcing more than `max_body` bytes, so the caller can drop the
// connection before buffering it.
std::optional<std::pair<char, std::string>> take_frame(std::string& buffer,
                                                       std::uint32_t max_body = kMaxFrame);

// A peer's text made safe to print on one line: control bytes and bytes
// outside ASCII become \xNN, and text beyond `limit` characters is cut with
// a count of what was left out. What rank 0 (or whoever holds its port)
// sends is printed by every rank: it must not be able to paint the
// terminal, forge "[rank N]" lines or flood the log.
std::string printable_peer_text(std::string_view text, std::size_t limit = 2000);

// Refusals, each once, with how many times it was seen: "X; Y (x500)".
std::string summarise_refusals(const std::vector<std::string>& refusals);

// The hello a rank sends and the roster rank 0 answers with (every rank's
// worker address, in rank order), encoded beside their decoders.
std::string hello_bytes(std::string_view token, int rank, int world_size, std::string_view address);
std::string roster_bytes(std::string_view token, const std::vector<std::string>& addresses);

// The hello or roster in a frame's body, verified (the pointers are into
// `body`). Throws Error when it is not one, or of another wire version.
const fb::Hello& open_hello(std::string_view body);
const fb::Roster& open_roster(std::string_view body);

// A hello's or roster entry's worker address, as bytes.
inline std::string as_string(const flatbuffers::Vector<std::uint8_t>* bytes) {
  return {reinterpret_cast<const char*>(bytes->data()), bytes->size()};
}

}  // namespace tunelock::launcher::bootstrap
