// Each subcommand registers its options on the app and returns the action
// to run once parsing succeeded. Actions throw tunelock::Error on bad input.
#pragma once

#include <functional>
#include <ostream>
#include <span>
#include <string_view>

#include <CLI/CLI.hpp>

#include "cli.hpp"
#include "tunelock/decision/policy_sources.hpp"

namespace tunelock::cli {

struct Streams {
  std::ostream& out;
  std::ostream& err;  // a command's own diagnostics beside its output
  const Environment& env;
};

// Returns the exit code.
using Action = std::function<int(Streams&)>;

struct Command {
  CLI::App* app;  // owned by the parent app
  Action action;
};

// `tunelock help`'s topics, for its message and the completion script.
std::span<const std::string_view> help_topics();

Command add_choose_command(CLI::App& app);
Command add_policy_command(CLI::App& app);
Command add_table_command(CLI::App& app);
Command add_merge_command(CLI::App& app);
Command add_report_command(CLI::App& app);
Command add_verify_command(CLI::App& app);
Command add_digest_command(CLI::App& app);
Command add_launch_command(CLI::App& app);
Command add_timings_command(CLI::App& app);
Command add_preview_command(CLI::App& app);
Command add_log_command(CLI::App& app);
Command add_watch_command(CLI::App& app);
Command add_import_command(CLI::App& app);
Command add_export_command(CLI::App& app);
Command add_help_command(CLI::App& app);
// Registered last: its script lists every command registered before it.
Command add_completion_command(CLI::App& app);

// The first parsed subcommand's action of `parent`, for commands with
// their own subcommands (`tunelock table show ...`).
Action dispatch_to_subcommands(std::vector<Command> children);

}  // namespace tunelock::cli
