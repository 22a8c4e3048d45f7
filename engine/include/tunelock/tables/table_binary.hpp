// Tables in binary form (.tlb): the FlatBuffer of schemas/table.fbs, read in
// place. Every load runs the FlatBuffers verifier and checks what the
// verifier cannot (sorted names, config indices in range, value ranges), so
// a truncated or bit-flipped file is an error, never a crash or a wrong pick.
#pragma once

#include <memory>
#include <string>

#include "tunelock/tables/table.hpp"

namespace tunelock {

std::string table_to_binary(const Table& table);

// Takes ownership of `bytes`. Throws Error("<origin>: <problem>").
std::unique_ptr<Table> table_from_binary(std::string bytes, const std::string& origin);

// True when `bytes` start like a binary table (its file identifier).
bool looks_like_binary_table(std::string_view bytes);

}  // namespace tunelock
