#include "tunelock/in_process_collective.hpp"

#include <condition_variable>
#include <mutex>
#include <vector>

#include "tunelock/error.hpp"

namespace tunelock {

// One round at a time: ranks drop their payload into a slot; the last to
// arrive publishes the round and wakes the rest. A rank cannot start the
// next round's publication before every rank arrived again, so the published
// result stays valid until all waiters have copied it.
struct InProcessGroup::Shared {
  int size;
  std::string id;
  std::chrono::milliseconds timeout;
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> slots;
  std::vector<bool> arrived;
  int arrived_count = 0;
  std::uint64_t round = 0;
  std::vector<std::string> published;
};

namespace {

class Member final : public Collective {
 public:
  Member(std::shared_ptr<InProcessGroup::Shared> shared, int rank)
      : shared_(std::move(shared)), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return shared_->size; }
  std::string group_id() const override { return shared_->id; }

  std::vector<std::string> all_gather(std::string_view payload) override;

 private:
  std::shared_ptr<InProcessGroup::Shared> shared_;
  int rank_;
};

}  // namespace

InProcessGroup::InProcessGroup(int size, std::string id, std::chrono::milliseconds timeout)
    : shared_(std::make_shared<Shared>()) {
  if (size < 1) throw Error("in-process group: size must be at least 1");
  shared_->size = size;
  shared_->id = std::move(id);
  shared_->timeout = timeout;
  shared_->slots.resize(static_cast<std::size_t>(size));
  shared_->arrived.assign(static_cast<std::size_t>(size), false);
}

InProcessGroup::~InProcessGroup() = default;

std::unique_ptr<Collective> InProcessGroup::member(int rank) const {
  if (rank < 0 || rank >= shared_->size)
    throw Error("in-process group: rank " + std::to_string(rank) + " is outside 0.." +
                std::to_string(shared_->size - 1));
  return std::make_unique<Member>(shared_, rank);
}

std::vector<std::string> Member::all_gather(std::string_view payload) {
  InProcessGroup::Shared& s = *shared_;
  std::unique_lock lock(s.mutex);
  const auto me = static_cast<std::size_t>(rank_);
  s.slots[me] = std::string(payload);
  s.arrived[me] = true;
  if (++s.arrived_count == s.size) {
    s.published = s.slots;
    s.arrived.assign(s.arrived.size(), false);
    s.arrived_count = 0;
    ++s.round;
    s.changed.notify_all();
    return s.published;
  }
  const std::uint64_t my_round = s.round;
  if (!s.changed.wait_for(lock, s.timeout, [&] { return s.round != my_round; })) {
    std::string missing;
    for (std::size_t r = 0; r < s.arrived.size(); ++r)
      if (!s.arrived[r]) missing += (missing.empty() ? "" : ",") + std::to_string(r);
    // Withdraw, so a late retry starts clean.
    s.arrived[me] = false;
    --s.arrived_count;
    throw Error("group '" + s.id + "': timed out after " + std::to_string(s.timeout.count()) +
                " ms waiting for rank(s) " + missing);
  }
  return s.published;
}

}  // namespace tunelock
