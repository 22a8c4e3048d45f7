// The engine's collective over UCX: the tree round along a binomial tree
// (O(log N) rounds, O(K) bytes per rank) and an all-gather of bytes within a
// group, across processes and hosts. The only code that includes UCX headers is
// its implementation. Every wait has a deadline; a rank that dies gives the
// others a clear error naming it; waiting sleeps on the worker's event fd
// (8 ranks share 2 cores), never spins.
//
// Single-threaded: call it from one thread (the step boundary).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tunelock/launcher/rendezvous.hpp"
#include "tunelock/verify/tree_collective.hpp"

namespace tunelock::launcher {

class UcxWorld;
struct UcxWorldSlot;

class UcxCollective final : public TreeCollective {
 public:
  // The world group. Connects lazily, on the first all_gather, so a rank
  // with verification off never waits for peers.
  explicit UcxCollective(Rendezvous rendezvous);

  // A world of its own, connected now through `exchange` (a program's
  // process group: no rendezvous port or token). `shape` gives this rank,
  // the size, the deadline and the address to choose a network device by
  // (host may be empty); its rank_names, the world ranks reports name each
  // rank by. Every member must create it at the same time with the same name.
  UcxCollective(Rendezvous shape, const AddressExchange& exchange, std::string name);

  // A subgroup of `world` (data-parallel group, pipeline stage): `ranks`
  // are world ranks and must include this one; every member must create
  // it with the same ranks and name.
  UcxCollective(const UcxCollective& world, std::vector<int> ranks, std::string name);

  ~UcxCollective() override;

  int rank() const override { return rank_in_group_; }
  int size() const override { return static_cast<int>(members_.size()); }
  std::string group_id() const override { return name_; }
  int world_rank(int group_rank) const override {
    return named_ranks_.at(static_cast<std::size_t>(group_rank));
  }
  std::vector<std::string> all_gather(std::string_view payload) override;

 protected:
  void send(std::span<const int> to, std::uint64_t tag, std::string_view bytes) override;
  std::vector<std::string> receive(std::span<const int> from, std::uint64_t tag,
                                   int slack_rounds) override;

 private:
  UcxWorld& world();
  std::vector<int> world_ranks(std::span<const int> group_ranks) const;

  // The world connection, created on the first use by any group built from
  // the same world collective (they share this slot).
  std::shared_ptr<UcxWorldSlot> shared_world_;
  std::shared_ptr<const Rendezvous> pending_;
  std::vector<int> members_;      // ranks in the UCX world, in group order
  std::vector<int> named_ranks_;  // how reports name them: the program's world ranks
  int rank_in_group_ = 0;
  std::string name_;
  std::uint64_t round_ = 0;
};

// The collective for this process: a group of one when WORLD_SIZE (or its
// equivalents) is 1, else the UCX world group from the environment.
std::unique_ptr<Collective> world_collective(const Environment& env, double timeout_s);

}  // namespace tunelock::launcher
