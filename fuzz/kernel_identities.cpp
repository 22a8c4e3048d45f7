// Kernel identities as `tunelock merge` meets them: the input is a record
// file, then two timing sidecars (JSON or .tlrt), cut at separator lines
// (split_input.hpp); each sidecar joins its own copy of the record, as
// two ranks' files. Merge keeps one identity per kernel and names the
// records that differ; the table it writes must give back the same
// identities in both forms, or the fuzzer aborts.
#include <cstdlib>

#include "fuzz_target.hpp"
#include "split_input.hpp"
#include "tunelock/records/merge.hpp"
#include "tunelock/records/timings_sidecar.hpp"
#include "tunelock/tables/table_binary.hpp"
#include "tunelock/tables/table_json.hpp"

void read_input(std::string_view bytes, const std::string& origin) {
  using namespace tunelock;
  const std::vector<std::string> parts = fuzzing::split_parts(bytes, 3);
  std::vector<RecordFile> records;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string file = origin + ".rank" + std::to_string(i - 1);
    // As load_record_file reads a record and the sidecar beside it: the
    // rank from the name, unless the sidecar says its own.
    RecordFile& record = records.emplace_back(record_from_json(parts[0], file + ".json"));
    record.rank = static_cast<int>(i - 1);
    add_timings(record, parts[i], file + ".timings.json");
  }
  if (records.empty()) return;
  const MergeResult merged = merge_records(records, "", "");
  for (const std::string& line : merged.identity_conflicts) (void)line.size();
  const std::string json = table_to_json(*merged.table);
  const auto from_json = table_from_json(json, "merged.json");
  const auto from_binary = table_from_binary(table_to_binary(*merged.table), "merged.tlb");
  if (from_json->identities() != merged.table->identities() ||
      from_binary->identities() != merged.table->identities() ||
      table_to_json(*from_binary) != json)
    std::abort();
}
