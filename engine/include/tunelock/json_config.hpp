// Configs in Megatron's JSON layout: {"kwargs": {...}, "num_warps": N,
// "num_stages": N, "num_ctas": N, "maxnreg": N|null, "ir_override": S|null}.
// Readers accept every field Megatron writes (older files leave the last
// three out) and check every type and range, naming the JSON path of what is
// wrong; writers always write the full form, so files round-trip.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tunelock/config.hpp"
#include "tunelock/table.hpp"

namespace tunelock {

// A table or record entry. num_warps and num_stages are required (an entry
// without them is malformed, never guessed); a missing num_ctas means 1,
// maxnreg unset, ir_override null, exactly as Megatron fills them.
// `where` prefixes error messages, e.g. "t.json: kernels.k[\"*\"]".
Config config_from_json(const nlohmann::json& value, const std::string& where);
TableEntry table_entry_from_json(const nlohmann::json& value, const std::string& where);

// A candidate from a manifest: like Triton's Config, a missing num_warps or
// num_stages takes Triton's default (4 and 3).
Config candidate_from_json(const nlohmann::json& value, const std::string& where);

// The full form, every field present (null where unset).
nlohmann::json config_to_json(const Config& config);
nlohmann::json table_entry_to_json(const TableEntry& entry);

// The full form as Python's `json.dumps(config, sort_keys=True)` writes it
// (", " and ": " separators, ASCII escapes): the text Megatron's merge
// compares to break ties, so both tools pick the same winner.
std::string canonical_config_text(const Config& config);

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
