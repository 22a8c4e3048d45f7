// Entry point of the `tunelock` command line, callable in-process.
// Exit codes: 0 success, 1 a check found a difference, 2 bad input (one
// line on stderr naming what is wrong), 3 no tuned config with on_miss=error.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "tunelock/decision/policy_sources.hpp"

namespace tunelock::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitDifferent = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitTableMiss = 3;

// `args` excludes the program name. `out` gets command output only.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
        const Environment& env);

}  // namespace tunelock::cli
