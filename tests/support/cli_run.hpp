// Runs the tunelock command line in-process and keeps what it printed.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "tunelock/runtime/runtime.hpp"

namespace tunelock::testing {

struct CliResult {
  int code = -1;
  std::string out;
  std::string err;
};

inline CliResult run_cli(const std::vector<std::string>& args, const Environment& env = {}) {
  std::ostringstream out, err;
  CliResult result;
  result.code = tunelock::cli::run(args, out, err, env);
  result.out = out.str();
  result.err = err.str();
  return result;
}

}  // namespace tunelock::testing
