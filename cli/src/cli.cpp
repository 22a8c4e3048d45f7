#include "cli.hpp"

#include <algorithm>

#include "commands.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/base/log.hpp"

namespace tunelock::cli {
namespace {

// Edits (insert, delete, substitute) turning `a` into `b`: how far a
// mistyped word is from a known one.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// " (did you mean 'x'?)" for the nearest known word within a few edits.
std::string suggestion(std::string_view typed, const std::vector<std::string>& known) {
  const std::string* best = nullptr;
  std::size_t best_distance = std::max<std::size_t>(2, typed.size() / 3) + 1;
  for (const std::string& word : known) {
    const std::size_t d = edit_distance(typed, word);
    if (d < best_distance) best = &word, best_distance = d;
  }
  return best ? " (did you mean '" + *best + "'?)" : "";
}

// The long flags of `app`, as typed (`--table`).
std::vector<std::string> long_flags(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::Option* option : app.get_options())
    for (const std::string& name : option->get_lnames()) out.push_back("--" + name);
  return out;
}

// The deepest command CLI11 parsed (`table show`), or the program itself.
const CLI::App& parsed_command(const CLI::App& app) {
  const CLI::App* command = &app;
  for (const CLI::App* sub : app.get_subcommands())
    if (sub->parsed()) command = sub;
  for (const CLI::App* sub : command->get_subcommands())
    if (sub->parsed()) command = sub;
  return *command;
}

// "tunelock table show --help": where the command's own help is.
std::string help_of(const CLI::App& command) {
  std::string words;
  for (const CLI::App* c = &command; c && c->get_parent(); c = c->get_parent())
    words = " " + c->get_name() + words;
  return "tunelock" + words + " --help";
}

// The first long flag the command does not know, with the nearest it does:
// named before anything else CLI11 would say (a required option missing).
std::string unknown_flag(const CLI::App& command, const std::vector<std::string>& args) {
  std::vector<std::string> known = long_flags(command);
  for (const CLI::App* c = command.get_parent(); c; c = c->get_parent())
    for (const std::string& flag : long_flags(*c)) known.push_back(flag);
  for (const std::string& arg : args) {
    if (arg == "--") break;
    if (!arg.starts_with("--")) continue;
    const std::string flag = arg.substr(0, arg.find('='));
    if (std::find(known.begin(), known.end(), flag) != known.end()) continue;
    std::vector<std::string> own = long_flags(command);
    return "unknown option '" + flag + "'" + suggestion(flag, own);
  }
  return "";
}

}  // namespace

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
        const Environment& env) {
  CLI::App app{"tunelock: deterministic kernel autotuning, table tools and offline checks",
               "tunelock"};
  app.set_version_flag("-V,--version", std::string("tunelock ") + TUNELOCK_VERSION);
  app.require_subcommand(1);

  const std::vector<Command> commands{
      add_choose_command(app),    add_policy_command(app), add_table_command(app),
      add_merge_command(app),     add_report_command(app), add_verify_command(app),
      add_digest_command(app),    add_launch_command(app), add_timings_command(app),
      add_preview_command(app),   add_log_command(app),    add_watch_command(app),
      add_import_command(app),    add_export_command(app), add_help_command(app),
      add_completion_command(app)};

  // CLI11 would only say "a subcommand is required"; name the word it did not know.
  if (!args.empty() && !args[0].starts_with("-") &&
      std::none_of(commands.begin(), commands.end(),
                   [&](const Command& c) { return c.app->get_name() == args[0]; })) {
    std::vector<std::string> names;
    for (const Command& c : commands) names.push_back(c.app->get_name());
    err << "tunelock: unknown command '" << args[0] << "'" << suggestion(args[0], names)
        << " (see tunelock --help)\n";
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
    out << "tunelock " << TUNELOCK_VERSION << "\n";
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    const CLI::App& command = parsed_command(app);
    const std::string unknown = unknown_flag(command, args);
    err << "tunelock: " << (unknown.empty() ? std::string(e.what()) : unknown) << " (see "
        << help_of(command) << ")\n";
    return kExitBadInput;
  }

  Streams streams{out, err, env};
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
