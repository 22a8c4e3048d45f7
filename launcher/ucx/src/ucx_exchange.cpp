// One exchange over the UcxWorld: sends posted, messages received as they
// arrive, waits bounded by a deadline, requests still open parked so their
// buffers outlive them, and errors that name the ranks lost or missing.
#include <algorithm>
#include <set>

#include "tunelock/base/error.hpp"
#include "ucx_world.hpp"

namespace tunelock::launcher {

// One exchange, from the sends it posts to the messages it hands back: the
// requests still open and what has arrived, per peer.
class UcxWorld::Round {
 public:
  Round(UcxWorld& world, const std::vector<int>& receive_from, std::uint64_t tag_base,
        std::string_view bytes);

  void post_sends(const std::vector<int>& send_to);
  // Waits for every message, then for the sends; requests still open when
  // the waits end go to in_flight_. False if a message was still missing at
  // the deadline.
  bool await(Clock::time_point deadline, bool sends_may_linger);
  void throw_if_a_peer_was_lost() const;
  [[noreturn]] void throw_timed_out(std::chrono::milliseconds wait_for) const;
  std::map<int, std::string> take_received() { return std::move(received_); }

 private:
  struct Sending {
    int peer;
    void* request;
  };
  struct Receiving {
    int peer;
    std::shared_ptr<std::string> buffer;
    void* request;
  };

  void receive_arrived();
  void post_receive(int peer, ucp_tag_message_h message, std::size_t length);
  void collect_receives();
  bool lost(int peer) const;
  bool a_peer_was_lost() const;
  bool sends_done() const;
  void park_sends(bool cancel);
  void park_outstanding();

  UcxWorld& world_;
  const std::vector<int>& receive_from_;
  const std::uint64_t tag_base_;
  // Owned by every send request of this round, and by in_flight_ after it.
  const std::shared_ptr<std::string> payload_;
  std::vector<Sending> sends_;
  std::set<int> waiting_;  // peers whose message has not arrived yet
  std::vector<Receiving> receiving_;
  std::map<int, std::string> received_;
};

std::map<int, std::string> UcxWorld::exchange(const std::vector<int>& send_to,
                                              const std::vector<int>& receive_from,
                                              std::uint64_t tag_base, std::string_view bytes,
                                              std::chrono::milliseconds wait_for,
                                              bool sends_may_linger) {
  reap_in_flight();
  const auto deadline = Clock::now() + wait_for;
  Round round(*this, receive_from, tag_base, bytes);
  for (int peer : receive_from) endpoint(peer);  // so a dead sender is noticed
  for (int peer : send_to) endpoint(peer);       // before any send is posted: it may throw
  round.post_sends(send_to);
  const bool complete = round.await(deadline, sends_may_linger);
  round.throw_if_a_peer_was_lost();
  if (!complete) round.throw_timed_out(wait_for);
  return round.take_received();
}

UcxWorld::Round::Round(UcxWorld& world, const std::vector<int>& receive_from,
                       std::uint64_t tag_base, std::string_view bytes)
    : world_(world),
      receive_from_(receive_from),
      tag_base_(tag_base),
      payload_(world.send_buffer(bytes)),
      waiting_(receive_from.begin(), receive_from.end()) {}

void UcxWorld::Round::post_sends(const std::vector<int>& send_to) {
  const std::uint64_t self_tag = tag_base_ | static_cast<std::uint64_t>(world_.rank());
  for (int peer : send_to) {
    ucp_request_param_t param{};
    void* request = ucp_tag_send_nbx(world_.endpoint(peer), payload_->data(), payload_->size(),
                                     self_tag, &param);
    if (UCS_PTR_IS_ERR(request))
      world_.failed_.emplace(peer, ucs_status_string(UCS_PTR_STATUS(request)));
    else if (request)
      sends_.push_back({peer, request});
  }
}

bool UcxWorld::Round::await(Clock::time_point deadline, bool sends_may_linger) {
  bool complete = false;
  try {
    complete = world_.wait(
        [&] {
          receive_arrived();
          collect_receives();
          return received_.size() == receive_from_.size() || a_peer_was_lost();
        },
        deadline);
    // Our sends must reach live peers before this rank may move on or exit:
    // wait for them up to the same deadline. Or, when the caller has more to
    // wait for anyway (the tree: up, then the verdict down), leave them to
    // complete meanwhile; release() flushes what is left before exit.
    if (sends_may_linger) park_sends(false);
    world_.wait([&] { return sends_done(); }, deadline);
  } catch (...) {
    park_outstanding();
    throw;
  }
  park_outstanding();
  return complete;
}

// Posts a receive for each awaited message that has arrived.
void UcxWorld::Round::receive_arrived() {
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    ucp_tag_recv_info_t info{};
    ucp_tag_message_h message = ucp_tag_probe_nb(
        world_.worker_, tag_base_ | static_cast<std::uint64_t>(*it), ~std::uint64_t{0}, 1, &info);
    if (!message) {
      ++it;
      continue;
    }
    post_receive(*it, message, info.length);
    it = waiting_.erase(it);
  }
}

void UcxWorld::Round::post_receive(int peer, ucp_tag_message_h message, std::size_t length) {
  auto buffer = std::make_shared<std::string>(length, '\0');
  ucp_request_param_t param{};
  void* request =
      ucp_tag_msg_recv_nbx(world_.worker_, buffer->data(), buffer->size(), message, &param);
  if (UCS_PTR_IS_ERR(request))
    world_.failed_.emplace(peer, ucs_status_string(UCS_PTR_STATUS(request)));
  else if (!request)
    received_.emplace(peer, std::move(*buffer));
  else
    receiving_.push_back({peer, std::move(buffer), request});
}

// Receives that have completed give their message, or their peer's failure.
void UcxWorld::Round::collect_receives() {
  std::erase_if(receiving_, [&](Receiving& r) {
    const ucs_status_t status = ucp_request_check_status(r.request);
    if (status == UCS_INPROGRESS) return false;
    ucp_request_free(r.request);
    if (status == UCS_OK)
      received_.emplace(r.peer, std::move(*r.buffer));
    else
      world_.failed_.emplace(r.peer, ucs_status_string(status));
    return true;
  });
}

// A peer counts as lost only if its message for this round never came: a
// rank that sent and then finished is not a failure.
bool UcxWorld::Round::lost(int peer) const {
  return world_.failed_.count(peer) > 0 && !received_.count(peer);
}

bool UcxWorld::Round::a_peer_was_lost() const {
  return std::any_of(receive_from_.begin(), receive_from_.end(),
                     [&](int peer) { return lost(peer); });
}

// Each send has completed, or its peer has failed.
bool UcxWorld::Round::sends_done() const {
  return std::all_of(sends_.begin(), sends_.end(), [&](const Sending& send) {
    return world_.failed_.count(send.peer) ||
           ucp_request_check_status(send.request) != UCS_INPROGRESS;
  });
}

// Sends still in progress go to in_flight_ with the payload (cancelled
// first, with `cancel`); the others are freed.
void UcxWorld::Round::park_sends(bool cancel) {
  for (const Sending& send : sends_) {
    if (ucp_request_check_status(send.request) == UCS_INPROGRESS) {
      if (cancel) ucp_request_cancel(world_.worker_, send.request);
      world_.in_flight_.push_back({send.request, payload_});
    } else {
      ucp_request_free(send.request);
    }
  }
  sends_.clear();
}

// Requests still open when this round ends, or when a wait throws, go to
// in_flight_ with their buffers: UCX may still touch them.
void UcxWorld::Round::park_outstanding() {
  park_sends(true);
  for (Receiving& r : receiving_) {
    ucp_request_cancel(world_.worker_, r.request);
    world_.in_flight_.push_back({r.request, r.buffer});
  }
  receiving_.clear();
}

void UcxWorld::Round::throw_if_a_peer_was_lost() const {
  const bool lost_some = received_.size() < receive_from_.size() && a_peer_was_lost();
  if (!lost_some) return;
  std::string names;
  for (int p : receive_from_)
    if (lost(p))
      names += (names.empty() ? "" : ", ") + world_.name_of(p) + " (" + world_.failed_.at(p) + ")";
  throw Error("verify: lost rank(s) " + names + "; a peer process died or its host went away");
}

void UcxWorld::Round::throw_timed_out(std::chrono::milliseconds wait_for) const {
  std::string missing;
  for (int p : receive_from_)
    if (!received_.count(p)) missing += (missing.empty() ? "" : ",") + world_.name_of(p);
  throw Error(
      "verify: timed out after " + std::to_string(wait_for.count()) + " ms waiting for rank(s) " +
      missing +
      " (TUNELOCK_VERIFY_TIMEOUT sets the limit; every rank must call verify at the same step)");
}

}  // namespace tunelock::launcher
