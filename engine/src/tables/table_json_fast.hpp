// The fast path of table_from_json where simdjson is built in: it reads a
// well-formed table of the usual shape directly into an InMemoryTable, and
// defers (returns null) at anything else — a syntax error, a duplicate key,
// an unexpected type or field, a value out of range, an `equivalent` list —
// so the nlohmann reader, which every build has, decides and words every
// refusal. Both readers must agree on every file the fast path accepts
// (tests/engine/table_json_parity_tests.cpp).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tunelock/tables/table.hpp"

namespace tunelock::detail {

// True where this build has the fast path.
bool fast_table_reader_built();

// The table, or null where the file needs the full reader. `readable`:
// the bytes readable from text.data() (the text and any room after it); with
// 64 to spare the text is parsed in place instead of copied.
std::unique_ptr<InMemoryTable> fast_table_from_json(std::string_view text,
                                                    const std::string& origin,
                                                    std::size_t readable = 0);

// The header (format_version, arch, provenance, flagged configs) of `root`,
// checked, around entries already read; both readers end here.
std::unique_ptr<InMemoryTable> table_from_json_header(const nlohmann::json& root,
                                                      const std::string& origin,
                                                      InMemoryTable&& entries);

// The full (nlohmann) reader alone, for the parity tests.
std::unique_ptr<InMemoryTable> full_table_from_json(std::string_view text,
                                                    const std::string& origin);

}  // namespace tunelock::detail
