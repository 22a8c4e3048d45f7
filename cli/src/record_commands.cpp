// `tunelock merge` and `tunelock report`: from a record run's files to a
// table, and to an account of where the ranks disagreed.
#include <nlohmann/json.hpp>

#include <algorithm>

#include "commands.hpp"
#include "table_files.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/base/log.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/records/merge.hpp"
#include "tunelock/records/merge_report.hpp"
#include "tunelock/records/record_file.hpp"
#include "tunelock/records/timings_sidecar.hpp"

namespace tunelock::cli {
namespace {

struct RecordOptions {
  std::vector<std::string> records;
  std::string input, output, source, arch;
  bool json = false;
};

// Timing sidecars (JSON or binary) are read beside their record file, so a
// glob such as `rec.rank*` that also matches them does what the user meant.
std::vector<RecordFile> load_all(const std::vector<std::string>& paths) {
  const std::vector<std::filesystem::path> records = expand_record_arguments(paths);
  if (records.empty()) throw Error("no record files given (only timing sidecars)");
  return load_record_files(records);
}

int merge(const RecordOptions& options, Streams& streams) {
  const std::vector<RecordFile> records = load_all(options.records);
  refuse_output_among_inputs(options.output, records);
  const MergeResult result = merge_records(records, options.arch, options.source);
  write_table(*result.table, options.output);
  // Keys reported only for their equivalent configs are not disagreements.
  const auto disagreed =
      std::count_if(result.disagreements.begin(), result.disagreements.end(), is_disagreement);
  streams.out << "wrote " << options.output << ": " << result.table->arch() << ", "
              << result.table->entry_count() << " entries from " << records.size()
              << " record file(s); " << disagreed
              << " key(s) where ranks disagreed (see tunelock report)\n";
  for (const std::string& conflict : result.identity_conflicts) logger().warn("{}", conflict);
  return kExitOk;
}

int report(const RecordOptions& options, Streams& streams) {
  const std::vector<KeyVerdict> disagreements = reported_verdicts(load_all(options.records));
  if (options.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const KeyVerdict& v : disagreements) out.push_back(verdict_to_json(v));
    streams.out << out.dump(1) << "\n";
  } else if (disagreements.empty()) {
    streams.out << "all ranks chose alike for every key\n";
  } else {
    streams.out << disagreement_report(disagreements);
  }
  return kExitOk;
}

int convert_timings(const RecordOptions& options, Streams& streams) {
  const std::string& in = options.input;
  RecordFile record;
  add_timings(record, read_file(in), in);
  const bool binary = std::filesystem::path(options.output).extension() == ".tlrt";
  write_file_atomically(options.output,
                        binary ? timings_to_binary(record) : timings_to_json(record));
  streams.out << "wrote " << options.output << " (" << record.timings.size() << " timed keys)\n";
  return kExitOk;
}

}  // namespace

Command add_timings_command(CLI::App& app) {
  auto options = std::make_shared<RecordOptions>();
  CLI::App* timings = app.add_subcommand("timings", "Timing sidecars of record runs");
  timings->require_subcommand(1);
  CLI::App* convert = timings->add_subcommand(
      "convert", "Convert a timing sidecar between JSON and binary (.tlrt)");
  convert->add_option("IN", options->input, "<prefix>.rank<N>.timings.json or .tlrt")->required();
  convert->add_option("OUT", options->output, "Output (.tlrt = binary, else JSON)")->required();
  return {timings, [options](Streams& streams) { return convert_timings(*options, streams); }};
}

Command add_merge_command(CLI::App& app) {
  auto options = std::make_shared<RecordOptions>();
  CLI::App* cmd = app.add_subcommand("merge", "Merge record files into a table by majority vote");
  cmd->add_option("RECORD", options->records,
                  "<prefix>.rank<N>.json files, directories of them, or @LISTFILE (one path a "
                  "line); timing sidecars are found beside them")
      ->required();
  cmd->add_option("-o,--output", options->output, "Table to write (.tlb = binary, else JSON)")
      ->required();
  cmd->add_option("--source", options->source, "Free text for the table's provenance");
  cmd->add_option("--arch", options->arch, "Architecture to merge when the records hold several");
  return {cmd, [options](Streams& streams) { return merge(*options, streams); }};
}

Command add_report_command(CLI::App& app) {
  auto options = std::make_shared<RecordOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Every key where ranks chose differently, with votes and timings");
  cmd->add_option("RECORD", options->records,
                  "<prefix>.rank<N>.json files, directories of them, or @LISTFILE")
      ->required();
  cmd->add_flag("--json", options->json, "Print the disagreements as a JSON array");
  return {cmd, [options](Streams& streams) { return report(*options, streams); }};
}

}  // namespace tunelock::cli
