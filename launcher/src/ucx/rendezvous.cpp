#include "tunelock/launcher/rendezvous.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <flatbuffers/flatbuffers.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "bootstrap_frames.hpp"
#include "tunelock/error.hpp"
#include "tunelock/log.hpp"

namespace tunelock::launcher {
namespace {

using Clock = std::chrono::steady_clock;
using bootstrap::frame;
using bootstrap::take_frame;

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

int remaining_ms(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::max<long long>(0, std::min<long long>(left, 1 << 30)));
}

// Writes everything or throws; the peer is on loopback or a LAN.
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

// Reads one frame from a blocking-with-poll socket before the deadline.
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

std::string hello_bytes(const Rendezvous& r, std::string_view address) {
  flatbuffers::FlatBufferBuilder b;
  const auto token = b.CreateString(r.token);
  const auto bytes =
      b.CreateVector(reinterpret_cast<const std::uint8_t*>(address.data()), address.size());
  fb::FinishHelloBuffer(b, fb::CreateHello(b, 1, token, static_cast<std::uint32_t>(r.rank),
                                           static_cast<std::uint32_t>(r.world_size), bytes));
  return {reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize()};
}

std::string roster_bytes(const Rendezvous& r, const std::vector<std::string>& addresses) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::RosterEntry>> entries;
  for (std::size_t i = 0; i < addresses.size(); ++i) {
    const auto bytes = b.CreateVector(reinterpret_cast<const std::uint8_t*>(addresses[i].data()),
                                      addresses[i].size());
    entries.push_back(fb::CreateRosterEntry(b, static_cast<std::uint32_t>(i), bytes));
  }
  const auto token = b.CreateString(r.token);
  const auto vector = b.CreateVector(entries);
  b.Finish(fb::CreateRoster(b, 1, token, vector));
  return {reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize()};
}

std::string as_string(const flatbuffers::Vector<std::uint8_t>* bytes) {
  return {reinterpret_cast<const char*>(bytes->data()), bytes->size()};
}

// Why rank 0 turns a well-formed hello away, said twice: once for its own
// report of who never came, once to the rank itself so it can act on it.
struct Refusal {
  std::string for_rank0;
  std::string for_sender;
};

std::optional<Refusal> judge_hello(const Rendezvous& r, const fb::Hello& hello,
                                   bool rank_already_joined) {
  const std::string where = r.host + ":" + std::to_string(r.port);
  const int rank = static_cast<int>(hello.rank());
  const int size = static_cast<int>(hello.world_size());
  if (hello.token()->str() != r.token) {
    return Refusal{"a hello from rank " + std::to_string(rank) +
                       " with another job token (check TUNELOCK_JOB_TOKEN on that rank)",
                   "rendezvous: rank 0 at " + where +
                       " is another job's: the job token differs (TUNELOCK_JOB_TOKEN, else "
                       "SLURM_JOB_ID, else TORCHELASTIC_RUN_ID, must be the same on every rank)"};
  }
  if (size != r.world_size) {
    return Refusal{"rank " + std::to_string(rank) + " has WORLD_SIZE=" + std::to_string(size) +
                       " (this job has " + std::to_string(r.world_size) + ")",
                   "rendezvous: rank 0 at " + where +
                       " has WORLD_SIZE=" + std::to_string(r.world_size) +
                       " but this rank has WORLD_SIZE=" + std::to_string(size) +
                       "; every rank must be started with the same world size"};
  }
  if (rank < 1 || rank >= r.world_size) {
    return Refusal{"a hello from rank " + std::to_string(rank) + " of " + std::to_string(size),
                   "rendezvous: rank " + std::to_string(rank) + " is outside 1.." +
                       std::to_string(r.world_size - 1) +
                       " (WORLD_SIZE=" + std::to_string(r.world_size) + ")"};
  }
  if (rank_already_joined) {
    return Refusal{
        "a second hello for rank " + std::to_string(rank),
        "rendezvous: rank " + std::to_string(rank) +
            " has already joined; two processes were started with RANK=" + std::to_string(rank)};
  }
  return std::nullopt;
}

// Rank 0: listen, collect one valid hello per other rank, answer with the
// roster. Anything else that connects is dropped.
std::vector<std::string> serve(const Rendezvous& r, std::string_view my_address) {
  const auto deadline = Clock::now() + r.timeout;
  socklen_t length = 0;
  const sockaddr_storage address = resolve(r.host, r.port, &length);
  Fd listener(::socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (listener.get() < 0) throw Error(std::string("rendezvous: socket: ") + std::strerror(errno));
  const int one = 1;
  ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // TIME_WAIT only
  if (::bind(listener.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0) {
    throw Error("rendezvous: cannot listen on " + r.host + ":" + std::to_string(r.port) + ": " +
                std::strerror(errno) +
                (errno == EADDRINUSE
                     ? " (another job holds this port; set TUNELOCK_MASTER_PORT to a free one)"
                     : ""));
  }
  if (::listen(listener.get(), 128) != 0)
    throw Error(std::string("rendezvous: listen: ") + std::strerror(errno));

  struct Pending {
    Fd fd;
    std::string buffer;
  };
  std::vector<Pending> pending;
  std::map<int, Fd> ranks;  // rank -> its connection, awaiting the roster
  std::vector<std::string> addresses(static_cast<std::size_t>(r.world_size));
  addresses[0] = std::string(my_address);

  auto drop = [](Pending& p, const std::string& why) {
    logger().warn("rendezvous: dropped a connection: {}", why);
    p.fd = Fd();
  };
  // Hellos of this job's shape but the wrong token or world size: the sender
  // is told why, and the timeout message names them, so a misconfigured rank
  // is not reported as one that "never arrived".
  std::vector<std::string> refused;
  auto refuse = [&](Pending& p, const std::string& why, const std::string& to_sender) {
    refused.push_back(why);
    try {
      send_all(p.fd.get(), frame('F', to_sender), Clock::now() + std::chrono::seconds(1));
    } catch (const Error&) {
    }
    drop(p, why);
  };
  // A rank that said hello and then went away (killed, crashed) before the
  // roster: nobody can verify without it, so every rank is told at once
  // instead of waiting for the timeout and blaming the network.
  auto fail_for_lost = [&](const std::vector<int>& lost) {
    std::string names;
    for (int rank : lost) names += (names.empty() ? "" : ",") + std::to_string(rank);
    const std::string message = "rendezvous: rank(s) " + names +
                                " said hello and then closed the connection before every rank "
                                "arrived (the process died or was killed)";
    for (auto& [rank, fd] : ranks) {
      try {
        send_all(fd.get(), frame('F', message), Clock::now() + std::chrono::seconds(1));
      } catch (const Error&) {
      }
    }
    throw Error(message);
  };
  while (static_cast<int>(ranks.size()) < r.world_size - 1) {
    std::vector<pollfd> fds{{listener.get(), POLLIN, 0}};
    for (const Pending& p : pending) fds.push_back({p.fd.get(), POLLIN, 0});
    const std::size_t polled_pending = pending.size();
    std::vector<int> joined;  // their fds follow the pending ones
    for (const auto& [rank, fd] : ranks) {
      fds.push_back({fd.get(), POLLIN, 0});
      joined.push_back(rank);
    }
    if (::poll(fds.data(), fds.size(), remaining_ms(deadline)) == 0) {
      std::string missing;
      for (int rank = 1; rank < r.world_size; ++rank)
        if (!ranks.count(rank)) missing += (missing.empty() ? "" : ",") + std::to_string(rank);
      std::string message = "rendezvous: rank(s) " + missing + " never arrived within " +
                            std::to_string(r.timeout.count() / 1000) + " s";
      if (!refused.empty()) {
        message += "; refused meanwhile: ";
        for (std::size_t i = 0; i < refused.size(); ++i) message += (i ? "; " : "") + refused[i];
      }
      for (auto& [rank, fd] : ranks) {
        try {
          send_all(fd.get(), frame('F', message), Clock::now() + std::chrono::seconds(1));
        } catch (const Error&) {
        }
      }
      throw Error(message);
    }
    if (fds[0].revents & POLLIN) {
      const int client = ::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC);
      if (client >= 0) pending.push_back({Fd(client), {}});
    }
    for (std::size_t i = 1; i <= polled_pending; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Pending& p = pending[i - 1];
      char chunk[4096];
      const ssize_t n = ::recv(p.fd.get(), chunk, sizeof chunk, 0);
      if (n <= 0) {
        p.fd = Fd();
        continue;
      }
      p.buffer.append(chunk, static_cast<std::size_t>(n));
      try {
        auto f = take_frame(p.buffer);
        if (!f) continue;
        if (f->first != 'H') throw Error("expected a hello");
        const fb::Hello* hello = &bootstrap::open_hello(f->second);
        const int rank = static_cast<int>(hello->rank());
        if (auto refusal = judge_hello(r, *hello, ranks.count(rank) > 0)) {
          refuse(p, refusal->for_rank0, refusal->for_sender);
          continue;
        }
        addresses[static_cast<std::size_t>(rank)] = as_string(hello->worker_address());
        ranks.emplace(rank, std::move(p.fd));
        logger().debug("rendezvous: rank {} said hello ({} of {} joined)", rank, ranks.size(),
                       r.world_size - 1);
      } catch (const Error& e) {
        drop(p, e.what());
      }
    }
    // A joined rank sends nothing more until the roster: readable means
    // closed (or stray bytes, dropped).
    std::vector<int> lost;
    for (std::size_t j = 0; j < joined.size(); ++j) {
      const pollfd& p = fds[1 + polled_pending + j];
      if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char chunk[256];
      const ssize_t n = ::recv(p.fd, chunk, sizeof chunk, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
        lost.push_back(joined[j]);
    }
    if (!lost.empty()) {
      for (int rank : lost) ranks.erase(rank);
      fail_for_lost(lost);
    }
    std::erase_if(pending, [](const Pending& p) { return p.fd.get() < 0; });
  }
  const std::string roster = frame('R', roster_bytes(r, addresses));
  for (auto& [rank, fd] : ranks) send_all(fd.get(), roster, deadline);
  return addresses;
}

// A non-blocking connect bounded by the deadline (a host that drops SYNs
// would otherwise stall a blocking connect for minutes). Sets errno on failure.
bool connect_before(int fd, const sockaddr_storage& address, socklen_t length,
                    Clock::time_point deadline) {
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), length) == 0) return true;
  if (errno != EINPROGRESS) return false;
  pollfd p{fd, POLLOUT, 0};
  if (::poll(&p, 1, std::min(remaining_ms(deadline), 1000)) <= 0) {
    errno = ETIMEDOUT;
    return false;
  }
  int error = 0;
  socklen_t size = sizeof error;
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size);
  errno = error;
  return error == 0;
}

// Ranks 1..n-1: connect (retrying until rank 0 listens), say hello, read
// the roster.
std::vector<std::string> join(const Rendezvous& r, std::string_view my_address) {
  const auto deadline = Clock::now() + r.timeout;
  socklen_t length = 0;
  const sockaddr_storage address = resolve(r.host, r.port, &length);
  Fd fd;
  while (true) {
    fd = Fd(::socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (connect_before(fd.get(), address, length, deadline)) break;
    if (Clock::now() > deadline) {
      throw Error("rendezvous: could not reach rank 0 at " + r.host + ":" + std::to_string(r.port) +
                  " within " + std::to_string(r.timeout.count() / 1000) +
                  " s: " + std::strerror(errno));
    }
    ::usleep(50'000);
  }
  send_all(fd.get(), frame('H', hello_bytes(r, my_address)), deadline);
  // Rank 0 gives up at about the same moment and then says which ranks never
  // came: wait a little longer, so that message, not a bare timeout, is what
  // this rank reports.
  const auto [kind, body] =
      read_frame(fd.get(), deadline + std::chrono::seconds(5), "the roster from rank 0");
  if (kind == 'F') throw Error(body);  // rank 0 says who never came
  const fb::Roster* roster = nullptr;
  try {
    if (kind != 'R') throw Error("not a roster");
    roster = &bootstrap::open_roster(body);
  } catch (const Error&) {
    throw Error("rendezvous: malformed roster from " + r.host + ":" + std::to_string(r.port));
  }
  if (roster->token()->str() != r.token ||
      static_cast<int>(roster->entries()->size()) != r.world_size)
    throw Error("rendezvous: the roster from rank 0 is for another job");
  std::vector<std::string> addresses(static_cast<std::size_t>(r.world_size));
  for (const fb::RosterEntry* entry : *roster->entries()) {
    if (entry->rank() >= addresses.size())
      throw Error("rendezvous: roster names rank " + std::to_string(entry->rank()));
    addresses[entry->rank()] = as_string(entry->worker_address());
  }
  return addresses;
}

int parse_port(const std::string& name, const std::string& text, int offset) {
  int port = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (ec != std::errc{} || end != text.data() + text.size() || port + offset < 1 ||
      port + offset > 65535)
    throw Error(name + ": invalid value '" + text + "'; expected a TCP port (1-65535)");
  return port + offset;
}

}  // namespace

Rendezvous rendezvous_from_environment(const Environment& env, const RankInfo& rank,
                                       double timeout_s) {
  Rendezvous r;
  r.rank = rank.rank;
  r.world_size = rank.world_size;
  r.timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
  using namespace env_names;
  if (std::string host = env_value(env, kMasterAddr); !host.empty()) {
    r.host = host;
    const std::string port = env_value(env, kMasterPort);
    if (port.empty())
      throw Error(std::string(kMasterAddr) + " is set but " + std::string(kMasterPort) + " is not");
    r.port = parse_port(std::string(kMasterPort), port, 0);
  } else if (std::string fallback = env_value(env, "MASTER_ADDR"); !fallback.empty()) {
    r.host = fallback;
    const std::string port = env_value(env, "MASTER_PORT");
    if (port.empty()) throw Error("MASTER_ADDR is set but MASTER_PORT is not");
    r.port = parse_port("MASTER_PORT", port, 1);  // the trainer's own rendezvous uses MASTER_PORT
  } else {
    throw Error("verification across " + std::to_string(rank.world_size) +
                " ranks needs a rendezvous: set TUNELOCK_MASTER_ADDR and TUNELOCK_MASTER_PORT "
                "(or MASTER_ADDR and MASTER_PORT), or start the job with `tunelock launch`");
  }
  for (std::string_view name :
       {kJobToken, std::string_view("SLURM_JOB_ID"), std::string_view("TORCHELASTIC_RUN_ID")}) {
    if (std::string token = env_value(env, name); !token.empty()) {
      r.token = token;
      break;
    }
  }
  if (r.token.empty())
    throw Error(
        "no job token: set TUNELOCK_JOB_TOKEN (the same on every rank of the job), or run under "
        "SLURM or torchrun, or start the job with `tunelock launch`");
  return r;
}

std::vector<std::string> exchange_addresses(const Rendezvous& rendezvous,
                                            std::string_view my_address) {
  if (rendezvous.world_size == 1) return {std::string(my_address)};
  return rendezvous.rank == 0 ? serve(rendezvous, my_address) : join(rendezvous, my_address);
}

}  // namespace tunelock::launcher
