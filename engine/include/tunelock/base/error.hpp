// Errors a user can act on. Every message says what is wrong, where, and
// how to fix it; callers (the CLI, the launcher) turn them into exit codes.
#pragma once

#include <stdexcept>
#include <string>

namespace tunelock {

// Bad input: a malformed file, value, flag or variable. The CLI exits 2.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A pinned choice found no table entry while on_miss is `error`. The CLI exits 3.
class TableMissError : public Error {
 public:
  using Error::Error;
};

}  // namespace tunelock
