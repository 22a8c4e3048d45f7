#include "tunelock/json_config.hpp"

#include <algorithm>

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

// The integer, or require_int's error naming its path: a table holds
// millions of these, so the path is only spelled out for a bad one.
std::int64_t int_at(const json& value, const std::string& where, std::string_view field,
                    std::int64_t min, std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
  if (value.is_number_integer() && !value.is_number_unsigned()) {
    const std::int64_t number = value.get<std::int64_t>();
    if (number >= min && number <= max) return number;
  }
  return require_int(value, member_path(where, field), min, max);
}

int launch_option(const json& object, std::string_view field, const std::string& where,
                  std::int64_t min, std::optional<int> fallback) {
  const json* value = find_member(object, field);
  if (!value) {
    if (fallback) return *fallback;
    throw Error(member_path(where, field) +
                ": missing; a recorded config names num_warps and num_stages");
  }
  return static_cast<int>(int_at(*value, where, field, min, kIntMax));
}

void reject_unknown_fields(const json& value, const std::string& where, bool entry) {
  for (const auto& [field, member] : value.get_ref<const json::object_t&>()) {
    if (field != "kwargs" && field != "num_warps" && field != "num_stages" && field != "num_ctas" &&
        field != "maxnreg" && field != "ir_override" &&
        !(entry && (field == "equivalent" || field == "ties"))) {
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
  if (!kwargs->is_object()) require_object(*kwargs, member_path(where, "kwargs"));
  params.reserve(kwargs->size());
  for (const auto& [name, number] : kwargs->get_ref<const json::object_t&>()) {
    if (name.empty()) throw Error(member_path(where, "kwargs") + ": empty parameter name");
    // Block sizes are extents; anything else (flags, counts) may be any integer.
    const std::int64_t min = is_block_param(name) ? 1 : std::numeric_limits<std::int64_t>::min();
    const bool fine = number.is_number_integer() && !number.is_number_unsigned() &&
                      number.get<std::int64_t>() >= min;
    params.push_back(Param{
        name, fine ? number.get<std::int64_t>()
                   : require_int(number, member_path(member_path(where, "kwargs"), name), min)});
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
    config.maxnreg = static_cast<int>(int_at(*maxnreg, where, "maxnreg", 1, kIntMax));
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

// Builds the DOM from nlohmann's SAX events, refusing what the parser accepts
// but a tunelock file must not hold (duplicate keys, which nlohmann resolves
// as last-wins and which would hide a conflict; deep nesting) and naming the
// JSON path of the value being parsed when the parser refuses one. Each event
// costs O(log keys-in-object): the parse callback this replaces rescanned a
// parent object at every close, so one kernel with 20,000 keys took seconds.
// A sink may take finished members as they complete (a table's entries), so
// the whole document never sits in memory at once.
class GuardedDomBuilder {
 public:
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  GuardedDomBuilder(json& root, std::string origin, const JsonMemberSink& sink)
      : root_(root), origin_(std::move(origin)), sink_(sink) {}

  bool null() { return add(json(nullptr)); }
  bool boolean(bool v) { return add(json(v)); }
  bool number_integer(number_integer_t v) { return add(json(v)); }
  bool number_unsigned(number_unsigned_t v) { return add(json(v)); }
  bool number_float(number_float_t v, const string_t&) { return add(json(v)); }
  bool string(string_t& v) { return add(json(std::move(v))); }
  bool binary(binary_t& v) { return add(json::binary(std::move(v))); }

  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool key(string_t& k) {
    Level& level = levels_.back();
    // One lookup: the slot is made now and filled when the value is read; a
    // member a sink took stays as a discarded slot, so a repeat is still seen.
    // Writers sort keys, so the end is the likely place: O(1) with the hint.
    auto& members = level.value->get_ref<json::object_t&>();
    const std::size_t before = members.size();
    const auto slot = members.try_emplace(members.end(), std::move(k));
    level.key = &slot->first;
    level.slot = &slot->second;
    if (members.size() == before)
      throw Error(path() + ": duplicate key (each key may appear once in an object)");
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool parse_error(std::size_t byte, const std::string&, const nlohmann::detail::exception& e) {
    // nlohmann refuses numbers beyond double (1e400) as out_of_range (406).
    if (e.id == 406) throw Error(where() + ": number out of range (beyond a 64-bit float)");
    // The lexer refuses ill-formed UTF-8 as a parse error; say so.
    const bool utf8 = std::string_view(e.what()).find("UTF-8") != std::string_view::npos;
    throw Error(origin_ + ": not valid JSON at byte " + std::to_string(byte) +
                (utf8 ? ": invalid UTF-8" : "") + inside());
  }

 private:
  struct Level {
    json* value;                  // the open object or array, inside its parent
    const std::string* key = {};  // the member being read, in an object
    json* slot = {};              // where that member's value goes
    std::size_t index = 0;        // the element being read, in an array
    bool took = false;            // a sink took members: drop their slots at the close
  };

  // Places `value` in the open container (or at the root) and returns it there.
  json* place(json&& value) {
    if (levels_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Level& level = levels_.back();
    if (level.value->is_array()) {
      level.value->push_back(std::move(value));
      return &level.value->back();
    }
    *level.slot = std::move(value);
    return level.slot;
  }

  bool add(json&& value) {
    json* placed = place(std::move(value));
    finished(placed);
    return true;
  }

  bool open(json&& container) {
    if (levels_.size() >= kMaxDepth)
      throw Error(path() + ": nested deeper than " + std::to_string(kMaxDepth) + " levels");
    json* placed = place(std::move(container));
    levels_.push_back({placed});
    if (placed->is_array()) ++arrays_open_;
    return true;
  }

  bool close() {
    json* done = levels_.back().value;
    if (done->is_array()) --arrays_open_;
    if (levels_.back().took) {
      auto& members = done->get_ref<json::object_t&>();
      std::erase_if(members, [](const auto& member) { return member.second.is_discarded(); });
    }
    levels_.pop_back();
    finished(done);
    return true;
  }

  // A value is complete: offer it to the sink (members of objects only,
  // every ancestor an object), then step past it.
  void finished(json* value) {
    if (levels_.empty()) return;
    Level& parent = levels_.back();
    if (parent.value->is_array()) {
      ++parent.index;
      return;
    }
    if (!sink_ || arrays_open_ > 0) return;
    keys_.clear();
    for (const Level& level : levels_) keys_.push_back(*level.key);
    if (sink_(keys_, *value)) {
      *value = json(json::value_t::discarded);
      parent.took = true;
    }
  }

  // The path, or the file alone at the top level.
  std::string where() const { return levels_.empty() ? origin_ : path(); }

  // " (in <path inside the file>)", or nothing at the top level.
  std::string inside() const {
    const std::string inner = path().substr(origin_.size() + 2);
    return inner.empty() ? "" : " (in " + inner + ")";
  }

  std::string path() const {
    std::string out = origin_ + ": ";
    for (const Level& level : levels_)
      if (level.value->is_array())
        out = index_path(out, level.index);
      else if (level.key)  // null in an object whose first key is not read yet
        out = member_path(out, *level.key);
    return out;
  }

  json& root_;
  std::string origin_;
  const JsonMemberSink& sink_;
  std::vector<Level> levels_;
  std::size_t arrays_open_ = 0;
  std::vector<std::string_view> keys_;  // reused for each offer to the sink
};

}  // namespace

Config config_from_json(const json& value, const std::string& where) {
  return read_config(value, where, false);
}

TableEntry table_entry_from_json(const json& value, const std::string& where) {
  TableEntry entry{read_config(value, where, false, /*entry=*/true), {}};
  // `equivalent` and `ties`: lists of configs, each once, never the entry's own.
  for (const auto& [field, list] :
       {std::pair("equivalent", &entry.equivalent), std::pair("ties", &entry.ties)}) {
    const json* configs = find_member(value, field);
    if (!configs) continue;
    const std::string at = member_path(where, field);
    require_array(*configs, at);
    for (std::size_t i = 0; i < configs->size(); ++i) {
      Config config = read_config((*configs)[i], index_path(at, i), false);
      if (config == entry.config || std::find(list->begin(), list->end(), config) != list->end())
        throw Error(index_path(at, i) + ": repeats " + signature(config) + " (list each " +
                    (std::string(field) == "ties" ? "tied" : "equivalent") +
                    " config once, never the entry's own)");
      list->push_back(std::move(config));
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
  if (!entry.ties.empty()) {
    json list = json::array();
    for (const Config& c : entry.ties) list.push_back(config_to_json(c));
    out["ties"] = std::move(list);
  }
  return out;
}

std::string canonical_config_text(const Config& config) {
  return python_layout(config_to_json(config));
}

json parse_json(std::string_view text, const std::string& origin, const JsonMemberSink& sink) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw Error(origin + ": empty file, expected JSON");
  json root;
  GuardedDomBuilder builder(root, origin, sink);
  try {
    json::sax_parse(text, &builder);
  } catch (const json::exception& e) {
    throw Error(origin + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  return root;
}

}  // namespace tunelock
