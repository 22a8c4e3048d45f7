// The integrity check every binary file (.tlb, .tlrt, .tlcl) carries: a
// trailer of a 4-byte tag and the XXH3-64 of every byte before the hash.
// It is checked before the FlatBuffers verifier, which only proves a buffer
// is safe to read, not that it holds what was written: a flipped bit in a
// number or a string passes the verifier and becomes a different answer.
#pragma once

#include <string>
#include <string_view>

namespace tunelock::checksum_trailer {

// The bytes a binary writer produced, followed by their trailer.
std::string seal(std::string_view payload);

// The payload of `bytes` when its trailer is present and its checksum
// matches. Throws Error naming `origin` otherwise; `what` names the kind of
// file ("binary table"), `reconvert` says how to make a current file.
std::string_view open(std::string_view bytes, const std::string& origin, std::string_view what,
                      std::string_view reconvert);

}  // namespace tunelock::checksum_trailer
