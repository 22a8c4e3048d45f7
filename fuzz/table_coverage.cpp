// `tunelock table coverage TABLE LOGS...`: the input is a table (JSON or
// .tlb), then up to three choice logs (JSON or .tlcl), cut at separator
// lines (split_input.hpp); the report in both forms, as the command
// prints them (the JSON one dumped, so text it could not print fails).
#include "tunelock/logs/table_coverage.hpp"
#include "fuzz_target.hpp"
#include "split_input.hpp"
#include "tunelock/tables/table_files.hpp"

void read_input(std::string_view bytes, const std::string& origin) {
  using namespace tunelock;
  const std::vector<std::string> parts = fuzzing::split_parts(bytes, 4);
  if (parts.size() < 2) return;  // a table and no log: the command needs one
  const auto table = table_from_bytes(parts[0], origin + ".table");
  std::vector<ChoiceLogFile> logs;
  std::vector<std::string> origins;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    origins.push_back(origin + ".rank" + std::to_string(i - 1) + ".json");
    logs.push_back(choice_log_from_bytes(parts[i], origins.back()));
  }
  const CoverageReport report = table_coverage(*table, logs, origins);
  (void)coverage_text(report);
  (void)coverage_json(report).dump(1);
}
