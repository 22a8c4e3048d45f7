// The rendezvous wire format, apart from the sockets: frames and the
// hello and roster inside them. Kept separate so the decoders that face the
// network can be fuzzed without a network (fuzz/bootstrap_hello.cpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "tunelock/fb/bootstrap_generated.h"

namespace tunelock::launcher::bootstrap {

// Frames: "TLB" + kind + little-endian uint32 length + body. Kinds: 'H'
// hello (rank -> rank 0), 'R' roster (rank 0 -> rank), 'F' failure text.
std::string frame(char kind, std::string_view body);

// A frame parsed out of `buffer` when complete: {kind, body}, removed from
// the buffer; nothing while incomplete. Throws Error on garbage so the
// caller can drop the connection.
std::optional<std::pair<char, std::string>> take_frame(std::string& buffer);

// The hello or roster in a frame's body, verified (the pointers are into
// `body`). Throws Error when it is not one.
const fb::Hello& open_hello(std::string_view body);
const fb::Roster& open_roster(std::string_view body);

// A hello's or roster entry's worker address, as bytes.
inline std::string as_string(const flatbuffers::Vector<std::uint8_t>* bytes) {
  return {reinterpret_cast<const char*>(bytes->data()), bytes->size()};
}

}  // namespace tunelock::launcher::bootstrap
