// The rendezvous's sockets, apart from what travels on them: a descriptor
// that closes itself, the rendezvous address looked up, and sends and reads
// that give up at a deadline (a peer that stops reading or never answers
// must not hang a rank).
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <string_view>
#include <utility>

namespace tunelock::launcher::bootstrap {

using Clock = std::chrono::steady_clock;

// A socket, closed when it goes.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// Milliseconds left until `deadline`, for poll(): never negative.
int remaining_ms(Clock::time_point deadline);

// Writes everything or throws; the peer is on loopback or a LAN.
void send_all(int fd, std::string_view bytes, Clock::time_point deadline);

// Reads one frame from a blocking-with-poll socket before the deadline.
std::pair<char, std::string> read_frame(int fd, Clock::time_point deadline,
                                        const std::string& what);

// `host`:`port` as a socket address. Throws Error when it cannot be resolved.
sockaddr_storage resolve(const std::string& host, int port, socklen_t* length);

}  // namespace tunelock::launcher::bootstrap
