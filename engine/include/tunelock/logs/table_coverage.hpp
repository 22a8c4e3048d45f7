// A must-hit gate for CI: which keys a run needed that a table does not
// answer by an entry. Read from the run's choice-log files, offline, so a
// gate needs no GPU: `tunelock table coverage TABLE LOGS...`, beside
// TUNELOCK_ON_MISS=error at run time.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "tunelock/logs/choice_log_file.hpp"
#include "tunelock/tables/table.hpp"

namespace tunelock {

// Why a needed key is not answered by the table as the run found it.
enum class CoverageGap {
  fallback,  // no entry: the run fell back to block sizes or the cheapest config
  stale,     // an entry, naming no config the run could launch: it fell back too
  identity,  // answered, but the kernel's code is not what the entry was timed on
};
std::string_view to_string(CoverageGap gap);

struct CoverageMiss {
  std::string kernel;  // qualified, as logged
  std::string key;
  CoverageGap gap = CoverageGap::fallback;
  std::string launched;        // what the run launched (the logged signature)
  std::string entry;           // stale: what the table's entry names
  std::string table_identity;  // identity: the table's and the run's code
  std::string run_identity;
  std::vector<int> ranks;  // the logs (ranks) that needed it, sorted
};

struct CoverageReport {
  std::string arch;
  std::size_t logs = 0;
  std::size_t needed = 0;            // distinct (kernel, key) the logs chose for the table's arch
  std::size_t answered = 0;          // of them, answered by an entry on the kernel's own code
  std::vector<CoverageMiss> misses;  // sorted by kernel, then key

  int exit_code() const { return misses.empty() ? 0 : 1; }
};

// Every choice the logs made for the table's arch, told against the table
// as selection reads it (the qualified name, then the bare one; the exact
// key, then "*"). A pinned choice the entry does not name is stale; a timed
// choice (record, auto) only needs an entry. Kernels with one candidate
// (logged under "*") and consensus switches need none. Throws Error when
// no log holds a choice for the table's arch (a table for another arch).
CoverageReport table_coverage(const Table& table, const std::vector<ChoiceLogFile>& logs,
                              const std::vector<std::string>& origins);

// For people: a summary line, then the misses per kernel.
std::string coverage_text(const CoverageReport& report);
nlohmann::json coverage_json(const CoverageReport& report);

}  // namespace tunelock
