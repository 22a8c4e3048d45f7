#include "bootstrap_socket.hpp"

#include <netdb.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "bootstrap_frames.hpp"
#include "tunelock/base/error.hpp"

namespace tunelock::launcher::bootstrap {

int remaining_ms(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::max<long long>(0, std::min<long long>(left, 1 << 30)));
}

void send_all(int fd, std::string_view bytes, Clock::time_point deadline) {
  while (!bytes.empty()) {
    // MSG_DONTWAIT: a peer that stops reading must not block past the deadline.
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, remaining_ms(deadline)) <= 0) throw Error("rendezvous: send timed out");
      continue;
    }
    throw Error(std::string("rendezvous: send failed: ") + std::strerror(errno));
  }
}

std::pair<char, std::string> read_frame(int fd, Clock::time_point deadline,
                                        const std::string& what) {
  std::string buffer;
  char chunk[4096];
  while (true) {
    if (auto f = take_frame(buffer)) return *f;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, remaining_ms(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) throw Error("rendezvous: timed out waiting for " + what);
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n == 0) throw Error("rendezvous: connection closed while waiting for " + what);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw Error("rendezvous: receive failed while waiting for " + what + ": " +
                  std::strerror(errno));
    }
    buffer.append(chunk, static_cast<std::size_t>(n));
  }
}

sockaddr_storage resolve(const std::string& host, int port, socklen_t* length) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (rc != 0 || !found)
    throw Error("rendezvous: cannot resolve " + host + ": " + ::gai_strerror(rc));
  sockaddr_storage out{};
  std::memcpy(&out, found->ai_addr, found->ai_addrlen);
  *length = found->ai_addrlen;
  ::freeaddrinfo(found);
  return out;
}

}  // namespace tunelock::launcher::bootstrap
