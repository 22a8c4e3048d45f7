// The `tunelock` program: see cli.hpp for commands and exit codes.
#include <iostream>

#include "cli.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return tunelock::cli::run(args, std::cout, std::cerr, tunelock::process_environment());
  } catch (const std::exception& e) {
    std::cerr << "tunelock: internal error: " << e.what() << "\n";
    return 70;
  }
}
