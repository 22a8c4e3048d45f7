// A collective whose ranks are threads of one process: for tests, and for a
// trainer's own unit tests of code that verifies. Each rank takes its
// member() and calls it from its own thread. Members offer the tree round
// (point-to-point mailboxes along the binomial tree) unless the group is
// made gather-only, as a plug-in transport with all-gather alone would be;
// the group counts the tree's traffic, so a test can check a check's cost
// against the formula at a thousand ranks.
// Internal (detail/): used by the runtime and tests, not part of the API;
// it may change between versions.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "tunelock/verify/collective.hpp"

namespace tunelock {

class InProcessGroup {
 public:
  // tree: mailboxes along the binomial tree; gather_only: all-gather alone;
  // all_reduce: all-gather and a fixed-size all-reduce, as torch.distributed
  // and MPI offer.
  enum class Transport { tree, gather_only, all_reduce };

  // `timeout` bounds every wait: a rank that never arrives gives the others
  // an Error naming the missing ranks instead of a hang.
  explicit InProcessGroup(int size, std::string id = "in-process",
                          std::chrono::milliseconds timeout = std::chrono::seconds(60),
                          Transport transport = Transport::tree);
  ~InProcessGroup();

  // The endpoint of `rank`; REQUIRES 0 <= rank < size. Endpoints share the
  // group's state and may outlive the InProcessGroup object.
  std::unique_ptr<Collective> member(int rank) const;

  // Point-to-point traffic since the group was made or last reset.
  struct Traffic {
    std::int64_t messages = 0;             // all ranks together
    std::int64_t most_sent_by_a_rank = 0;  // messages
    std::int64_t most_bytes_sent = 0;      // by one rank
    std::int64_t most_bytes_received = 0;  // by one rank
    int rounds = 0;                        // longest chain of messages
  };
  Traffic traffic() const;
  // REQUIRES no member is sending or receiving.
  void reset_traffic();

  struct Shared;  // defined in the .cpp; public only so its endpoints can name it

 private:
  std::shared_ptr<Shared> shared_;
};

}  // namespace tunelock
