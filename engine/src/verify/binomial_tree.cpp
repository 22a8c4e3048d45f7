#include "verify/binomial_tree.hpp"

#include <algorithm>

namespace tunelock {

int tree_parent(int rank) { return rank & (rank - 1); }

std::vector<int> tree_children(int rank, int size) {
  // Rank 0 owns every bit; another rank the bits below its lowest set one.
  const unsigned limit = rank == 0 ? 1u << 30 : static_cast<unsigned>(rank & -rank);
  std::vector<int> out;
  for (unsigned step = 1; step < limit; step <<= 1) {
    const long long child = static_cast<long long>(rank) + step;
    if (child >= size) break;
    out.push_back(static_cast<int>(child));
  }
  return out;
}

int tree_height(int rank, int size) {
  // Child r + 2^k heads ranks [r + 2^k, r + 2^(k+1)), k rounds deep when
  // whole; only the last child can be cut short by `size`, so this recursion
  // is a chain of at most log2 size calls.
  int height = 0;
  int k = 0;
  for (int child : tree_children(rank, size)) {
    const long long step = child - rank;
    while ((1LL << k) < step) ++k;
    const int below = child + step <= size ? k : tree_height(child, size);
    height = std::max(height, below + 1);
  }
  return height;
}

int tree_depth(int size) { return tree_height(0, size); }

TreeCost tree_check_cost(int size, bool with_suspects) {
  const int passes = with_suspects ? 2 : 1;  // each pass: one reduction, one broadcast
  TreeCost cost;
  cost.rounds = 2 * passes * tree_depth(size);
  cost.messages = 2LL * passes * (size - 1);
  cost.most_sent_by_a_rank = passes * static_cast<int>(tree_children(0, size).size());
  return cost;
}

}  // namespace tunelock
