// The shape of a binomial tree over the ranks 0..size-1 of a group, rooted at
// rank 0: rank r's parent is r without its lowest set bit, and its children
// are r + 2^k for every 2^k below that bit. A reduction along it takes at
// most ceil(log2 size) rounds and size - 1 messages, and so does a broadcast;
// every rank sends one message up and at most log2 size down. One place
// holds the shape, so the transports and the cost table agree.
// Internal (detail/): used by the runtime and tests, not part of the API;
// it may change between versions.
#pragma once

#include <cstdint>
#include <vector>

namespace tunelock {

// REQUIRES 0 < rank < size. Rank 0 has no parent.
int tree_parent(int rank);

// Children in increasing order (the nearest first: its subtree is done first).
std::vector<int> tree_children(int rank, int size);

// Rounds below `rank`: the longest chain of messages that reaches it in a
// reduction (0 for a leaf, tree_depth(size) for rank 0).
int tree_height(int rank, int size);

// Rounds of one reduction, and of one broadcast: tree_height(0, size), at
// most ceil(log2 size) (less where size is not a power of two, as the last
// subtrees are cut short).
int tree_depth(int size);

// What one verification check costs, from the shape alone (DESIGN
// "Verification at scale"): two rounds (up, down) without suspects, four
// with (texts up, report down).
struct TreeCost {
  int rounds = 0;               // longest chain of messages, both ways
  std::int64_t messages = 0;    // all ranks together
  int most_sent_by_a_rank = 0;  // the root's children plus nothing up
};
TreeCost tree_check_cost(int size, bool with_suspects);

}  // namespace tunelock
