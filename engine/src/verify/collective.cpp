#include "tunelock/verify/collective.hpp"

#include "tunelock/base/error.hpp"

namespace tunelock {

// The tree round for a transport that only gathers: everybody's partial
// reaches everybody, rank 0 folds them, and a second gather carries its
// verdict. Correct at any size, but O(N) bytes per rank.
std::string Collective::tree_round(TreeReduction& reduction) {
  const std::vector<std::string> partials = all_gather(reduction.partial());
  if (partials.size() != static_cast<std::size_t>(size())) {
    throw Error("verify: group '" + group_id() + "' returned " + std::to_string(partials.size()) +
                " payloads for " + std::to_string(size()) + " ranks");
  }
  std::string verdict;
  if (rank() == 0) {
    for (int r = 1; r < size(); ++r) reduction.absorb(r, partials[static_cast<std::size_t>(r)]);
    verdict = reduction.verdict();
  }
  std::vector<std::string> verdicts = all_gather(verdict);
  if (verdicts.empty()) throw Error("verify: group '" + group_id() + "' returned no verdict");
  return std::move(verdicts[0]);
}

}  // namespace tunelock

namespace tunelock {

void Collective::all_reduce(std::span<std::int64_t>, ReduceOp) {
  throw Error("verify: group '" + group_id() + "' has no all-reduce");
}

}  // namespace tunelock
