// The one thing verification needs from a transport: an all-gather of bytes
// within a group. The launcher provides it over UCX; a trainer that already
// has MPI or NCCL can implement it over those; tests use an in-process one.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tunelock {

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
