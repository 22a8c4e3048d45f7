// A timing sidecar in either form (told apart as the reader does), then
// both output forms, as `tunelock timings convert` writes them.
#include "fuzz_target.hpp"
#include "tunelock/records/timings_sidecar.hpp"

void read_input(std::string_view bytes, const std::string& origin) {
  tunelock::RecordFile record;
  tunelock::add_timings(record, bytes, origin);
  (void)tunelock::timings_to_json(record);
  (void)tunelock::timings_to_binary(record);
}
