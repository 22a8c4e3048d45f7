#include "cli.hpp"

#include <algorithm>

#include "commands.hpp"
#include "tunelock/error.hpp"
#include "tunelock/log.hpp"

namespace tunelock::cli {

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
        const Environment& env) {
  CLI::App app{"tunelock: deterministic kernel autotuning, table tools and offline checks",
               "tunelock"};
  app.set_version_flag("--version", std::string("tunelock ") + TUNELOCK_VERSION);
  app.require_subcommand(1);

  const std::vector<Command> commands{
      add_choose_command(app),  add_policy_command(app), add_table_command(app),
      add_merge_command(app),   add_report_command(app), add_verify_command(app),
      add_digest_command(app),  add_launch_command(app), add_timings_command(app),
      add_preview_command(app), add_log_command(app)};

  // CLI11 would only say "a subcommand is required"; name the word it did not know.
  if (!args.empty() && !args[0].starts_with("-") &&
      std::none_of(commands.begin(), commands.end(),
                   [&](const Command& c) { return c.app->get_name() == args[0]; })) {
    err << "tunelock: unknown command '" << args[0] << "' (see tunelock --help)\n";
    return kExitBadInput;
  }

  // CLI11 parses argv in place; give it stable storage with the program name first.
  std::vector<std::string> storage{"tunelock"};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : storage) argv.push_back(arg.data());

  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp&) {
    out << (app.get_subcommands().empty() ? app.help() : app.get_subcommands().front()->help());
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    out << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::CallForVersion&) {
    out << TUNELOCK_VERSION << "\n";
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    err << "tunelock: " << e.what() << " (see tunelock --help)\n";
    return kExitBadInput;
  }

  Streams streams{out, env};
  try {
    for (const Command& command : commands) {
      if (command.app->parsed()) return command.action(streams);
    }
    err << "tunelock: no command given (see tunelock --help)\n";
    return kExitBadInput;
  } catch (const TableMissError& e) {
    err << "tunelock: " << e.what() << "\n";
    return kExitTableMiss;
  } catch (const Error& e) {
    err << "tunelock: " << e.what() << "\n";
    return kExitBadInput;
  }
}

Action dispatch_to_subcommands(std::vector<Command> children) {
  return [children = std::move(children)](Streams& streams) {
    for (const Command& child : children) {
      if (child.app->parsed()) return child.action(streams);
    }
    throw Error("no subcommand given (see --help)");
  };
}

}  // namespace tunelock::cli
