// A choice log in either form, then both output forms.
#include "fuzz_target.hpp"
#include "tunelock/logs/choice_log_file.hpp"

void read_input(std::string_view bytes, const std::string& origin) {
  const tunelock::ChoiceLogFile log = tunelock::choice_log_from_bytes(bytes, origin);
  (void)tunelock::choice_log_to_json(log);
  (void)tunelock::choice_log_to_binary(log);
}
