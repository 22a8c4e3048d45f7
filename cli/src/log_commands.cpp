// `tunelock verify` and `tunelock digest`: the run-time checks, offline,
// over choice logs dumped by each rank (TUNELOCK_CHOICE_LOG).
#include <algorithm>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/io/file_kind.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/io/rank_files.hpp"
#include "tunelock/logs/choice_log.hpp"
#include "tunelock/logs/choice_log_file.hpp"
#include "tunelock/verify/verify.hpp"

namespace tunelock::cli {
namespace {

struct LogOptions {
  std::vector<std::string> logs;
  bool json = false;
  bool allow_empty = false;  // 0 keys may pass: a run that was meant to lock nothing
  bool single = false;       // one rank's log may pass: a one-process job
};

// The choice logs among ARGS: files as given, and a folder's
// <prefix>.rank<N>.json / .tlcl files that are choice logs (records share
// the naming, so the bytes decide).
std::vector<std::string> choice_log_arguments(const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const std::string& arg : args) {
    std::error_code ec;
    if (!fs::is_directory(arg, ec)) {
      out.push_back(arg);
      continue;
    }
    std::vector<std::string> found;
    for (const fs::directory_entry& entry : fs::directory_iterator(arg)) {
      const std::string name = entry.path().filename().string();
      if (!entry.is_regular_file() || parse_rank_file_name(name).rank < 0) continue;
      if (detect_file_kind(name, read_file(entry.path())).kind == FileKind::choice_log)
        found.push_back(entry.path().string());
    }
    if (found.empty())
      throw Error(arg + ": a folder with no choice logs (<prefix>.rank<N>.json or .tlcl) in it");
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

// Why a check that found no conflict still does not pass: it compared
// nothing, or one rank with nobody. Empty when it passes.
std::string fail_closed_reason(const LogOptions& options, std::size_t ranks,
                               std::size_t agreed_keys) {
  if (ranks == 1 && !options.single)
    return "verify: only one rank's log: nothing to compare it with. Give every rank's log "
           "(<prefix>.rank*.json or their folder), or --single to check one log alone";
  if (agreed_keys == 0 && !options.allow_empty)
    return "verify: 0 kernel/shape keys in " + std::to_string(ranks) +
           " log(s): nothing was locked, so nothing was checked. Was the run's mode set? "
           "(`auto` logs choices only with TUNELOCK_VERIFY_EVERY or TUNELOCK_ENUMERATE; "
           "`tunelock help modes`). --allow-empty accepts a run that locks nothing";
  return {};
}

// Same semantics and report as the run-time check: one round in which every
// rank sends its whole log.
int verify_logs(const LogOptions& options, Streams& streams) {
  const std::vector<std::string> paths = choice_log_arguments(options.logs);
  std::vector<ChoiceLogFile> logs;
  std::vector<NamedLog> named;
  logs.reserve(paths.size());
  for (const std::string& path : paths) {
    logs.push_back(choice_log_from_bytes(read_file(path), path));
    named.emplace_back(path, &logs.back());
  }
  const ChoiceLogCheck check = check_choice_logs(named);
  const VerifyResult& result = check.result;
  // Fail closed: no conflict among nothing is not agreement.
  const std::string refused =
      result.agreed ? fail_closed_reason(options, named.size(), check.agreed_keys) : "";
  const bool passed = result.agreed && refused.empty();
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
    nlohmann::json verdict{{"agreed", passed},
                           {"keys", check.agreed_keys},
                           {"ranks", ranks_json},
                           {"conflicts", conflicts}};
    if (!refused.empty()) verdict["refused"] = refused;
    streams.out << verdict.dump(1) << "\n";
    return passed ? kExitOk : kExitDifferent;
  }
  if (!refused.empty()) {
    streams.out << refused << "\n";
    return kExitDifferent;
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
  cmd->add_option("LOG", options->logs,
                  "<prefix>.rank<N>.json choice logs, one per rank, or a folder of them")
      ->required();
  cmd->add_flag("--json", options->json, "Print {agreed, keys, ranks, conflicts} as JSON");
  cmd->add_flag("--allow-empty", options->allow_empty,
                "Pass logs that hold no choice (default: 0 keys fails, exit 1)");
  cmd->add_flag("--single", options->single,
                "Pass one rank's log alone (default: a single log fails, exit 1)");
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
