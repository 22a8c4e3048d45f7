// The UCX collective's groups: the world and its subgroups, each an
// all-gather or a tree round over the one UcxWorld they share, their
// messages kept apart by tag.
#include "tunelock/launcher/ucx_collective.hpp"

#include <xxhash.h>

#include <algorithm>
#include <map>
#include <set>

#include "tunelock/base/error.hpp"
#include "ucx_world.hpp"

namespace tunelock::launcher {

// A UCX tag: 19 bits of group name, 1 bit all-gather or tree, 24 bits of
// round, kRankBits (20) bits of sender rank.
std::uint64_t tag_base(const std::string& group, bool tree, std::uint64_t round) {
  const std::uint64_t name = XXH3_64bits(group.data(), group.size()) & 0x7ffff;
  return (name << 45) | (std::uint64_t{tree} << 44) | ((round & 0xffffff) << kRankBits);
}

// The world, once connected, or why connecting failed: a rendezvous that
// failed (a rank lost or never came) is not tried again by a later send or
// group, which would wait out the whole timeout a second time.
struct UcxWorldSlot {
  std::shared_ptr<UcxWorld> world;
  std::string failure;
};

UcxCollective::UcxCollective(Rendezvous rendezvous)
    : shared_world_(std::make_shared<UcxWorldSlot>()), name_("world") {
  // The world is created on first use; members_ and rank are known now.
  members_.resize(static_cast<std::size_t>(rendezvous.world_size));
  for (int r = 0; r < rendezvous.world_size; ++r) members_[static_cast<std::size_t>(r)] = r;
  named_ranks_ = members_;
  rank_in_group_ = rendezvous.rank;
  pending_ = std::make_shared<const Rendezvous>(std::move(rendezvous));
}

UcxCollective::UcxCollective(Rendezvous shape, const AddressExchange& exchange, std::string name)
    : shared_world_(std::make_shared<UcxWorldSlot>()), name_(std::move(name)) {
  const auto size = static_cast<std::size_t>(shape.world_size);
  if (!shape.rank_names.empty() && shape.rank_names.size() != size)
    throw Error("group '" + name_ + "': " + std::to_string(shape.rank_names.size()) +
                " rank names for " + std::to_string(size) + " ranks");
  for (int r = 0; r < shape.world_size; ++r) members_.push_back(r);
  named_ranks_ = shape.rank_names.empty() ? members_ : shape.rank_names;
  rank_in_group_ = shape.rank;
  pending_ = std::make_shared<const Rendezvous>(shape);  // its rank names, for subgroups
  shared_world_->world = std::make_shared<UcxWorld>(std::move(shape), exchange);
}

UcxCollective::UcxCollective(const UcxCollective& world, std::vector<int> ranks, std::string name)
    : shared_world_(world.shared_world_),
      pending_(world.pending_),
      members_(std::move(ranks)),
      name_(std::move(name)) {
  const int me = world.members_[static_cast<std::size_t>(world.rank_in_group_)];
  auto found = std::find(members_.begin(), members_.end(), me);
  if (found == members_.end())
    throw Error("subgroup '" + name_ + "' does not include this rank (" + std::to_string(me) + ")");
  if (std::set<int>(members_.begin(), members_.end()).size() != members_.size())
    throw Error("subgroup '" + name_ + "' lists a rank twice");
  const std::vector<int>& names = pending_->rank_names;
  for (int r : members_) {
    if (r < 0 || r >= pending_->world_size)
      throw Error("subgroup '" + name_ + "': rank " + std::to_string(r) + " is not in the world");
    named_ranks_.push_back(names.empty() ? r : names[static_cast<std::size_t>(r)]);
  }
  rank_in_group_ = static_cast<int>(found - members_.begin());
}

UcxCollective::~UcxCollective() = default;

UcxWorld& UcxCollective::world() {
  UcxWorldSlot& slot = *shared_world_;
  if (slot.world) return *slot.world;
  if (!slot.failure.empty()) throw Error(slot.failure);
  try {
    const Rendezvous& rendezvous = *pending_;
    slot.world = std::make_shared<UcxWorld>(  // lazy: first use
        rendezvous,
        [&rendezvous](std::string_view mine) { return exchange_addresses(rendezvous, mine); });
  } catch (const Error& e) {
    slot.failure = e.what();
    throw;
  }
  return *slot.world;
}

std::vector<std::string> UcxCollective::all_gather(std::string_view payload) {
  UcxWorld& w = world();
  std::vector<int> peers;
  for (int r : members_)
    if (r != w.rank()) peers.push_back(r);
  std::map<int, std::string> received =
      w.exchange(peers, peers, tag_base(name_, false, ++round_), payload, w.timeout());
  std::vector<std::string> out;
  out.reserve(members_.size());
  for (int r : members_)
    out.push_back(r == w.rank() ? std::string(payload) : std::move(received.at(r)));
  return out;
}

std::vector<int> UcxCollective::world_ranks(std::span<const int> group_ranks) const {
  std::vector<int> out;
  out.reserve(group_ranks.size());
  for (int r : group_ranks) out.push_back(members_.at(static_cast<std::size_t>(r)));
  return out;
}

void UcxCollective::send(std::span<const int> to, std::uint64_t tag, std::string_view bytes) {
  UcxWorld& w = world();
  w.exchange(world_ranks(to), {}, tag_base(name_, true, tag), bytes, w.timeout(), true);
}

std::vector<std::string> UcxCollective::receive(std::span<const int> from, std::uint64_t tag,
                                                int slack_rounds) {
  UcxWorld& w = world();
  const std::vector<int> peers = world_ranks(from);
  std::map<int, std::string> got =
      w.exchange({}, peers, tag_base(name_, true, tag), {}, tree_wait(w.timeout(), slack_rounds));
  std::vector<std::string> out;
  out.reserve(peers.size());
  for (int p : peers) out.push_back(std::move(got.at(p)));
  return out;
}

std::unique_ptr<Collective> world_collective(const Environment& env, double timeout_s) {
  const RankInfo rank = rank_from_environment(env);
  if (rank.world_size == 1) return std::make_unique<SoloCollective>();
  return std::make_unique<UcxCollective>(rendezvous_from_environment(env, rank, timeout_s));
}

}  // namespace tunelock::launcher
