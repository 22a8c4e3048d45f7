#include "verify/in_process_collective.hpp"

#include <limits>

#include <cstring>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "tunelock/base/error.hpp"
#include "tunelock/verify/tree_collective.hpp"

namespace tunelock {

// All-gather, one round at a time: ranks drop their payload into a slot; the
// last to arrive publishes the round and wakes the rest. A rank cannot start
// the next round's publication before every rank arrived again, so the
// published result stays valid until all waiters have copied it.
//
// Point-to-point: one mailbox per (receiver, sender, tag), and one condition
// variable per receiver, so a send wakes only its receiver (a thousand
// threads on one condition variable would wake each other for nothing).
// Every message carries a logical clock: the chain length that led to it.
struct InProcessGroup::Shared {
  int size;
  std::string id;
  std::chrono::milliseconds timeout;
  Transport transport;
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> slots;
  std::vector<bool> arrived;
  int arrived_count = 0;
  std::uint64_t round = 0;
  std::vector<std::string> published;

  struct Message {
    std::string bytes;
    int clock;
  };
  std::map<std::tuple<int, int, std::uint64_t>, Message> mailboxes;  // (to, from, tag)
  std::vector<std::unique_ptr<std::condition_variable>> delivered;   // by receiver
  struct RankTraffic {
    std::int64_t messages = 0, bytes_sent = 0, bytes_received = 0;
    int clock = 0;
  };
  std::vector<RankTraffic> traffic;
};

namespace {

class Member final : public TreeCollective {
 public:
  Member(std::shared_ptr<InProcessGroup::Shared> shared, int rank)
      : shared_(std::move(shared)), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return shared_->size; }
  std::string group_id() const override { return shared_->id; }

  std::vector<std::string> all_gather(std::string_view payload) override;

 protected:
  void send(std::span<const int> to, std::uint64_t tag, std::string_view bytes) override;
  std::vector<std::string> receive(std::span<const int> from, std::uint64_t tag,
                                   int slack_rounds) override;

 private:
  std::shared_ptr<InProcessGroup::Shared> shared_;
  int rank_;
};

// The same member without the tree: verification then gathers, as over a
// plug-in transport that has all-gather alone.
class GatherOnlyMember : public Collective {
 public:
  explicit GatherOnlyMember(std::unique_ptr<Collective> inner) : inner_(std::move(inner)) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::string group_id() const override { return inner_->group_id(); }
  std::vector<std::string> all_gather(std::string_view payload) override {
    return inner_->all_gather(payload);
  }

 private:
  std::unique_ptr<Collective> inner_;
};

// A member whose transport offers a fixed-size all-reduce (as
// torch.distributed and MPI do), here made of the all-gather: verification
// then runs over slots (slot_verify.cpp).
class AllReduceMember final : public GatherOnlyMember {
 public:
  using GatherOnlyMember::GatherOnlyMember;
  bool has_all_reduce() const override { return true; }
  void all_reduce(std::span<std::int64_t> values, ReduceOp op) override {
    const std::vector<std::string> all =
        all_gather({reinterpret_cast<const char*>(values.data()), values.size_bytes()});
    for (std::size_t i = 0; i < values.size(); ++i) {
      std::int64_t out = op == ReduceOp::sum ? 0 : std::numeric_limits<std::int64_t>::max();
      for (const std::string& bytes : all) {
        if (bytes.size() != values.size_bytes())
          throw Error("in-process group: all_reduce lengths differ between ranks");
        std::int64_t v = 0;
        std::memcpy(&v, bytes.data() + i * sizeof v, sizeof v);
        out = op == ReduceOp::sum ? out + v : std::min(out, v);
      }
      values[i] = out;
    }
  }
};

}  // namespace

InProcessGroup::InProcessGroup(int size, std::string id, std::chrono::milliseconds timeout,
                               Transport transport)
    : shared_(std::make_shared<Shared>()) {
  if (size < 1) throw Error("in-process group: size must be at least 1");
  shared_->size = size;
  shared_->id = std::move(id);
  shared_->timeout = timeout;
  shared_->transport = transport;
  shared_->slots.resize(static_cast<std::size_t>(size));
  shared_->arrived.assign(static_cast<std::size_t>(size), false);
  for (int r = 0; r < size; ++r)
    shared_->delivered.push_back(std::make_unique<std::condition_variable>());
  shared_->traffic.resize(static_cast<std::size_t>(size));
}

InProcessGroup::~InProcessGroup() = default;

std::unique_ptr<Collective> InProcessGroup::member(int rank) const {
  if (rank < 0 || rank >= shared_->size)
    throw Error("in-process group: rank " + std::to_string(rank) + " is outside 0.." +
                std::to_string(shared_->size - 1));
  auto member = std::make_unique<Member>(shared_, rank);
  if (shared_->transport == Transport::gather_only)
    return std::make_unique<GatherOnlyMember>(std::move(member));
  if (shared_->transport == Transport::all_reduce)
    return std::make_unique<AllReduceMember>(std::move(member));
  return member;
}

InProcessGroup::Traffic InProcessGroup::traffic() const {
  std::lock_guard lock(shared_->mutex);
  Traffic out;
  for (const Shared::RankTraffic& t : shared_->traffic) {
    out.messages += t.messages;
    out.most_sent_by_a_rank = std::max(out.most_sent_by_a_rank, t.messages);
    out.most_bytes_sent = std::max(out.most_bytes_sent, t.bytes_sent);
    out.most_bytes_received = std::max(out.most_bytes_received, t.bytes_received);
    out.rounds = std::max(out.rounds, t.clock);
  }
  return out;
}

void InProcessGroup::reset_traffic() {
  std::lock_guard lock(shared_->mutex);
  shared_->traffic.assign(shared_->traffic.size(), {});
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

void Member::send(std::span<const int> to, std::uint64_t tag, std::string_view bytes) {
  InProcessGroup::Shared& s = *shared_;
  std::lock_guard lock(s.mutex);
  auto& mine = s.traffic[static_cast<std::size_t>(rank_)];
  for (int peer : to) {
    s.mailboxes[{peer, rank_, tag}] = {std::string(bytes), mine.clock + 1};
    mine.messages += 1;
    mine.bytes_sent += static_cast<std::int64_t>(bytes.size());
    s.delivered[static_cast<std::size_t>(peer)]->notify_one();
  }
}

std::vector<std::string> Member::receive(std::span<const int> from, std::uint64_t tag,
                                         int slack_rounds) {
  InProcessGroup::Shared& s = *shared_;
  std::unique_lock lock(s.mutex);
  auto all_there = [&] {
    return std::all_of(from.begin(), from.end(), [&](int peer) {
      return s.mailboxes.count({rank_, peer, tag}) > 0;
    });
  };
  const auto wait = tree_wait(s.timeout, slack_rounds);
  if (!s.delivered[static_cast<std::size_t>(rank_)]->wait_for(lock, wait, all_there)) {
    std::string missing;
    for (int peer : from)
      if (!s.mailboxes.count({rank_, peer, tag}))
        missing += (missing.empty() ? "" : ",") + std::to_string(peer);
    throw Error("group '" + s.id + "': timed out after " + std::to_string(wait.count()) +
                " ms waiting for rank(s) " + missing);
  }
  auto& mine = s.traffic[static_cast<std::size_t>(rank_)];
  std::vector<std::string> out;
  for (int peer : from) {
    auto it = s.mailboxes.find({rank_, peer, tag});
    mine.clock = std::max(mine.clock, it->second.clock);
    mine.bytes_received += static_cast<std::int64_t>(it->second.bytes.size());
    out.push_back(std::move(it->second.bytes));
    s.mailboxes.erase(it);
  }
  return out;
}

}  // namespace tunelock
