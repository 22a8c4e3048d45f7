#include "roll_call.hpp"

#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>

#include "bootstrap_frames.hpp"
#include "bootstrap_socket.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/base/log.hpp"

namespace tunelock::launcher::bootstrap {
namespace {

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
  // Connections yet to say hello, oldest first, at most max_pending_: a
  // rank says hello as soon as it connects, so when strangers fill the
  // slots the oldest is the one dropped, and rank 0 never runs out of
  // descriptors for the ranks still to come.
  std::vector<Pending> pending_;
  std::size_t max_pending_;
  std::size_t strays_dropped_ = 0;
  // After accept fails for want of descriptors (EMFILE, ENFILE) the listener
  // stays readable; it is left out of the poll until then, instead of
  // spinning, and the deadline still holds.
  Clock::time_point accept_paused_until_{};
  bool told_out_of_descriptors_ = false;
  std::map<int, Fd> ranks_;  // rank -> its connection, awaiting the roster
  std::vector<std::string> addresses_;
  // Hellos of this job's shape but the wrong token or world size: the sender
  // is told why, and the timeout message names them, so a misconfigured rank
  // is not reported as one that "never arrived".
  std::vector<std::string> refused_;
};

}  // namespace

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

// A quarter of the descriptors this process may open, within 8..256.
std::size_t pending_limit() {
  rlimit limit{};
  const rlim_t open = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 ? limit.rlim_cur : 1024;
  return std::clamp<std::size_t>(open == RLIM_INFINITY ? 1024 : open / 4, 8, 256);
}

RollCall::RollCall(const Rendezvous& r, std::string_view my_address)
    : r_(r), max_pending_(pending_limit()), addresses_(static_cast<std::size_t>(r.world_size)) {
  addresses_[0] = std::string(my_address);
}

Polled RollCall::poll(const Fd& listener, Clock::time_point deadline) const {
  Polled polled;
  const bool paused = Clock::now() < accept_paused_until_;
  polled.fds.push_back({listener.get(), static_cast<short>(paused ? 0 : POLLIN), 0});
  for (const Pending& p : pending_) polled.fds.push_back({p.fd.get(), POLLIN, 0});
  polled.pending = pending_.size();
  for (const auto& [rank, fd] : ranks_) {
    polled.fds.push_back({fd.get(), POLLIN, 0});
    polled.joined.push_back(rank);
  }
  const int wait_ms = paused ? std::min(remaining_ms(deadline), remaining_ms(accept_paused_until_))
                             : remaining_ms(deadline);
  ::poll(polled.fds.data(), polled.fds.size(), wait_ms);
  // By the clock, not by an empty poll: a connection that keeps sending
  // would otherwise keep rank 0 past its deadline.
  polled.timed_out = Clock::now() >= deadline;
  return polled;
}

void RollCall::accept(const Fd& listener) {
  const int client = ::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC);
  if (client < 0) {
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
      if (!told_out_of_descriptors_) {
        logger().warn(
            "rendezvous: out of file descriptors ({}) with {} connections yet to say "
            "hello; accepting again shortly",
            std::strerror(errno), pending_.size());
        told_out_of_descriptors_ = true;
      }
      accept_paused_until_ = Clock::now() + std::chrono::milliseconds(100);
    }
    return;  // EAGAIN, ECONNABORTED, EINTR: the next poll tries again
  }
  if (pending_.size() >= max_pending_) {
    pending_.erase(pending_.begin());
    if (strays_dropped_++ == 0) {
      logger().warn(
          "rendezvous: more than {} connections have not said hello; dropping the "
          "oldest (strangers on the rendezvous port?)",
          max_pending_);
    }
  }
  pending_.push_back({Fd(client), {}});
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
    auto f = take_frame(p.buffer, kMaxHelloFrame);
    if (!f) return;
    if (f->first != kHelloFrame) throw Error("expected a hello");
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
    send_all(p.fd.get(), frame(kFailureFrame, refusal.for_sender),
             Clock::now() + std::chrono::seconds(1));
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
       "arrived (the process died, was killed, or gave up waiting)");
}

// The deadline passed: the ranks that never said hello are named, and the
// hellos refused meanwhile.
void RollCall::fail_for_missing() {
  std::string missing;
  for (int rank = 1; rank < r_.world_size; ++rank)
    if (!ranks_.count(rank)) missing += (missing.empty() ? "" : ",") + std::to_string(rank);
  std::string message = "rendezvous: rank(s) " + missing + " never arrived within " +
                        std::to_string(r_.timeout.count() / 1000) + " s";
  if (!refused_.empty()) message += "; refused meanwhile: " + summarise_refusals(refused_);
  if (strays_dropped_ > 0) {
    message += "; " + std::to_string(strays_dropped_) +
               " connection(s) that never said hello were dropped";
  }
  fail(message);
}

// Tells every joined rank why the rendezvous failed, then throws it.
void RollCall::fail(const std::string& message) {
  for (auto& [rank, fd] : ranks_) {
    try {
      send_all(fd.get(), frame(kFailureFrame, message), Clock::now() + std::chrono::seconds(1));
    } catch (const Error&) {
    }
  }
  throw Error(message);
}

void RollCall::send_roster(Clock::time_point deadline) {
  const std::string roster = frame(kRosterFrame, roster_bytes(r_.token, addresses_));
  for (auto& [rank, fd] : ranks_) send_all(fd.get(), roster, deadline);
}

}  // namespace tunelock::launcher::bootstrap
