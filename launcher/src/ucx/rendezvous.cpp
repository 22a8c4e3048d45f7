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

// Rank 0's listening socket, at the rendezvous address.
Fd listen_for_ranks(const Rendezvous& r) {
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
  return listener;
}

// One poll over the listener, the connections yet to say hello and the
// joined ranks' connections, in that order.
struct Polled {
  std::vector<pollfd> fds;
  std::size_t pending = 0;  // connections yet to say hello, from fds[1]
  std::vector<int> joined;  // ranks whose fds follow the pending ones
  bool timed_out = false;

  bool listener_ready() const { return fds[0].revents & POLLIN; }
  const pollfd& pending_fd(std::size_t i) const { return fds[1 + i]; }
  const pollfd& joined_fd(std::size_t j) const { return fds[1 + pending + j]; }
};

bool readable_or_closed(const pollfd& p) { return p.revents & (POLLIN | POLLHUP | POLLERR); }

// Rank 0's roll call: the connections it has accepted, the ranks that said
// hello (their connections await the roster) and what it refused, until
// every other rank has joined.
class RollCall {
 public:
  RollCall(const Rendezvous& r, std::string_view my_address);

  bool everyone_joined() const { return static_cast<int>(ranks_.size()) >= r_.world_size - 1; }
  Polled poll(const Fd& listener, Clock::time_point deadline) const;
  void accept(const Fd& listener);
  void read_hellos(const Polled& polled);
  void notice_lost_ranks(const Polled& polled);
  void forget_dropped();
  [[noreturn]] void fail_for_missing();
  void send_roster(Clock::time_point deadline);
  std::vector<std::string> take_addresses() { return std::move(addresses_); }

 private:
  struct Pending {
    Fd fd;
    std::string buffer;
  };

  void read_hello(Pending& p);
  void admit_or_refuse(Pending& p, const fb::Hello& hello);
  void refuse(Pending& p, const Refusal& refusal);
  static void drop(Pending& p, const std::string& why);
  [[noreturn]] void fail_for_lost(const std::vector<int>& lost);
  [[noreturn]] void fail(const std::string& message);

  const Rendezvous& r_;
  std::vector<Pending> pending_;
  std::map<int, Fd> ranks_;  // rank -> its connection, awaiting the roster
  std::vector<std::string> addresses_;
  // Hellos of this job's shape but the wrong token or world size: the sender
  // is told why, and the timeout message names them, so a misconfigured rank
  // is not reported as one that "never arrived".
  std::vector<std::string> refused_;
};

// Rank 0: listen, collect one valid hello per other rank, answer with the
// roster. Anything else that connects is dropped.
std::vector<std::string> serve(const Rendezvous& r, std::string_view my_address) {
  const auto deadline = Clock::now() + r.timeout;
  const Fd listener = listen_for_ranks(r);
  RollCall roll(r, my_address);
  while (!roll.everyone_joined()) {
    const Polled polled = roll.poll(listener, deadline);
    if (polled.timed_out) roll.fail_for_missing();
    if (polled.listener_ready()) roll.accept(listener);
    roll.read_hellos(polled);
    roll.notice_lost_ranks(polled);
    roll.forget_dropped();
  }
  roll.send_roster(deadline);
  return roll.take_addresses();
}

RollCall::RollCall(const Rendezvous& r, std::string_view my_address)
    : r_(r), addresses_(static_cast<std::size_t>(r.world_size)) {
  addresses_[0] = std::string(my_address);
}

Polled RollCall::poll(const Fd& listener, Clock::time_point deadline) const {
  Polled polled;
  polled.fds.push_back({listener.get(), POLLIN, 0});
  for (const Pending& p : pending_) polled.fds.push_back({p.fd.get(), POLLIN, 0});
  polled.pending = pending_.size();
  for (const auto& [rank, fd] : ranks_) {
    polled.fds.push_back({fd.get(), POLLIN, 0});
    polled.joined.push_back(rank);
  }
  polled.timed_out = ::poll(polled.fds.data(), polled.fds.size(), remaining_ms(deadline)) == 0;
  return polled;
}

void RollCall::accept(const Fd& listener) {
  const int client = ::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC);
  if (client >= 0) pending_.push_back({Fd(client), {}});
}

// Connections accepted since the poll are read from the next one.
void RollCall::read_hellos(const Polled& polled) {
  for (std::size_t i = 0; i < polled.pending; ++i)
    if (readable_or_closed(polled.pending_fd(i))) read_hello(pending_[i]);
}

// Reads what a connection has sent; once a whole frame is in, it must be
// a hello, which is judged.
void RollCall::read_hello(Pending& p) {
  char chunk[4096];
  const ssize_t n = ::recv(p.fd.get(), chunk, sizeof chunk, 0);
  if (n <= 0) {
    p.fd = Fd();
    return;
  }
  p.buffer.append(chunk, static_cast<std::size_t>(n));
  try {
    auto f = take_frame(p.buffer);
    if (!f) return;
    if (f->first != 'H') throw Error("expected a hello");
    admit_or_refuse(p, bootstrap::open_hello(f->second));
  } catch (const Error& e) {
    drop(p, e.what());
  }
}

// A hello is refused (see judge_hello), or its rank joins.
void RollCall::admit_or_refuse(Pending& p, const fb::Hello& hello) {
  const int rank = static_cast<int>(hello.rank());
  if (auto refusal = judge_hello(r_, hello, ranks_.count(rank) > 0)) {
    refuse(p, *refusal);
    return;
  }
  addresses_[static_cast<std::size_t>(rank)] = as_string(hello.worker_address());
  ranks_.emplace(rank, std::move(p.fd));
  logger().debug("rendezvous: rank {} said hello ({} of {} joined)", rank, ranks_.size(),
                 r_.world_size - 1);
}

void RollCall::refuse(Pending& p, const Refusal& refusal) {
  refused_.push_back(refusal.for_rank0);
  try {
    send_all(p.fd.get(), frame('F', refusal.for_sender), Clock::now() + std::chrono::seconds(1));
  } catch (const Error&) {
  }
  drop(p, refusal.for_rank0);
}

void RollCall::drop(Pending& p, const std::string& why) {
  logger().warn("rendezvous: dropped a connection: {}", why);
  p.fd = Fd();
}

// A joined rank sends nothing more until the roster: readable means
// closed (or stray bytes, dropped; a wake-up with nothing to read is
// neither).
void RollCall::notice_lost_ranks(const Polled& polled) {
  std::vector<int> lost;
  for (std::size_t j = 0; j < polled.joined.size(); ++j) {
    const pollfd& p = polled.joined_fd(j);
    if (!readable_or_closed(p)) continue;
    char chunk[256];
    const ssize_t n = ::recv(p.fd, chunk, sizeof chunk, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
      lost.push_back(polled.joined[j]);
  }
  if (lost.empty()) return;
  for (int rank : lost) ranks_.erase(rank);
  fail_for_lost(lost);
}

void RollCall::forget_dropped() {
  std::erase_if(pending_, [](const Pending& p) { return p.fd.get() < 0; });
}

// A rank that said hello and then went away (killed, crashed) before the
// roster: nobody can verify without it, so every rank is told at once
// instead of waiting for the timeout and blaming the network.
void RollCall::fail_for_lost(const std::vector<int>& lost) {
  std::string names;
  for (int rank : lost) names += (names.empty() ? "" : ",") + std::to_string(rank);
  fail("rendezvous: rank(s) " + names +
       " said hello and then closed the connection before every rank "
       "arrived (the process died or was killed)");
}

// The deadline passed: the ranks that never said hello are named, and the
// hellos refused meanwhile.
void RollCall::fail_for_missing() {
  std::string missing;
  for (int rank = 1; rank < r_.world_size; ++rank)
    if (!ranks_.count(rank)) missing += (missing.empty() ? "" : ",") + std::to_string(rank);
  std::string message = "rendezvous: rank(s) " + missing + " never arrived within " +
                        std::to_string(r_.timeout.count() / 1000) + " s";
  if (!refused_.empty()) {
    message += "; refused meanwhile: ";
    for (std::size_t i = 0; i < refused_.size(); ++i) message += (i ? "; " : "") + refused_[i];
  }
  fail(message);
}

// Tells every joined rank why the rendezvous failed, then throws it.
void RollCall::fail(const std::string& message) {
  for (auto& [rank, fd] : ranks_) {
    try {
      send_all(fd.get(), frame('F', message), Clock::now() + std::chrono::seconds(1));
    } catch (const Error&) {
    }
  }
  throw Error(message);
}

void RollCall::send_roster(Clock::time_point deadline) {
  const std::string roster = frame('R', roster_bytes(r_, addresses_));
  for (auto& [rank, fd] : ranks_) send_all(fd.get(), roster, deadline);
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
