// What a table costs today: `tunelock table audit`'s answer from the audit
// files of one or more ranks (audit_file.hpp). Per pinned key: the pinned
// config's time, the fastest live candidate's, the regret in %, stale
// entries, changed bits; and the table's total regret weighted by calls.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tunelock/records/audit_file.hpp"

namespace tunelock {

struct AuditRow {
  std::string arch, kernel, key;
  std::string pinned;  // the pinned config's signature
  std::string reason;  // the rule that chose it
  // The fastest live candidate whose bits repeated on every rank that
  // checked (a racy config is no option); empty when none ran.
  std::string fastest;
  // Across ranks: the median of the ranks' medians of each config.
  std::optional<double> pinned_ms, fastest_ms;
  std::optional<double> regret_pct;  // 100 * (pinned / fastest - 1), when both ran
  bool stale = false;                // on some rank the table's entry named no live candidate
  bool bits_changed = false;         // on some rank the pinned config's bits changed
  std::vector<std::string> equivalent_differs;  // union over ranks, sorted
  std::int64_t calls = 0;                       // summed over ranks
  int ranks = 0;                                // ranks that audited the key
};

struct AuditReport {
  std::vector<AuditRow> rows;  // sorted by arch, kernel, key
  double max_regret_pct = 5;
  // Over rows with both times: sum(calls * pinned) / sum(calls * fastest) - 1,
  // in %; keys that took no call weigh as one call. Empty when no row has both.
  std::optional<double> total_regret_pct;
  // Rows whose regret exceeds max_regret_pct, and rows whose bits changed
  // (the pinned config's own, or an equivalent's against it).
  int over_regret = 0;
  int bits_problems = 0;
  // Rows whose regret is unknown: the pinned config or every candidate went
  // unmeasured (an audit gate must not pass what it did not measure).
  int unmeasured = 0;

  // 1 when any regret exceeds the limit, is unknown, or any bits changed; 0 otherwise.
  int exit_code() const { return over_regret || bits_problems || unmeasured ? 1 : 0; }
};

// REQUIRES: max_regret_pct >= 0. Two files of one rank are an Error.
AuditReport audit_report(const std::vector<AuditFile>& files, double max_regret_pct);

// A table for people: one line per key, then stale and bits sections, then the total.
std::string audit_report_text(const AuditReport& report);
nlohmann::json audit_report_json(const AuditReport& report);

}  // namespace tunelock
