// A candidate manifest (`tunelock choose --candidates`).
#include "tunelock/model/candidates.hpp"
#include "fuzz_target.hpp"

void read_input(std::string_view bytes, const std::string& origin) {
  (void)tunelock::candidates_from_json(bytes, origin);
}
