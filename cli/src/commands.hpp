// Each subcommand registers its options on the app and returns the action
// to run once parsing succeeded. Actions throw tunelock::Error on bad input.
#pragma once

#include <functional>
#include <ostream>

#include <CLI/CLI.hpp>

#include "tunelock/policy_sources.hpp"

namespace tunelock::cli {

struct Streams {
  std::ostream& out;
  const Environment& env;
};

// Returns the exit code.
using Action = std::function<int(Streams&)>;

struct Command {
  CLI::App* app;  // owned by the parent app
  Action action;
};

Command add_choose_command(CLI::App& app);
Command add_policy_command(CLI::App& app);

}  // namespace tunelock::cli
