// Where a rank runs, handed to every other rank through the rendezvous in
// place of a bare UCX worker address. Two ranks with the same host
// identity (boot id and namespaces) can share memory: UCX's shared-memory
// transports are an order of magnitude faster than TCP on loopback, but do
// not support UCX's peer error handling, so such peers watch each other's
// process (a pidfd) to notice a death instead of a socket.
#pragma once

#include <string>
#include <string_view>

namespace tunelock::launcher {

struct PeerCard {
  std::string worker_address;  // UCX's, opaque
  std::string host;            // empty where it could not be read: never local
  int pid = 0;
};

// This process's host identity: the kernel's boot id and the net, pid, ipc
// and mount namespaces. Empty when /proc cannot tell.
std::string this_host_identity();

std::string encode_peer_card(const PeerCard& card);

// Throws Error naming `origin` when `bytes` is not a peer card.
PeerCard decode_peer_card(std::string_view bytes, const std::string& origin);

// Whether `a` and `b` may talk over shared memory.
inline bool same_host(const PeerCard& a, const PeerCard& b) {
  return !a.host.empty() && a.host == b.host;
}

// A peer process on this host, watched through a pidfd: readable once it
// has exited. Empty (fd() < 0) where the kernel has no pidfd_open or the
// process is already gone (see `gone()`).
class ProcessWatch {
 public:
  explicit ProcessWatch(int pid);
  ~ProcessWatch();
  ProcessWatch(ProcessWatch&& other) noexcept;
  ProcessWatch& operator=(ProcessWatch&&) = delete;
  ProcessWatch(const ProcessWatch&) = delete;
  ProcessWatch& operator=(const ProcessWatch&) = delete;

  int fd() const { return fd_; }
  bool gone() const { return gone_; }  // no such process when the watch began

 private:
  int fd_ = -1;
  bool gone_ = false;
};

}  // namespace tunelock::launcher
