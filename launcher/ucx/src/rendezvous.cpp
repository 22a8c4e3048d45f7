// Where ranks meet before UCX, from the environment, and every rank's
// part in it: rank 0 holds the roll call (roll_call.cpp), the others join
// it here.
#include "tunelock/launcher/rendezvous.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "bootstrap_frames.hpp"
#include "bootstrap_socket.hpp"
#include "roll_call.hpp"
#include "tunelock/base/error.hpp"

namespace tunelock::launcher {
namespace {

using bootstrap::as_string;
using bootstrap::Clock;
using bootstrap::Fd;
using bootstrap::frame;
using bootstrap::read_frame;
using bootstrap::remaining_ms;
using bootstrap::resolve;
using bootstrap::send_all;

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
  send_all(fd.get(),
           frame(bootstrap::kHelloFrame,
                 bootstrap::hello_bytes(r.token, r.rank, r.world_size, my_address)),
           deadline);
  // Rank 0 gives up at about the same moment and then says which ranks never
  // came: wait a little longer, so that message, not a bare timeout, is what
  // this rank reports.
  const auto [kind, body] =
      read_frame(fd.get(), deadline + std::chrono::seconds(5), "the roster from rank 0");
  // Rank 0 says who never came, or whoever holds its port says something:
  // printed escaped, on one line, bounded.
  if (kind == bootstrap::kFailureFrame) throw Error(bootstrap::printable_peer_text(body));
  const fb::Roster* roster = nullptr;
  try {
    if (kind != bootstrap::kRosterFrame) throw Error("not a roster");
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
  const int port = static_cast<int>(parse_integer(name, text, 1, 65535, "a TCP port (1-65535)"));
  if (port + offset > 65535) {  // tunelock meets one port above the trainer's own rendezvous
    throw Error(name + "=" + text + ": tunelock's rendezvous uses " + name + " + " +
                std::to_string(offset) + ", which is past 65535; use a " + name + " of at most " +
                std::to_string(65535 - offset) + ", or set TUNELOCK_MASTER_PORT");
  }
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
  return rendezvous.rank == 0 ? bootstrap::serve(rendezvous, my_address)
                              : join(rendezvous, my_address);
}

}  // namespace tunelock::launcher
