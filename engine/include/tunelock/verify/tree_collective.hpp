// A collective that can send to and receive from single peers gets the tree
// round along a binomial tree (binomial_tree.hpp): O(log N) rounds, one
// message up per rank, the verdict down the same tree. A failure anywhere
// (a lost or silent child, a bad partial) travels with the round in place
// of the payload, so every rank reports the same error, not only the
// neighbour of the rank that died.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunelock/verify/collective.hpp"

namespace tunelock {

// How long a receive with `slack_rounds` waits, for a transport whose
// timeout is `timeout`: a tenth of it (at most a second) more per round.
std::chrono::milliseconds tree_wait(std::chrono::milliseconds timeout, int slack_rounds);

class TreeCollective : public Collective {
 public:
  bool has_tree() const final { return true; }
  std::string tree_round(TreeReduction& reduction) final;

 protected:
  // Sends `bytes` to each of the group ranks `to` under `tag`. May throw
  // Error for a peer that is gone; the round carries on without it.
  virtual void send(std::span<const int> to, std::uint64_t tag, std::string_view bytes) = 0;

  // One message under `tag` from each of the group ranks `from`, in that
  // order. Waits tree_wait(timeout, slack_rounds): a rank higher in the
  // tree waits longer, so the failure report from below arrives before its
  // own deadline. Throws Error naming the missing or lost ranks.
  virtual std::vector<std::string> receive(std::span<const int> from, std::uint64_t tag,
                                           int slack_rounds) = 0;

 private:
  std::string gather_up(TreeReduction& reduction, std::uint64_t tag);
  std::uint64_t rounds_ = 0;  // every rank of the group counts the same rounds
};

}  // namespace tunelock
