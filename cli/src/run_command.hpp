// The last step of a child that runs a user's command (`tunelock launch`'s
// ranks, `tunelock watch`'s program): exec it, or say why not and exit 127
// as a shell does.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace tunelock::cli {

[[noreturn]] inline void exec_command(const std::vector<std::string>& command, const char* who) {
  std::vector<char*> argv;
  for (const std::string& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  std::fprintf(stderr, "tunelock %s: cannot run %s: %s\n", who, argv[0], std::strerror(errno));
  ::_exit(127);
}

}  // namespace tunelock::cli
