#include "tunelock/io/json_reader.hpp"

#include <algorithm>

#include "io/json_checks.hpp"
#include "tunelock/base/error.hpp"

namespace tunelock {
namespace {

using namespace json_checks;
using nlohmann::json;

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
