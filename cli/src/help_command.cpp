// `tunelock help [TOPIC]`: reference that does not fit a command's --help.
// The environment topic prints the one table of variables the runs accept
// (base/variables.hpp), so this page cannot drift from what is refused.
#include "commands.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/base/variables.hpp"
#include "tunelock/decision/modes.hpp"

namespace tunelock::cli {
namespace {

constexpr std::string_view kTopics[] = {"environment", "modes", "fallback", "exit-codes"};

// What the one-line "no tuned config" warning stands for.
void print_fallback(std::ostream& out) {
  out << "\"no tuned config for kernel K\": a pinned call found no table entry and no\n"
         "block-size override for its key, so TUNELOCK_ON_MISS decided:\n"
         "  min_cost (default)  the kernel's own untimed default where it has one (Inductor),\n"
         "                      else the cheapest config by its estimate. Every rank picks\n"
         "                      the same one without a clock, but nobody timed it: it may be\n"
         "                      slower than the autotuner's pick, and nothing has seen its\n"
         "                      bits. The first pinned call per key runs it twice and\n"
         "                      compares them where the kernel declares its outputs\n"
         "                      (TUNELOCK_CHECK_BITS=off skips that). Configs declared or\n"
         "                      flagged nondeterministic are skipped.\n"
         "  error               refuse the call (exit 3 for `tunelock choose`), naming the\n"
         "                      folders searched.\n"
         "The fix: record a table (TUNELOCK_MODE=record TUNELOCK_RECORD=rec/run), merge it\n"
         "(tunelock merge rec -o tables/<arch>.json), and set TUNELOCK_TABLE_PATH=tables.\n"
         "It pins the fastest config whose bits repeat. Each warning is said once per\n"
         "kernel and process. More: docs/numerics.md\n";
}

// The modes' table (decision/modes.hpp), one block per mode.
void print_modes(std::ostream& out) {
  out << "Modes (TUNELOCK_MODE; unset: a record path means record, "
         "TUNELOCK_DETERMINISTIC pinned, else auto):\n";
  for (const ModeBehaviour& m : mode_behaviours()) {
    out << "  " << to_string(m.mode) << "\n      times: " << m.times
        << "\n      reads a table: " << m.reads_table << "; logs choices: " << m.logs_choices
        << "\n      verifies: " << m.verifies << "\n      writes: " << m.writes << "\n";
  }
  out << "A setting the mode does not use is named in one warning at start.\n";
}

void print_environment(std::ostream& out, bool names_only) {
  if (names_only) {
    for (const VariableInfo& v : documented_variables()) out << v.name << "\n";
    return;
  }
  out << "TUNELOCK_* variables (an unknown one, or a bad value, is an error naming it,\n"
         "at start, wherever the policy is read).\n"
         "Booleans: 1/0, true/false, yes/no, on/off in any case. Megatron's MCORE_AUTOTUNE_*\n"
         "names of the policy variables are read too; the TUNELOCK_ name wins.\n\n";
  print_modes(out);
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

std::span<const std::string_view> help_topics() { return kTopics; }

Command add_help_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("help",
                                     "Reference topics: environment (every TUNELOCK_* "
                                     "variable), modes, fallback, exit-codes");
  auto topic = std::make_shared<std::string>();
  auto names = std::make_shared<bool>(false);
  auto markdown = std::make_shared<bool>(false);
  cmd->add_option("topic", *topic, "environment, modes, fallback or exit-codes");
  cmd->add_flag("--names", *names, "environment: the variables' names only, one per line");
  cmd->add_flag("--markdown", *markdown, "modes: the table as the documents print it");
  return {cmd, [topic, names, markdown](Streams& streams) {
            if (topic->empty()) {
              streams.out << "tunelock help TOPIC, where TOPIC is one of:\n"
                             "  environment   every TUNELOCK_* variable, its meaning and default\n"
                             "  modes         what each mode times, reads, logs, verifies, writes\n"
                             "  fallback      what a pinned call does without a tuned config\n"
                             "  exit-codes    what each exit code means\n"
                             "Each command's own options: tunelock COMMAND --help\n";
              return kExitOk;
            }
            if (*topic == "environment" || *topic == "env") {
              print_environment(streams.out, *names);
              return kExitOk;
            }
            if (*topic == "modes") {
              if (*markdown)
                streams.out << modes_markdown();
              else
                print_modes(streams.out);
              return kExitOk;
            }
            if (*topic == "fallback") {
              print_fallback(streams.out);
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
