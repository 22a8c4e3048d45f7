// A group member that forwards every call to its real endpoint; a test
// derives from it and overrides the one call it wants to break.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunelock/verify/collective.hpp"

namespace tunelock::testing {

class ForwardingCollective : public Collective {
 public:
  explicit ForwardingCollective(std::unique_ptr<Collective> inner) : inner_(std::move(inner)) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::string group_id() const override { return inner_->group_id(); }
  int world_rank(int group_rank) const override { return inner_->world_rank(group_rank); }
  bool has_tree() const override { return inner_->has_tree(); }
  bool has_all_reduce() const override { return inner_->has_all_reduce(); }
  std::vector<std::string> all_gather(std::string_view payload) override {
    return inner_->all_gather(payload);
  }
  void all_reduce(std::span<std::int64_t> values, ReduceOp op) override {
    inner_->all_reduce(values, op);
  }
  std::string tree_round(TreeReduction& reduction) override {
    return inner_->tree_round(reduction);
  }

 protected:
  std::unique_ptr<Collective> inner_;
};

}  // namespace tunelock::testing
