// Tables in Megatron's JSON layout:
//   {"arch": "sm90", "source": "...", "packages": {}, "triton": "",
//    "kernels": {kernel: {key: config}}}
// so tables recorded by Megatron load as they are.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "tunelock/tables/table.hpp"

namespace tunelock {

// Throws Error("<origin>: <json path>: <problem>") on anything malformed.
std::unique_ptr<InMemoryTable> table_from_json(std::string_view text, const std::string& origin);

// Canonical text: sorted keys, one-space indentation, trailing newline, and
// tunelock's provenance and format_version beside Megatron's fields. The
// same table always gives the same bytes, whichever form it was read from.
std::string table_to_json(const Table& table);

}  // namespace tunelock
