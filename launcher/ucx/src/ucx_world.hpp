// One context, one worker and one endpoint per peer per process (UcxWorld),
// shared by every group built on it. With ucx_world.cpp and
// ucx_exchange.cpp, the only code that touches UCX.
#pragma once

#include <poll.h>
#include <ucp/api/ucp.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "peer_card.hpp"
#include "tunelock/launcher/rendezvous.hpp"

namespace tunelock::launcher {

using Clock = std::chrono::steady_clock;

// The low bits of a UCX tag carry the sender's rank (see tag_base in
// ucx_collective.cpp).
constexpr int kRankBits = 20;

class UcxWorld {
 public:
  // Connects now: the addresses go through `exchange`.
  UcxWorld(Rendezvous rendezvous, const AddressExchange& exchange);
  ~UcxWorld();
  UcxWorld(const UcxWorld&) = delete;
  UcxWorld& operator=(const UcxWorld&) = delete;

  int rank() const { return rendezvous_.rank; }
  int size() const { return rendezvous_.world_size; }
  std::chrono::milliseconds timeout() const { return rendezvous_.timeout; }
  // How errors name `peer`: its world rank where this world is a subgroup.
  std::string name_of(int peer) const;

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
  void connect(const AddressExchange& exchange);
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

}  // namespace tunelock::launcher
