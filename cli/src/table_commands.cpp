// `tunelock table show|convert|validate|diff|audit|coverage|invariance`:
// looking at, converting and checking tables without a GPU, what an audit
// run says they cost, which keys a run needed that they do not answer, and
// whether their rows are proven batch-invariant.

#include <algorithm>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "table_files.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/logs/choice_log_file.hpp"
#include "tunelock/logs/table_coverage.hpp"
#include "tunelock/model/candidates.hpp"
#include "tunelock/records/audit_report.hpp"
#include "tunelock/tables/table_contradictions.hpp"
#include "tunelock/tables/table_diff.hpp"
#include "tunelock/tables/table_invariance.hpp"

namespace tunelock::cli {
namespace {

struct Paths {
  std::string first, second, candidates;
  bool json = false;
  std::vector<std::string> audits;  // audit files, or the choice logs of `coverage`
  double max_regret_pct = 5;
};

int show(const Paths& paths, Streams& streams) {
  const auto table = load_table_file(paths.first);
  if (paths.json) {
    streams.out << table_to_json(*table);
    return kExitOk;
  }
  // Labels padded to one column: "arch:     sm90".
  auto line = [&](const std::string& label, const auto& value) {
    streams.out << label << ":" << std::string(label.size() < 9 ? 9 - label.size() : 1, ' ')
                << value << "\n";
  };
  line("arch", table->arch());
  for (const auto& [label, value] : provenance_lines(table->provenance())) line(label, value);
  line("entries", table->entry_count());
  for (const std::string& kernel : table->kernels()) {
    for (const std::string& key : table->keys(kernel))
      streams.out << kernel << " [" << key << "] -> " << describe(*table->entry(kernel, key))
                  << "\n";
  }
  for (const auto& [kernel, signatures] : table->nondeterministic())
    for (const std::string& sig : signatures)
      streams.out << "nondeterministic: " << kernel << " " << sig
                  << " (skipped by the fallback rules)\n";
  for (const auto& [kernel, identity] : table->identities())
    streams.out << "identity: " << kernel << " " << identity
                << " (the code its entries were timed on)\n";
  for (const std::string& held : invariance_lines(*table))
    streams.out << "invariance: " << held << "\n";
  return kExitOk;
}

// The keys the runs' choice logs needed that the table does not answer by
// an entry on the kernel's own code: exit 1 when there is any, for CI gates.
int coverage(const Paths& paths, Streams& streams) {
  const auto table = load_table_file(paths.first);
  std::vector<ChoiceLogFile> logs;
  for (const std::string& path : paths.audits)
    logs.push_back(choice_log_from_bytes(read_file(path), path));
  const CoverageReport report = table_coverage(*table, logs, paths.audits);
  if (paths.json)
    streams.out << coverage_json(report).dump(1) << "\n";
  else
    streams.out << coverage_text(report);
  return report.exit_code() ? kExitDifferent : kExitOk;
}

int convert(const Paths& paths, Streams& streams) {
  const auto table = load_table_file(paths.first);
  write_table(*table, paths.second);
  streams.out << "wrote " << paths.second << " (" << table->entry_count() << " entries)\n";
  return kExitOk;
}

// Entries whose config none of the kernel's live candidates has: a pinned
// run would skip them. Kernels the manifest does not list are only noted.
// Entries that contradict the table's own nondeterministic lists are named
// too (exit 1): a pinned run skips them.
int validate(const Paths& paths, Streams& streams) {
  const auto table = load_table_file(paths.first);
  const std::vector<Contradiction> contradictions = table_contradictions(*table);
  streams.out << paths.first << ": " << (contradictions.empty() ? "valid " : "readable ")
              << table->arch() << " table, " << table->entry_count() << " entries\n";
  for (const Contradiction& c : contradictions)
    streams.out << "contradiction: " << paths.first << ": " << c.text()
                << (c.role == "pinned" ? " (a pinned run skips the entry)"
                                       : " (never launched in the entry's place)")
                << "\n";
  if (!contradictions.empty())
    streams.out << contradictions.size()
                << " contradiction(s): re-merge the table from its "
                   "records, or remove one of the two\n";
  if (paths.candidates.empty()) return contradictions.empty() ? kExitOk : kExitDifferent;
  const CandidateManifest manifest =
      candidates_from_json(read_file(paths.candidates), paths.candidates);
  std::size_t stale = 0;
  for (const std::string& kernel : table->kernels()) {
    std::vector<const KernelCandidates*>
        lists;  // the qualified name, or every kernel of that bare name
    for (const auto& [qualified, list] : manifest.kernels) {
      if (manifest.single_kernel || table_name_applies(kernel, KernelId::parse(qualified)))
        lists.push_back(&list);
    }
    if (lists.empty()) {
      streams.out << "note: kernel " << kernel << " is not in " << paths.candidates << "\n";
      continue;
    }
    for (const std::string& key : table->keys(kernel)) {
      const bool live = std::any_of(lists.begin(), lists.end(), [&](const KernelCandidates* list) {
        return table->match(kernel, key, list->configs).index.has_value();
      });
      if (live) continue;
      ++stale;
      streams.out << "stale: " << kernel << " [" << key << "] -> "
                  << signature(table->entry(kernel, key)->config) << " is not a live candidate\n";
    }
  }
  streams.out << stale << " stale entr" << (stale == 1 ? "y" : "ies") << "\n";
  return stale || !contradictions.empty() ? kExitDifferent : kExitOk;
}

// A changed entry that launches the same config says so: before equals
// after, and only what was measured around it moved.
std::string same_config_note(const EntryChange& change) {
  const std::vector<std::string_view> fields = changed_fields(change);
  if (std::find(fields.begin(), fields.end(), "config") != fields.end()) return {};
  std::string list;
  for (std::string_view f : fields) list += (list.empty() ? "" : ", ") + std::string(f);
  return "  (same config, launches alike; only " + list + " changed)";
}

int diff(const Paths& paths, Streams& streams) {
  const TableDiff diff = diff_tables(*load_table_file(paths.first), *load_table_file(paths.second));
  if (paths.json) {
    streams.out << table_diff_to_json(diff).dump(1) << "\n";
    return diff.empty() ? kExitOk : kExitDifferent;
  }
  if (diff.arch) streams.out << "arch: " << diff.arch->first << " -> " << diff.arch->second << "\n";
  for (const EntryChange& c : diff.changes) {
    const std::string where = c.kernel + " [" + c.key + "] ";
    if (!c.before)
      streams.out << "added:   " << where << describe(*c.after) << "\n";
    else if (!c.after)
      streams.out << "removed: " << where << describe(*c.before) << "\n";
    else
      streams.out << "changed: " << where << describe(*c.before) << " -> " << describe(*c.after)
                  << same_config_note(c) << "\n";
  }
  for (const FlagChange& f : diff.flags) {
    streams.out << "nondeterministic: " << f.kernel;
    for (const std::string& sig : f.added) streams.out << " +" << sig;
    for (const std::string& sig : f.removed) streams.out << " -" << sig;
    if (!f.pinned_now_flagged.empty()) {
      streams.out << "  (the second table skips what the first pins at";
      for (const std::string& key : f.pinned_now_flagged) streams.out << " [" << key << "]";
      streams.out << ": they launch different configs)";
    }
    streams.out << "\n";
  }
  for (const IdentityChange& i : diff.identities)
    streams.out << "identity: " << i.kernel << " " << (i.before.empty() ? "(none)" : i.before)
                << " -> " << (i.after.empty() ? "(none)" : i.after) << "\n";
  const std::size_t differences = diff.differences();
  streams.out << (differences ? std::to_string(differences) + " difference(s)\n"
                              : "identical entries\n");
  return differences ? kExitDifferent : kExitOk;
}

// What a table costs today, from audit runs' files; exit 1 over the limit.
int audit(const Paths& paths, Streams& streams) {
  std::vector<AuditFile> files;
  for (const std::string& path : paths.audits) files.push_back(load_audit_file(path));
  const AuditReport report = audit_report(files, paths.max_regret_pct);
  if (paths.json)
    streams.out << audit_report_json(report).dump(1) << "\n";
  else
    streams.out << audit_report_text(report);
  return report.exit_code() ? kExitDifferent : kExitOk;
}

// The batch-invariance gate: per kernel, proven over which sizes,
// extrapolated or unproven; exit 1 on anything short of proven, for CI.
int invariance(const Paths& paths, Streams& streams) {
  const auto table = load_table_file(paths.first);
  const std::vector<KernelInvarianceReport> reports = invariance_report(*table);
  if (paths.json)
    streams.out << invariance_report_to_json(reports).dump(1) << "\n";
  else
    streams.out << invariance_report_text(reports);
  return invariance_passes(reports) ? kExitOk : kExitDifferent;
}

Command sub(CLI::App& parent, const char* name, const char* help,
            const std::shared_ptr<Paths>& paths, int (*run)(const Paths&, Streams&)) {
  CLI::App* cmd = parent.add_subcommand(name, help);
  return {cmd, [paths, run](Streams& streams) { return run(*paths, streams); }};
}

}  // namespace

Command add_table_command(CLI::App& app) {
  CLI::App* table = app.add_subcommand("table", "Show, convert, validate and diff tables");
  table->require_subcommand(1);
  auto paths = std::make_shared<Paths>();

  Command show_cmd = sub(*table, "show", "Print a table's provenance and entries", paths, show);
  show_cmd.app->add_option("FILE", paths->first, "Table file (.json or .tlb)")->required();
  show_cmd.app->add_flag("--json", paths->json, "Print the canonical JSON form");

  Command convert_cmd = sub(*table, "convert",
                            "Convert between JSON and binary (.tlb), by extension", paths, convert);
  convert_cmd.app->add_option("IN", paths->first, "Input table")->required();
  convert_cmd.app->add_option("OUT", paths->second, "Output table (.tlb = binary, else JSON)")
      ->required();

  Command validate_cmd =
      sub(*table, "validate", "Check a table; with a manifest, list stale entries (exit 1)", paths,
          validate);
  validate_cmd.app->add_option("FILE", paths->first, "Table file")->required();
  validate_cmd.app->add_option("--candidates", paths->candidates,
                               "Candidate manifest to check entries against");

  Command diff_cmd =
      sub(*table, "diff", "Entries added, removed or changed from A to B (exit 1 when different)",
          paths, diff);
  diff_cmd.app->add_option("A", paths->first, "Old table")->required();
  diff_cmd.app->add_option("B", paths->second, "New table")->required();
  diff_cmd.app->add_flag("--json", paths->json, "Print {added, removed, changed[, arch]} as JSON");

  Command audit_cmd =
      sub(*table, "audit",
          "What a table costs today, from TUNELOCK_MODE=audit runs' "
          "<prefix>.rank<N>.audit.json (exit 1 over --max-regret or on changed bits)",
          paths, audit);
  audit_cmd.app->add_option("FILES", paths->audits, "Audit files, one per rank")->required();
  audit_cmd.app
      ->add_option("--max-regret", paths->max_regret_pct,
                   "Regret in % above which an entry fails the audit (default 5)")
      ->check(CLI::NonNegativeNumber);
  audit_cmd.app->add_flag("--json", paths->json, "Print the report as JSON");

  Command coverage_cmd =
      sub(*table, "coverage",
          "Keys the runs' choice logs needed that the table does not answer by an entry: fell "
          "back, stale, or timed on other code (exit 1 when any)",
          paths, coverage);
  coverage_cmd.app->add_option("TABLE", paths->first, "Table file (.json or .tlb)")->required();
  coverage_cmd.app
      ->add_option("LOGS", paths->audits, "Choice logs of the runs (TUNELOCK_CHOICE_LOG files)")
      ->required();
  coverage_cmd.app->add_flag("--json", paths->json, "Print the report as JSON");

  Command invariance_cmd =
      sub(*table, "invariance",
          "Whether each kernel's rows are proven to give the same bits at every batch size "
          "(record under TUNELOCK_BATCH_INVARIANT=1); exit 1 on anything short of proven",
          paths, invariance);
  invariance_cmd.app->add_option("TABLE", paths->first, "Table file (.json or .tlb)")->required();
  invariance_cmd.app->add_flag("--json", paths->json, "Print the verdicts as JSON");

  return {table, dispatch_to_subcommands({show_cmd, convert_cmd, validate_cmd, diff_cmd, audit_cmd,
                                          coverage_cmd, invariance_cmd})};
}

}  // namespace tunelock::cli
