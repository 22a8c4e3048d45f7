// A watched run's launch log, JSON or binary, and the comparison over it.
#include "fuzz_target.hpp"
#include "tunelock/logs/launch_compare.hpp"

void read_input(std::string_view bytes, const std::string& origin) {
  const tunelock::LaunchLog log = tunelock::launch_log_from_bytes(bytes, origin);
  tunelock::LaunchLog shorter = log;
  if (!shorter.steps.empty()) shorter.steps.pop_back();
  (void)tunelock::launch_comparisons_to_text(tunelock::compare_launch_logs({log, shorter}));
}
