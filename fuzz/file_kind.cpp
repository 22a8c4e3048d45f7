// Any bytes under each name a face may see them under: detect_file_kind
// never throws, and the kind it names is read by that kind's reader, as the
// page does with a dropped file.
#include "tunelock/io/file_kind.hpp"
#include "fuzz_target.hpp"
#include "tunelock/foreign/moe_config_file.hpp"
#include "tunelock/logs/choice_log_file.hpp"
#include "tunelock/logs/launch_log.hpp"
#include "tunelock/model/candidates.hpp"
#include "tunelock/records/audit_file.hpp"
#include "tunelock/records/record_file.hpp"
#include "tunelock/records/timings_sidecar.hpp"
#include "tunelock/tables/table_files.hpp"

namespace {

void read_as_detected(std::string_view bytes, const std::string& name) {
  using tunelock::FileKind;
  const tunelock::DetectedFile file = tunelock::detect_file_kind(name, bytes);
  try {
    switch (file.kind) {
      case FileKind::table:
        (void)tunelock::table_from_bytes(std::string(bytes), name);
        break;
      case FileKind::manifest:
        (void)tunelock::candidates_from_json(bytes, name);
        break;
      case FileKind::record:
        (void)tunelock::record_from_json(bytes, name);
        break;
      case FileKind::timings: {
        tunelock::RecordFile record;
        tunelock::add_timings(record, bytes, name);
        break;
      }
      case FileKind::choice_log:
        (void)tunelock::choice_log_from_bytes(bytes, name);
        break;
      case FileKind::audit:
        (void)tunelock::audit_from_json(bytes, name);
        break;
      case FileKind::launches:
        (void)tunelock::launch_log_from_bytes(bytes, name);
        break;
      case FileKind::moe_configs:
        (void)tunelock::moe_config_file_from_json(bytes, "E=8,N=64,device_name=fuzz.json");
        break;
      case FileKind::unknown:
        if (file.problem.empty()) __builtin_trap();  // an unknown file always says why
        break;
    }
  } catch (const tunelock::Error&) {
  }
}

}  // namespace

void read_input(std::string_view bytes, const std::string&) {
  for (const char* name : {"f.json", "f.tlb", "f.rank0.timings.json", "f.tlrt", "f.tlcl",
                           "f.rank0.audit.json", "f.rank0.launches.tlln"})
    read_as_detected(bytes, name);
}
