// The `tunelock` program: see cli.hpp for commands and exit codes.
#include <iostream>

#include "cli.hpp"
#include "tunelock/base/log.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    tunelock::logger();  // reads TUNELOCK_LOG_LEVEL now: a bad value is said even if nothing logs
    return tunelock::cli::run(args, std::cout, std::cerr, tunelock::process_environment());
  } catch (const std::exception& e) {
    std::cerr << "tunelock: internal error: " << e.what() << "\n";
    return 70;
  }
}
