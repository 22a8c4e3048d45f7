// The only file that touches UCX. One context, one worker and one endpoint
// per peer per process (UcxWorld), shared by every group built on it.
#include "tunelock/launcher/ucx_collective.hpp"

#include <poll.h>
#include <ucp/api/ucp.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "peer_card.hpp"
#include "tunelock/error.hpp"
#include "tunelock/log.hpp"

namespace tunelock::launcher {

using Clock = std::chrono::steady_clock;

// A UCX tag: 19 bits of group name, 1 bit all-gather or tree, 24 bits of
// round, 20 bits of sender rank.
constexpr int kRankBits = 20;
std::uint64_t tag_base(const std::string& group, bool tree, std::uint64_t round) {
  const std::uint64_t name = XXH3_64bits(group.data(), group.size()) & 0x7ffff;
  return (name << 45) | (std::uint64_t{tree} << 44) | ((round & 0xffffff) << kRankBits);
}

class UcxWorld {
 public:
  explicit UcxWorld(Rendezvous rendezvous);
  ~UcxWorld();
  UcxWorld(const UcxWorld&) = delete;
  UcxWorld& operator=(const UcxWorld&) = delete;

  int rank() const { return rendezvous_.rank; }
  int size() const { return rendezvous_.world_size; }
  std::chrono::milliseconds timeout() const { return rendezvous_.timeout; }

  // Sends `bytes` to each of `send_to` and receives one message from each of
  // `receive_from`, all under `tag_base | sender`, waiting up to `wait`.
  // Throws naming the ranks of `receive_from` that died or never sent; a
  // send to a rank that is gone is dropped (the tree reports it from below).
  // With `sends_may_linger`, returns without waiting for the sends.
  std::map<int, std::string> exchange(const std::vector<int>& send_to,
                                      const std::vector<int>& receive_from, std::uint64_t tag_base,
                                      std::string_view bytes, std::chrono::milliseconds wait,
                                      bool sends_may_linger = false);

 private:
  void connect();
  void release();
  static void on_peer_error(void* arg, ucp_ep_h ep, ucs_status_t status);
  void check(ucs_status_t status, const char* what) const;
  // Progresses until `done()` or the deadline; sleeps on the event fd.
  bool wait(const std::function<bool()>& done, Clock::time_point deadline);
  class Round;  // one exchange's requests and messages

  Rendezvous rendezvous_;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  int event_fd_ = -1;
  ucp_ep_h endpoint(int peer);
  void notice_exits(const std::vector<pollfd>& polled, const std::vector<int>& watched);
  PeerCard me_;
  std::vector<PeerCard> cards_;  // every rank's, by world rank
  std::chrono::microseconds poll_first_{0};
  std::vector<ucp_ep_h> endpoints_;  // by world rank; null until first used
  // Peers on this host reached over shared memory, which has no peer error
  // handling: their processes are watched instead; a watch ends with its exit.
  std::vector<bool> shared_memory_;  // by world rank
  std::map<int, ProcessWatch> watches_;
  struct ErrorArg {
    UcxWorld* world;
    int rank;
  };
  std::vector<ErrorArg> error_args_;
  std::map<int, std::string> failed_;  // rank -> why

  // Requests that outlived their round (a cancelled receive, a send a slow
  // peer has not pulled yet) keep their buffer alive here until UCX is done
  // with them; freeing either earlier would let UCX touch freed memory.
  struct InFlight {
    void* request;
    std::shared_ptr<std::string> buffer;
  };
  std::vector<InFlight> in_flight_;
  void reap_in_flight();

  // Send buffers, reused once no request holds them: a fresh one at each
  // check would land on untouched pages (see TreeScratch in the engine).
  std::vector<std::shared_ptr<std::string>> send_buffers_;
  std::shared_ptr<std::string> send_buffer(std::string_view bytes);
};

void UcxWorld::reap_in_flight() {
  std::erase_if(in_flight_, [](const InFlight& f) {
    if (ucp_request_check_status(f.request) == UCS_INPROGRESS) return false;
    ucp_request_free(f.request);
    return true;
  });
}

std::shared_ptr<std::string> UcxWorld::send_buffer(std::string_view bytes) {
  for (const auto& buffer : send_buffers_) {
    if (buffer.use_count() == 1) {  // only the pool holds it
      buffer->assign(bytes);
      return buffer;
    }
  }
  return send_buffers_.emplace_back(std::make_shared<std::string>(bytes));
}

void UcxWorld::check(ucs_status_t status, const char* what) const {
  if (status != UCS_OK) throw Error(std::string("UCX: ") + what + ": " + ucs_status_string(status));
}

void UcxWorld::on_peer_error(void* arg, ucp_ep_h, ucs_status_t status) {
  auto* error = static_cast<ErrorArg*>(arg);
  error->world->failed_.emplace(error->rank, ucs_status_string(status));
}

UcxWorld::UcxWorld(Rendezvous rendezvous) : rendezvous_(std::move(rendezvous)) {
  if (rendezvous_.world_size > (1 << kRankBits))
    throw Error("verify: at most " + std::to_string(1 << kRankBits) +
                " ranks are supported (rank numbers travel in 20 bits of a UCX tag)");
  try {
    connect();
  } catch (...) {
    release();  // the destructor does not run for a throwing constructor
    throw;
  }
}

void UcxWorld::connect() {
  ucp_config_t* config = nullptr;
  check(ucp_config_read(nullptr, nullptr, &config), "reading configuration");
  // Eager messages only, unless the user says otherwise: a rendezvous
  // transfer makes the receiver read the sender's memory, and on shared
  // memory (no peer error handling) a sender that dies meanwhile would make
  // that read fail fatally instead of being reported as a lost rank.
  if (!std::getenv("UCX_RNDV_THRESH")) ucp_config_modify(config, "RNDV_THRESH", "inf");
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;
  const ucs_status_t init = ucp_init(&params, config, &context_);
  ucp_config_release(config);
  check(init, "initialising");
  ucp_worker_params_t worker_params{};
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
  check(ucp_worker_create(context_, &worker_params, &worker_), "creating a worker");
  check(ucp_worker_get_efd(worker_, &event_fd_), "getting the worker's event fd");

  ucp_address_t* address = nullptr;
  std::size_t length = 0;
  check(ucp_worker_get_address(worker_, &address, &length), "getting the worker address");
  me_.worker_address.assign(reinterpret_cast<const char*>(address), length);
  ucp_worker_release_address(worker_, address);
  me_.host = this_host_identity();
  me_.pid = static_cast<int>(::getpid());

  const std::vector<std::string> cards = exchange_addresses(rendezvous_, encode_peer_card(me_));
  for (std::size_t r = 0; r < cards.size(); ++r)
    cards_.push_back(decode_peer_card(cards[r], "verify: rank " + std::to_string(r)));
  // Peers on this host are watched from now on, while their pids surely
  // name them (opened later, a pid could belong to another process).
  shared_memory_.assign(cards_.size(), false);
  for (std::size_t r = 0; r < cards_.size(); ++r) {
    const int peer = static_cast<int>(r);
    if (peer == rank() || !same_host(me_, cards_[r])) continue;
    ProcessWatch watch(cards_[r].pid);
    if (watch.gone()) failed_.emplace(peer, "its process has exited");
    if (watch.fd() < 0) continue;  // no pidfd here: TCP with peer error handling
    shared_memory_[r] = true;
    watches_.emplace(peer, std::move(watch));
  }
  const auto ranks_here = std::count_if(cards_.begin(), cards_.end(),
                                        [&](const PeerCard& card) { return same_host(me_, card); });
  if (ranks_here <= static_cast<long>(std::max(1u, std::thread::hardware_concurrency())))
    poll_first_ = std::chrono::microseconds(50);
  endpoints_.assign(cards_.size(), nullptr);
  error_args_.resize(cards_.size());
}

// Endpoints are made on first use: along the tree a rank talks to its
// parent and children only, so a large world does not pay for N endpoints
// per rank. A receive makes its sender's endpoint too, so that a peer that
// dies is noticed through it rather than by the timeout.
ucp_ep_h UcxWorld::endpoint(int peer) {
  const auto r = static_cast<std::size_t>(peer);
  if (endpoints_[r]) return endpoints_[r];
  error_args_[r] = {this, peer};
  // A peer on this host whose process we watch: shared memory, and its exit
  // noticed through the watch. Any other: TCP, where UCX's peer error
  // handling turns a dead peer into an error, not a hang.
  ucp_ep_params_t ep{};
  ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                  UCP_EP_PARAM_FIELD_ERR_HANDLER;
  ep.address = reinterpret_cast<const ucp_address_t*>(cards_[r].worker_address.data());
  ep.err_mode = shared_memory_[r] ? UCP_ERR_HANDLING_MODE_NONE : UCP_ERR_HANDLING_MODE_PEER;
  ep.err_handler.cb = &UcxWorld::on_peer_error;
  ep.err_handler.arg = &error_args_[r];
  check(ucp_ep_create(worker_, &ep, &endpoints_[r]), "connecting to a peer");
  return endpoints_[r];
}

UcxWorld::~UcxWorld() { release(); }

void UcxWorld::release() {
  // Flush, so our last sends reach peers still reading them; a peer that is
  // gone makes the close fail, and we give up after a moment either way.
  std::vector<void*> closing;
  for (std::size_t r = 0; r < endpoints_.size(); ++r) {
    ucp_ep_h ep = endpoints_[r];
    if (!ep) continue;
    ucp_request_param_t param{};
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    // A forced close is only defined with peer error handling; a watched
    // peer's close needs nothing from the peer and ends by the deadline.
    param.flags =
        failed_.count(static_cast<int>(r)) && !shared_memory_[r] ? UCP_EP_CLOSE_FLAG_FORCE : 0;
    void* request = ucp_ep_close_nbx(ep, &param);
    if (UCS_PTR_IS_PTR(request)) closing.push_back(request);
  }
  const auto deadline = Clock::now() + std::chrono::seconds(2);
  for (void* request : closing) {
    while (ucp_request_check_status(request) == UCS_INPROGRESS && Clock::now() < deadline)
      ucp_worker_progress(worker_);
    ucp_request_free(request);
  }
  const auto reap_deadline = Clock::now() + std::chrono::seconds(1);
  while (!in_flight_.empty() && Clock::now() < reap_deadline) {
    if (worker_) ucp_worker_progress(worker_);
    reap_in_flight();
  }
  endpoints_.clear();
  if (worker_) ucp_worker_destroy(worker_);  // cancels what is left; buffers are freed after it
  in_flight_.clear();
  worker_ = nullptr;
  if (context_) ucp_cleanup(context_);
  context_ = nullptr;
}

bool UcxWorld::wait(const std::function<bool()>& done, Clock::time_point deadline) {
  // On a quiet machine a peer's message lands within microseconds: polling
  // for a short, bounded while first saves the event fd's wake-up (tens of
  // microseconds per tree hop); past it, the wait sleeps on the fd. Where
  // this host runs more ranks than it has cores, a polling rank would take
  // the core a peer needs to send, so the wait sleeps at once.
  const auto poll_until = Clock::now() + poll_first_;
  while (true) {
    while (ucp_worker_progress(worker_) != 0) {
    }
    if (done()) return true;
    const auto now = Clock::now();
    if (now >= deadline) return false;
    if (now < poll_until) continue;
    const ucs_status_t armed = ucp_worker_arm(worker_);
    if (armed == UCS_ERR_BUSY) continue;  // events arrived meanwhile: progress again
    check(armed, "arming the worker");
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    // Bounded sleep: some failures are noticed by progress, not by an event.
    std::vector<pollfd> polled{{event_fd_, POLLIN, 0}};
    std::vector<int> watched;
    for (const auto& [peer, watch] : watches_) {
      polled.push_back({watch.fd(), POLLIN, 0});
      watched.push_back(peer);
    }
    ::poll(polled.data(), polled.size(), static_cast<int>(std::clamp<long long>(left, 0, 200)));
    notice_exits(polled, watched);
  }
}

// A watched peer's pidfd is readable once its process has exited, for good:
// the exit is recorded and the watch dropped, so later sleeps do not wake
// for it again.
void UcxWorld::notice_exits(const std::vector<pollfd>& polled, const std::vector<int>& watched) {
  for (std::size_t i = 0; i < watched.size(); ++i) {
    if (polled[i + 1].revents == 0) continue;
    failed_.emplace(watched[i], "its process exited");
    watches_.erase(watched[i]);
  }
}

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
      names += (names.empty() ? "" : ", ") + std::to_string(p) + " (" + world_.failed_.at(p) + ")";
  throw Error("verify: lost rank(s) " + names + "; a peer process died or its host went away");
}

void UcxWorld::Round::throw_timed_out(std::chrono::milliseconds wait_for) const {
  std::string missing;
  for (int p : receive_from_)
    if (!received_.count(p)) missing += (missing.empty() ? "" : ",") + std::to_string(p);
  throw Error(
      "verify: timed out after " + std::to_string(wait_for.count()) + " ms waiting for rank(s) " +
      missing +
      " (TUNELOCK_VERIFY_TIMEOUT sets the limit; every rank must call verify at the same step)");
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
  rank_in_group_ = rendezvous.rank;
  pending_ = std::make_shared<const Rendezvous>(std::move(rendezvous));
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
  rank_in_group_ = static_cast<int>(found - members_.begin());
}

UcxCollective::~UcxCollective() = default;

UcxWorld& UcxCollective::world() {
  UcxWorldSlot& slot = *shared_world_;
  if (slot.world) return *slot.world;
  if (!slot.failure.empty()) throw Error(slot.failure);
  try {
    slot.world = std::make_shared<UcxWorld>(*pending_);  // lazy: first use
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
