// A JSON table, then every lookup and its canonical JSON form.
#include "tunelock/table_json.hpp"
#include "fuzz_target.hpp"

void read_input(std::string_view bytes, const std::string& origin) {
  const auto table = tunelock::table_from_json(bytes, origin);
  for (const std::string& kernel : table->kernels())
    for (const std::string& key : table->keys(kernel)) (void)table->entry(kernel, key);
  (void)tunelock::table_to_json(*table);
}
