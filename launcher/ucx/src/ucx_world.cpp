// UcxWorld's life: connecting through the rendezvous, endpoints made on
// first use, waits that sleep on the worker's event fd and notice peers
// that die, and the flush and release at the end. One exchange is in
// ucx_exchange.cpp.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "local_interface.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/base/log.hpp"
#include "ucx_world.hpp"

namespace tunelock::launcher {

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

std::string UcxWorld::name_of(int peer) const {
  const auto& names = rendezvous_.rank_names;
  return std::to_string(names.empty() ? peer : names.at(static_cast<std::size_t>(peer)));
}

UcxWorld::UcxWorld(Rendezvous rendezvous, const AddressExchange& exchange)
    : rendezvous_(std::move(rendezvous)) {
  if (rendezvous_.world_size > (1 << kRankBits))
    throw Error("verify: at most " + std::to_string(1 << kRankBits) +
                " ranks are supported (rank numbers travel in 20 bits of a UCX tag)");
  try {
    connect(exchange);
  } catch (...) {
    release();  // the destructor does not run for a throwing constructor
    throw;
  }
}

void UcxWorld::connect(const AddressExchange& exchange) {
  ucp_config_t* config = nullptr;
  check(ucp_config_read(nullptr, nullptr, &config), "reading configuration");
  // Eager messages only, unless the user says otherwise: a rendezvous
  // transfer makes the receiver read the sender's memory, and on shared
  // memory (no peer error handling) a sender that dies meanwhile would make
  // that read fail fatally instead of being reported as a lost rank.
  if (!std::getenv("UCX_RNDV_THRESH")) ucp_config_modify(config, "RNDV_THRESH", "inf");
  // Listen on the interface the rendezvous goes through, not on every one for
  // the whole job (loopback for a local job), unless the user chose devices.
  if (!std::getenv("UCX_NET_DEVICES")) {
    const auto device = rendezvous_.host.empty()
                            ? std::nullopt
                            : interface_toward(rendezvous_.host, rendezvous_.port);
    if (device) {
      ucp_config_modify(config, "NET_DEVICES", device->c_str());
      logger().debug("verify: UCX uses network device {} (the rendezvous address's)", *device);
    }
  }
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

  const std::vector<std::string> cards = exchange(encode_peer_card(me_));
  if (cards.size() != static_cast<std::size_t>(size()))
    throw Error("verify: the address exchange returned " + std::to_string(cards.size()) +
                " addresses for " + std::to_string(size()) + " ranks");
  for (std::size_t r = 0; r < cards.size(); ++r)
    cards_.push_back(decode_peer_card(cards[r], "verify: rank " + name_of(static_cast<int>(r))));
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

}  // namespace tunelock::launcher
