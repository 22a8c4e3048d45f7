// `tunelock verify` and `tunelock digest`: the run-time checks, offline,
// over choice logs dumped by each rank (TUNELOCK_CHOICE_LOG).
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/logs/choice_log.hpp"
#include "tunelock/logs/choice_log_file.hpp"
#include "tunelock/verify/verify.hpp"

namespace tunelock::cli {
namespace {

struct LogOptions {
  std::vector<std::string> logs;
  bool json = false;
};

// Same semantics and report as the run-time check: one round in which every
// rank sends its whole log.
int verify_logs(const LogOptions& options, Streams& streams) {
  std::vector<ChoiceLogFile> logs;
  std::vector<NamedLog> named;
  logs.reserve(options.logs.size());
  for (const std::string& path : options.logs) {
    logs.push_back(choice_log_from_bytes(read_file(path), path));
    named.emplace_back(path, &logs.back());
  }
  const ChoiceLogCheck check = check_choice_logs(named);
  const VerifyResult& result = check.result;
  nlohmann::json ranks_json = nlohmann::json::array();
  for (const auto& [path, log] : named) {
    ranks_json.push_back({{"rank", log->rank},
                          {"log", path},
                          {"choices", log->entries.size()},
                          {"digest", choice_digest(log->entries)}});
    if (!options.json) {
      streams.out << "rank " << log->rank << ": " << log->entries.size() << " choices, digest "
                  << choice_digest(log->entries) << "\n";
    }
  }
  if (options.json) {
    nlohmann::json conflicts = nlohmann::json::array();
    for (const Conflict& c : result.conflicts)
      conflicts.push_back({{"key", c.key}, {"ranks_by_value", c.ranks_by_value}});
    streams.out << nlohmann::json{{"agreed", result.agreed},
                                  {"ranks", ranks_json},
                                  {"conflicts", conflicts}}
                       .dump(1)
                << "\n";
    return result.agreed ? kExitOk : kExitDifferent;
  }
  if (result.agreed) {
    streams.out << "agreed: " << check.agreed_keys << " kernel/shape keys across " << named.size()
                << " rank(s)\n";
    return kExitOk;
  }
  streams.out << conflict_report(result.conflicts) << "\n";
  return kExitDifferent;
}

int digest(const LogOptions& options, Streams& streams) {
  const std::string& path = options.logs.front();
  // The reader refuses a log whose stored digest differs from its entries.
  const ChoiceLogFile log = choice_log_from_bytes(read_file(path), path);
  streams.out << choice_digest(log.entries) << "\n";
  return kExitOk;
}

// JSON <-> binary (.tlcl), entries kept, digest recomputed by the writer.
int convert_log(const std::string& in, const std::string& out, Streams& streams) {
  const ChoiceLogFile log = choice_log_from_bytes(read_file(in), in);
  const bool binary = std::filesystem::path(out).extension() == ".tlcl";
  write_file_atomically(out, binary ? choice_log_to_binary(log) : choice_log_to_json(log));
  streams.out << "wrote " << out << " (" << log.entries.size() << " choices)\n";
  return kExitOk;
}

}  // namespace

Command add_log_command(CLI::App& app) {
  auto paths = std::make_shared<std::pair<std::string, std::string>>();
  CLI::App* log = app.add_subcommand("log", "Choice logs written with TUNELOCK_CHOICE_LOG");
  CLI::App* convert =
      log->add_subcommand("convert", "Convert a choice log between JSON and binary (.tlcl)");
  convert->add_option("IN", paths->first, "<prefix>.rank<N>.json or .tlcl")->required();
  convert->add_option("OUT", paths->second, "Output (.tlcl = binary, else JSON)")->required();
  log->require_subcommand(1);
  return {log,
          [paths](Streams& streams) { return convert_log(paths->first, paths->second, streams); }};
}

Command add_verify_command(CLI::App& app) {
  auto options = std::make_shared<LogOptions>();
  CLI::App* cmd = app.add_subcommand(
      "verify", "Check ranks' choice logs against each other (exit 1 on conflict)");
  cmd->add_option("LOG", options->logs, "<prefix>.rank<N>.json choice logs, one per rank")
      ->required();
  cmd->add_flag("--json", options->json, "Print {agreed, ranks, conflicts} as JSON");
  return {cmd, [options](Streams& streams) { return verify_logs(*options, streams); }};
}

Command add_digest_command(CLI::App& app) {
  auto options = std::make_shared<LogOptions>();
  CLI::App* cmd =
      app.add_subcommand("digest", "Print a choice log's digest, as the run computed it");
  cmd->add_option("LOG", options->logs, "A choice log")->required()->expected(1);
  return {cmd, [options](Streams& streams) { return digest(*options, streams); }};
}

}  // namespace tunelock::cli
