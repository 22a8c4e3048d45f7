// `tunelock preview`: what switching a run to pinned with a table would
// change, from the run's choice logs (any mode), the table and the
// candidate manifest. The engine's preview_run answers; the page asks it too.
#include <set>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/decision/run_preview.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/logs/choice_log_file.hpp"
#include "tunelock/model/candidates.hpp"
#include "tunelock/tables/table_files.hpp"

namespace tunelock::cli {
namespace {

struct PreviewOptions {
  std::vector<std::string> logs;
  std::string table;
  std::string candidates;
  std::vector<std::string> blocks;
  bool every_key = false;
  bool json = false;
};

int preview(const PreviewOptions& options, Streams& streams) {
  std::vector<ChoiceLogFile> logs;
  std::set<int> ranks;
  for (const std::string& path : options.logs) {
    logs.push_back(choice_log_from_bytes(read_file(path), path));
    if (!ranks.insert(logs.back().rank).second)
      throw Error(path + ": rank " + std::to_string(logs.back().rank) +
                  " appears in two logs of one run");
  }
  const CandidateManifest manifest =
      candidates_from_json(read_file(options.candidates), options.candidates);
  std::unique_ptr<Table> table;
  if (!options.table.empty()) table = load_table_file(options.table);
  RunPreviewRules rules{table.get(), &manifest, {}};
  Policy policy;  // validate() checks names, values and duplicates, as everywhere
  for (const std::string& flag : options.blocks) {
    auto parsed = parse_block_sizes(flag, "--block");
    policy.block_sizes.insert(policy.block_sizes.end(), parsed.begin(), parsed.end());
  }
  policy.validate();
  rules.block_sizes = policy.block_sizes;
  const RunPreview result = preview_run(logs, rules);
  if (options.json) {
    streams.out << run_preview_to_json(result).dump(1) << "\n";
    return kExitOk;
  }
  for (const std::string& warning : result.warnings)
    streams.out << "tunelock: warning: " << warning << "\n";
  streams.out << run_preview_report(result, options.every_key);
  return kExitOk;
}

}  // namespace

Command add_preview_command(CLI::App& app) {
  auto options = std::make_shared<PreviewOptions>();
  CLI::App* cmd = app.add_subcommand(
      "preview", "What pinned with this table would choose for every key a run logged");
  cmd->add_option("LOG", options->logs, "One run's choice logs, one per rank (.json or .tlcl)")
      ->required();
  cmd->add_option("--table", options->table, "Table file (.json or .tlb); none: rules only");
  cmd->add_option("--candidates", options->candidates, "Candidate manifest")->required();
  cmd->add_option("--block", options->blocks, "Block-size override NAME=INT (repeatable)");
  cmd->add_flag("--all", options->every_key, "List every key, not only those that change");
  cmd->add_flag("--json", options->json, "Print {keys, summary, warnings} as JSON");
  return {cmd, [options](Streams& streams) { return preview(*options, streams); }};
}

}  // namespace tunelock::cli
