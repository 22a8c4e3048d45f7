// A collective whose ranks are threads of one process: for tests, and for a
// trainer's own unit tests of code that verifies. Each rank takes its
// member() and calls all_gather from its own thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "tunelock/collective.hpp"

namespace tunelock {

class InProcessGroup {
 public:
  // `timeout` bounds every wait: a rank that never arrives gives the others
  // an Error naming the missing ranks instead of a hang.
  explicit InProcessGroup(int size, std::string id = "in-process",
                          std::chrono::milliseconds timeout = std::chrono::seconds(60));
  ~InProcessGroup();

  // The endpoint of `rank`; REQUIRES 0 <= rank < size. Endpoints share the
  // group's state and may outlive the InProcessGroup object.
  std::unique_ptr<Collective> member(int rank) const;

  struct Shared;  // defined in the .cpp; public only so its endpoints can name it

 private:
  std::shared_ptr<Shared> shared_;
};

}  // namespace tunelock
