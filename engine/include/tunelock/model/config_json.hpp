// Configs in Megatron's JSON layout: {"kwargs": {...}, "num_warps": N,
// "num_stages": N, "num_ctas": N, "maxnreg": N|null, "ir_override": S|null},
// plus "algorithm": S for a chooser among kernels (Inductor), which Megatron
// does not write. Readers accept every field Megatron writes (older files
// leave the last three out) and check every type and range, naming the JSON
// path of what is wrong; writers always write the full form (the algorithm
// only when set), so files round-trip.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tunelock/model/config.hpp"

namespace tunelock {

// A recorded config. num_warps and num_stages are required (an entry
// without them is malformed, never guessed); a missing num_ctas means 1,
// maxnreg unset, ir_override null, exactly as Megatron fills them.
// `where` prefixes error messages, e.g. "t.json: kernels.k[\"*\"]";
// `also_allowed` names fields beside the config's own that the caller
// reads itself (a table entry's "equivalent").
Config config_from_json(const nlohmann::json& value, const std::string& where,
                        std::initializer_list<std::string_view> also_allowed = {});

// A candidate from a manifest: like Triton's Config, a missing num_warps or
// num_stages takes Triton's default (4 and 3).
Config candidate_from_json(const nlohmann::json& value, const std::string& where);

// The full form, every field present (null where unset).
nlohmann::json config_to_json(const Config& config);

// The full form as Python's `json.dumps(config, sort_keys=True)` writes it
// (", " and ": " separators, ASCII escapes): the text Megatron's merge
// compares to break ties, so both tools pick the same winner.
std::string canonical_config_text(const Config& config);

}  // namespace tunelock
