// Reading JSON in time linear in its length: the one parser every reader
// of a tunelock file uses (tables, records, choice logs, launch logs, audit
// files, manifests), with duplicate-key and depth checks and errors naming
// the byte or JSON path.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tunelock {

// Offered each finished member of an object whose ancestors are all objects,
// with the keys from the root down to it; returning true takes the member out
// of the document (the sink keeps what it needs), so a large file's entries
// are read one at a time instead of all held as JSON first.
using JsonMemberSink =
    std::function<bool(std::span<const std::string_view> keys, nlohmann::json& value)>;

// Parses JSON text in time linear in its length, turning any refusal into
// Error("<origin>: ..."): a syntax error names the byte, a number out of
// range (1e400), a duplicate key or nesting beyond 64 levels its JSON path.
nlohmann::json parse_json(std::string_view text, const std::string& origin,
                          const JsonMemberSink& sink = {});

}  // namespace tunelock
