#include "local_interface.hpp"

#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <memory>

namespace tunelock::launcher {
namespace {

bool same_address(const sockaddr* a, const sockaddr* b) {
  if (!a || !b || a->sa_family != b->sa_family) return false;
  if (a->sa_family == AF_INET) {
    return reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr ==
           reinterpret_cast<const sockaddr_in*>(b)->sin_addr.s_addr;
  }
  if (a->sa_family == AF_INET6) {
    return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr,
                       &reinterpret_cast<const sockaddr_in6*>(b)->sin6_addr, sizeof(in6_addr)) == 0;
  }
  return false;
}

// The local address a datagram toward `target` would leave from: connect()
// on a UDP socket chooses the route and sends nothing.
bool source_address(const addrinfo& target, sockaddr_storage& source) {
  const int fd = ::socket(target.ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  socklen_t length = sizeof source;
  const bool ok = ::connect(fd, target.ai_addr, target.ai_addrlen) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&source), &length) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

std::optional<std::string> interface_toward(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 || !found)
    return std::nullopt;
  const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> target(found, ::freeaddrinfo);
  sockaddr_storage source{};
  if (!source_address(*target, source)) return std::nullopt;

  ifaddrs* interfaces = nullptr;
  if (::getifaddrs(&interfaces) != 0) return std::nullopt;
  const std::unique_ptr<ifaddrs, decltype(&::freeifaddrs)> list(interfaces, ::freeifaddrs);
  for (const ifaddrs* i = interfaces; i; i = i->ifa_next) {
    if (!(i->ifa_flags & IFF_UP)) continue;
    if (same_address(i->ifa_addr, reinterpret_cast<const sockaddr*>(&source))) return i->ifa_name;
  }
  return std::nullopt;
}

}  // namespace tunelock::launcher
