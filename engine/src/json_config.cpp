#include "tunelock/json_config.hpp"

#include <algorithm>
#include <set>

#include "json_checks.hpp"
#include "tunelock/error.hpp"

namespace tunelock {
namespace {

using namespace json_checks;
using nlohmann::json;

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();

// Triton's defaults, used for candidates only: a recorded entry must say.
constexpr int kTritonWarps = 4;
constexpr int kTritonStages = 3;

int launch_option(const json& object, std::string_view field, const std::string& where,
                  std::int64_t min, std::optional<int> fallback) {
  const json* value = find_member(object, field);
  if (!value) {
    if (fallback) return *fallback;
    throw Error(member_path(where, field) +
                ": missing; a recorded config names num_warps and num_stages");
  }
  return static_cast<int>(require_int(*value, member_path(where, field), min, kIntMax));
}

void reject_unknown_fields(const json& value, const std::string& where, bool entry) {
  for (const auto& [field, member] : value.items()) {
    if (field != "kwargs" && field != "num_warps" && field != "num_stages" && field != "num_ctas" &&
        field != "maxnreg" && field != "ir_override" && !(entry && field == "equivalent")) {
      throw Error(member_path(where, field) +
                  ": unknown config field; known: kwargs, num_warps, num_stages, num_ctas, "
                  "maxnreg, ir_override");
    }
  }
}

std::vector<Param> kwargs_from(const json& value, const std::string& where) {
  std::vector<Param> params;
  const json* kwargs = find_member(value, "kwargs");
  if (!kwargs) return params;
  const std::string kwargs_where = member_path(where, "kwargs");
  require_object(*kwargs, kwargs_where);
  for (const auto& [name, number] : kwargs->items()) {
    if (name.empty()) throw Error(kwargs_where + ": empty parameter name");
    // Block sizes are extents; anything else (flags, counts) may be any integer.
    const std::int64_t min = is_block_param(name) ? 1 : std::numeric_limits<std::int64_t>::min();
    params.push_back(Param{name, require_int(number, member_path(kwargs_where, name), min)});
  }
  sort_params(params);  // JSON objects cannot repeat keys after parsing
  return params;
}

Config read_config(const json& value, const std::string& where, bool triton_defaults,
                   bool entry = false) {
  require_object(value, where);
  reject_unknown_fields(value, where, entry);
  Config config;
  config.params = kwargs_from(value, where);
  config.num_warps = launch_option(value, "num_warps", where, 0,
                                   triton_defaults ? std::optional(kTritonWarps) : std::nullopt);
  config.num_stages = launch_option(value, "num_stages", where, 0,
                                    triton_defaults ? std::optional(kTritonStages) : std::nullopt);
  config.num_ctas = launch_option(value, "num_ctas", where, 1, 1);
  if (const json* maxnreg = find_member(value, "maxnreg"); maxnreg && !maxnreg->is_null()) {
    config.maxnreg =
        static_cast<int>(require_int(*maxnreg, member_path(where, "maxnreg"), 1, kIntMax));
  }
  if (const json* ir = find_member(value, "ir_override"); ir && !ir->is_null()) {
    const std::string at = member_path(where, "ir_override");
    if (!ir->is_string()) throw Error(at + ": expected a string or null, got " + describe(*ir));
    config.ir_override = ir->get<std::string>();
  }
  return config;
}

// Python's json.dumps layout over nlohmann's tokens: nlohmann writes every
// scalar and key (escaping as Python does with ensure_ascii); only the
// separators differ. Objects iterate sorted, as sort_keys=True does.
std::string python_layout(const json& value) {
  if (value.is_object()) {
    std::string out = "{";
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (it != value.begin()) out += ", ";
      out += json(it.key()).dump(-1, ' ', true) + ": " + python_layout(it.value());
    }
    return out + "}";
  }
  if (value.is_array()) {
    std::string out = "[";
    for (std::size_t i = 0; i < value.size(); ++i) out += (i ? ", " : "") + python_layout(value[i]);
    return out + "]";
  }
  return value.dump(-1, ' ', true);
}

// Nesting deeper than any tunelock file needs is refused while parsing:
// printing or walking a value 65,000 levels deep overflows the stack.
constexpr std::size_t kMaxDepth = 64;

// Watches nlohmann's parse events to refuse what the parser accepts but a
// tunelock file must not hold (duplicate keys, which nlohmann resolves as
// last-wins and which would hide a conflict; deep nesting), and to name the
// JSON path of the value being parsed when the parser refuses one.
class ParseGuard {
 public:
  explicit ParseGuard(std::string root) : root_(std::move(root)) {}

  bool on_event(json::parse_event_t event, const json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (levels_.size() >= kMaxDepth)
          throw Error(path() + ": nested deeper than " + std::to_string(kMaxDepth) + " levels");
        levels_.push_back({event == json::parse_event_t::array_start, {}, 0, {}});
        break;
      case json::parse_event_t::key:
        levels_.back().key = parsed.get<std::string>();
        if (!levels_.back().seen.insert(levels_.back().key).second)
          throw Error(path() + ": duplicate key (each key may appear once in an object)");
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        levels_.pop_back();
        element_done();
        break;
      case json::parse_event_t::value:
        element_done();
        break;
    }
    return true;
  }

  // The path, or the file alone at the top level.
  std::string where() const { return levels_.empty() ? root_.substr(0, root_.size() - 2) : path(); }

  // " (in <path inside the file>)", or nothing at the top level.
  std::string inside() const {
    return levels_.empty() ? "" : " (in " + path().substr(root_.size()) + ")";
  }

  std::string path() const {
    std::string out = root_;
    for (const Level& level : levels_)
      out = level.array ? index_path(out, level.index) : member_path(out, level.key);
    return out;
  }

 private:
  struct Level {
    bool array;
    std::string key;
    std::size_t index;
    std::set<std::string> seen;  // keys of this object so far
  };
  void element_done() {
    if (!levels_.empty() && levels_.back().array) ++levels_.back().index;
  }
  std::string root_;
  std::vector<Level> levels_;
};

}  // namespace

Config config_from_json(const json& value, const std::string& where) {
  return read_config(value, where, false);
}

TableEntry table_entry_from_json(const json& value, const std::string& where) {
  TableEntry entry{read_config(value, where, false, /*entry=*/true), {}};
  if (const json* equivalent = find_member(value, "equivalent")) {
    const std::string at = member_path(where, "equivalent");
    require_array(*equivalent, at);
    for (std::size_t i = 0; i < equivalent->size(); ++i) {
      Config config = read_config((*equivalent)[i], index_path(at, i), false);
      if (config == entry.config ||
          std::find(entry.equivalent.begin(), entry.equivalent.end(), config) !=
              entry.equivalent.end())
        throw Error(index_path(at, i) + ": repeats " + signature(config) +
                    " (list each equivalent config once, never the entry's own)");
      entry.equivalent.push_back(std::move(config));
    }
  }
  return entry;
}

Config candidate_from_json(const json& value, const std::string& where) {
  return read_config(value, where, true);
}

json config_to_json(const Config& config) {
  json kwargs = json::object();
  for (const Param& p : config.params) kwargs[p.name] = p.value;
  return {{"kwargs", std::move(kwargs)},
          {"num_warps", config.num_warps},
          {"num_stages", config.num_stages},
          {"num_ctas", config.num_ctas},
          {"maxnreg", config.maxnreg ? json(*config.maxnreg) : json(nullptr)},
          {"ir_override", config.ir_override ? json(*config.ir_override) : json(nullptr)}};
}

json table_entry_to_json(const TableEntry& entry) {
  json out = config_to_json(entry.config);
  if (!entry.equivalent.empty()) {  // absent: a file Megatron wrote reads back unchanged
    json list = json::array();
    for (const Config& c : entry.equivalent) list.push_back(config_to_json(c));
    out["equivalent"] = std::move(list);
  }
  return out;
}

std::string canonical_config_text(const Config& config) {
  return python_layout(config_to_json(config));
}

json parse_json(std::string_view text, const std::string& origin) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw Error(origin + ": empty file, expected JSON");
  ParseGuard guard(origin + ": ");
  try {
    return json::parse(text, [&](int, json::parse_event_t event, json& value) {
      return guard.on_event(event, value);
    });
  } catch (const json::parse_error& e) {
    // The lexer refuses ill-formed UTF-8 as a parse error; say so.
    const bool utf8 = std::string_view(e.what()).find("UTF-8") != std::string_view::npos;
    throw Error(origin + ": not valid JSON at byte " + std::to_string(e.byte) +
                (utf8 ? ": invalid UTF-8" : "") + guard.inside());
  } catch (const json::out_of_range&) {
    // nlohmann refuses numbers beyond double (1e400) as out_of_range.
    throw Error(guard.where() + ": number out of range (beyond a 64-bit float)");
  } catch (const json::exception& e) {
    throw Error(origin + ": not valid JSON (" + std::string(e.what()) + ")");
  }
}

}  // namespace tunelock
