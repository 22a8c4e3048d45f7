// `tunelock help [TOPIC]`: reference that does not fit a command's --help.
// The environment topic prints the one table of variables the runs accept
// (base/variables.hpp), so this page cannot drift from what is refused.
#include "commands.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/base/variables.hpp"

namespace tunelock::cli {
namespace {

constexpr std::string_view kTopics[] = {"environment", "exit-codes"};

void print_environment(std::ostream& out, bool names_only) {
  if (names_only) {
    for (const VariableInfo& v : documented_variables()) out << v.name << "\n";
    return;
  }
  out << "TUNELOCK_* variables (an unknown one, or a bad value, is an error naming it,\n"
         "at start, wherever the policy is read).\n"
         "Booleans: 1/0, true/false, yes/no, on/off in any case. Megatron's MCORE_AUTOTUNE_*\n"
         "names of the policy variables are read too; the TUNELOCK_ name wins.\n";
  std::string_view topic;
  for (const VariableInfo& v : documented_variables()) {
    if (v.topic != topic) {
      topic = v.topic;
      out << "\n" << topic << ":\n";
    }
    out << "  " << v.name << "\n      " << v.meaning << "\n      default: " << v.default_value
        << "\n";
  }
  out << "\nMore, with the flags and Megatron names of each: docs/policy.md\n";
}

void print_exit_codes(std::ostream& out) {
  out << "0   success\n"
         "1   a check found something: ranks disagree (verify), logs differ (watch compare),\n"
         "    a table is stale or contradicts itself (table validate), keys not covered\n"
         "    (table coverage), regret over the limit or unknown (table audit)\n"
         "2   bad input: one line on stderr naming the file, field, flag or variable\n"
         "3   no tuned config under --on-miss error (choose)\n"
         "70  internal error\n"
         "74  a trainer could not write its records or choice log at exit, or a launch log\n"
         "    (watch)\n";
}

}  // namespace

Command add_help_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("help",
                                     "Reference topics: environment (every TUNELOCK_* "
                                     "variable), exit-codes");
  auto topic = std::make_shared<std::string>();
  auto names = std::make_shared<bool>(false);
  cmd->add_option("topic", *topic, "environment or exit-codes");
  cmd->add_flag("--names", *names, "environment: the variables' names only, one per line");
  return {cmd, [topic, names](Streams& streams) {
            if (topic->empty()) {
              streams.out << "tunelock help TOPIC, where TOPIC is one of:\n"
                             "  environment   every TUNELOCK_* variable, its meaning and default\n"
                             "  exit-codes    what each exit code means\n"
                             "Each command's own options: tunelock COMMAND --help\n";
              return kExitOk;
            }
            if (*topic == "environment" || *topic == "env") {
              print_environment(streams.out, *names);
              return kExitOk;
            }
            if (*topic == "exit-codes") {
              print_exit_codes(streams.out);
              return kExitOk;
            }
            std::string known;
            for (std::string_view t : kTopics)
              known += (known.empty() ? "" : ", ") + std::string(t);
            throw Error("help: no topic '" + *topic + "'; topics: " + known);
          }};
}

}  // namespace tunelock::cli
