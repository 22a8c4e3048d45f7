// The one thing verification needs from a transport: an all-gather of bytes
// within a group. The launcher provides it over UCX; a trainer that already
// has MPI or NCCL can implement it over those; tests use an in-process one.
//
// Optionally a transport offers a tree round (has_tree): partials travel up
// a tree to rank 0, which turns them into a verdict that travels back down.
// That is what makes a check cost O(log N) rounds and O(K) bytes per rank
// at any world size; TreeCollective (tree_collective.hpp) builds it from
// point-to-point send and receive. A transport with all-gather only still
// verifies, with O(N) bytes per rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tunelock {

// One rank's side of a tree round. absorb() folds in a partial from the
// rank's subtree; partial() is what goes up; on rank 0 verdict() turns the
// total into what every rank receives. The fold must not depend on the order
// in which partials arrive. absorb may throw Error for a bad partial.
class TreeReduction {
 public:
  virtual ~TreeReduction() = default;
  virtual void absorb(int from_group_rank, std::string_view partial) = 0;
  // Both return views into the reduction's own buffer, valid until its
  // next call.
  virtual std::string_view partial() = 0;
  virtual std::string_view verdict() = 0;
};

class Collective {
 public:
  virtual ~Collective() = default;

  // This process's rank within the group, and the group's size.
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Names the group, so verification keeps one cursor and agreed set per
  // group (the data-parallel group and a pipeline group are different).
  virtual std::string group_id() const = 0;

  // The process-wide rank of group member `group_rank`, so reports name
  // processes a user can find (a subgroup's rank 0 is not world rank 0).
  virtual int world_rank(int group_rank) const { return group_rank; }

  // Every rank's payload, indexed by rank. Blocks until all ranks of the
  // group called it. Throws Error on a timeout or a lost peer.
  virtual std::vector<std::string> all_gather(std::string_view payload) = 0;

  // True when tree_round runs along a tree rather than over all_gather.
  virtual bool has_tree() const { return false; }

  // True when all_reduce is the transport's own fixed-size collective (an
  // all-reduce over torch.distributed or MPI): verification then moves
  // O(new keys) bytes per rank in a few all-reduces, whatever the group's
  // size (slot_verify.cpp).
  virtual bool has_all_reduce() const { return false; }

  enum class ReduceOp { sum, min };
  // Every rank's `values`, combined elementwise by `op`, in place on every
  // rank. All ranks call it with the same length. Throws Error like
  // all_gather. Only called when has_all_reduce().
  virtual void all_reduce(std::span<std::int64_t> values, ReduceOp op);

  // Every rank's partial reaches rank 0's reduction; its verdict is returned
  // on every rank. Throws Error, the same on every rank where the transport
  // lets it, on a timeout, a lost peer or a bad partial. All ranks of the
  // group must call it. This fallback runs over all_gather (O(N) bytes).
  virtual std::string tree_round(TreeReduction& reduction);
};

// A group of one: verification with nobody to disagree with.
class SoloCollective final : public Collective {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string group_id() const override { return "solo"; }
  std::vector<std::string> all_gather(std::string_view payload) override {
    return {std::string(payload)};
  }
};

}  // namespace tunelock
