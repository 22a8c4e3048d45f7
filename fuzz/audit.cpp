// An audit run's file (`<prefix>.rank<N>.audit.json`), and the report over it.
#include "fuzz_target.hpp"
#include "tunelock/records/audit_report.hpp"

void read_input(std::string_view bytes, const std::string& origin) {
  const tunelock::AuditFile file = tunelock::audit_from_json(bytes, origin);
  (void)tunelock::audit_report_text(tunelock::audit_report({file}, 5));
}
