#include "tables/table_entry_json.hpp"

#include <algorithm>
#include <utility>

#include "io/json_checks.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/model/config_json.hpp"

namespace tunelock {

using namespace json_checks;
using nlohmann::json;

TableEntry table_entry_from_json(const json& value, const std::string& where) {
  TableEntry entry{config_from_json(value, where, {"equivalent", "ties", "faster_equivalents"}),
                   {}};
  // `equivalent` and `ties`: lists of configs, each once, never the entry's own.
  for (const auto& [field, list] :
       {std::pair("equivalent", &entry.equivalent), std::pair("ties", &entry.ties)}) {
    const json* configs = find_member(value, field);
    if (!configs) continue;
    const std::string at = member_path(where, field);
    require_array(*configs, at);
    for (std::size_t i = 0; i < configs->size(); ++i) {
      Config config = config_from_json((*configs)[i], index_path(at, i));
      if (config == entry.config || std::find(list->begin(), list->end(), config) != list->end())
        throw Error(index_path(at, i) + ": repeats " + signature(config) + " (list each " +
                    (std::string(field) == "ties" ? "tied" : "equivalent") +
                    " config once, never the entry's own)");
      list->push_back(std::move(config));
    }
  }
  // How many of the equivalents, fastest first, the record timed faster
  // than the entry's own config: at most all of them.
  // Beside no equivalents it says nothing, and is not kept.
  if (const json* faster = find_member(value, "faster_equivalents")) {
    const auto count =
        static_cast<std::size_t>(require_int(*faster, member_path(where, "faster_equivalents"), 0,
                                             static_cast<std::int64_t>(entry.equivalent.size())));
    if (!entry.equivalent.empty()) entry.faster_equivalents = count;
  }
  return entry;
}

json table_entry_to_json(const TableEntry& entry) {
  json out = config_to_json(entry.config);
  if (!entry.equivalent.empty()) {  // absent: a file Megatron wrote reads back unchanged
    json list = json::array();
    for (const Config& c : entry.equivalent) list.push_back(config_to_json(c));
    out["equivalent"] = std::move(list);
    if (entry.faster_equivalents) out["faster_equivalents"] = *entry.faster_equivalents;
  }
  if (!entry.ties.empty()) {
    json list = json::array();
    for (const Config& c : entry.ties) list.push_back(config_to_json(c));
    out["ties"] = std::move(list);
  }
  return out;
}

}  // namespace tunelock
