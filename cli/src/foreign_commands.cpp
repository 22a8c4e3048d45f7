// `tunelock import` and `tunelock export`: other tools' tuning files into
// a tunelock table, where merge, verify and coverage see them, and back
// into the files those tools read (engine/src/foreign/). Today: vLLM's and
// SGLang's fused-MoE config files.
#include <filesystem>

#include "commands.hpp"
#include "table_files.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/foreign/foreign_files.hpp"
#include "tunelock/foreign/moe_config_file.hpp"
#include "tunelock/tables/table_files.hpp"

namespace tunelock::cli {
namespace {

namespace fs = std::filesystem;

struct ForeignOptions {
  std::vector<std::string> inputs;
  std::string table, output, arch;
};

int import_files(const ForeignOptions& options, Streams& streams) {
  const std::vector<fs::path> paths(options.inputs.begin(), options.inputs.end());
  const InMemoryTable table = import_foreign_files(paths, options.arch);
  write_table_file(table, options.output);
  streams.out << "wrote " << options.output << " (" << table.keys(kFusedMoeKernel).size() << " "
              << kFusedMoeKernel << " entries for " << options.arch << ")\n";
  return kExitOk;
}

int export_files(const ForeignOptions& options, Streams& streams) {
  const std::unique_ptr<Table> table = load_table_file(options.table);
  const std::size_t written = export_foreign_files(*table, options.output, options.table);
  streams.out << "wrote " << written << " fused-MoE config file(s) into " << options.output << "\n";
  return kExitOk;
}

}  // namespace

Command add_import_command(CLI::App& app) {
  auto options = std::make_shared<ForeignOptions>();
  CLI::App* cmd = app.add_subcommand(
      "import", "Other tools' tuning files into a table: fused-MoE config files (vLLM, SGLang)");
  cmd->add_option("PATH", options->inputs,
                  "E=<experts>,N=<n>,device_name=<device>...json files, or folders of them")
      ->required();
  cmd->add_option("--arch", options->arch,
                  "The table's architecture (sm90, ...): the files "
                  "name a device, not an arch")
      ->required();
  cmd->add_option("-o,--output", options->output, "Table to write (.tlb = binary, else JSON)")
      ->required();
  return {cmd, [options](Streams& streams) { return import_files(*options, streams); }};
}

Command add_export_command(CLI::App& app) {
  auto options = std::make_shared<ForeignOptions>();
  CLI::App* cmd = app.add_subcommand(
      "export", "A table's entries back into the files other tools read: fused-MoE config files");
  cmd->add_option("TABLE", options->table, "A table holding fused_moe.fused_moe_kernel entries")
      ->required();
  cmd->add_option("-o,--output", options->output, "Folder to write the files into")->required();
  return {cmd, [options](Streams& streams) { return export_files(*options, streams); }};
}

}  // namespace tunelock::cli
