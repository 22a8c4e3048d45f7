// A JSON table, then every lookup and its canonical JSON form. Where the
// build has the fast (simdjson) reader, every table it accepts must come out
// of the full reader identical: a difference aborts, and libFuzzer reports it.
#include <cstdlib>

#include "fuzz_target.hpp"
#include "tables/table_json_fast.hpp"
#include "tunelock/tables/table_json.hpp"

void read_input(std::string_view bytes, const std::string& origin) {
  if (const auto fast = tunelock::detail::fast_table_from_json(bytes, origin)) {
    try {
      const auto full = tunelock::detail::full_table_from_json(bytes, origin);
      if (tunelock::table_to_json(*fast) != tunelock::table_to_json(*full)) std::abort();
    } catch (const tunelock::Error&) {
      std::abort();  // the fast reader accepted what the full reader refuses
    }
  }
  const auto table = tunelock::table_from_json(bytes, origin);
  for (const std::string& kernel : table->kernels())
    for (const std::string& key : table->keys(kernel)) (void)table->entry(kernel, key);
  (void)tunelock::table_to_json(*table);
}
