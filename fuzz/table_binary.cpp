// A binary table (.tlb), then every lookup and its JSON form (which fails
// on text the reader should have refused).
#include "tunelock/tables/table_binary.hpp"
#include "fuzz_target.hpp"
#include "tunelock/tables/table_json.hpp"

void read_input(std::string_view bytes, const std::string& origin) {
  const auto table = tunelock::table_from_binary(std::string(bytes), origin);
  for (const std::string& kernel : table->kernels())
    for (const std::string& key : table->keys(kernel)) (void)table->entry(kernel, key);
  (void)tunelock::table_to_json(*table);
}
