// A record file (`<prefix>.rank<N>.json`).
#include "fuzz_target.hpp"
#include "tunelock/records/record_file.hpp"

void read_input(std::string_view bytes, const std::string& origin) {
  (void)tunelock::record_from_json(bytes, origin);
}
