// `tunelock launch -n N -- CMD...`: a local multi-rank job for tests and
// demos, the way torchrun or mpirun would start it: rank variables, a
// rendezvous address and a job token per rank, output forwarded with a rank
// prefix, and when one rank fails the others get a grace period before they
// are stopped. Exits with the first non-zero exit code. The ranks die with
// the launcher even when it is killed with SIGKILL (a parent-death signal),
// so no rank is left waiting on a rendezvous nobody will finish.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <tuple>

#include "commands.hpp"
#include "run_command.hpp"
#include "tunelock/base/error.hpp"

namespace tunelock::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct LaunchOptions {
  int ranks = 1;
  double grace_s = 10;
  std::vector<std::string> command;
};

// The first port of the kernel's ephemeral range (32768 by default).
int first_ephemeral_port() {
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0;
  return range >> low && low > 0 && low <= 65535 ? low : 32768;
}

bool can_bind(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return bound;
}

// A port nobody listens on right now, for rank 0's rendezvous. Picked below
// the ephemeral range: ports in that range go to every outgoing connection
// on the host (UCX opens many), so one picked there could be taken before
// rank 0 listens on it. A random start keeps concurrent jobs apart.
int free_port() {
  const int high = first_ephemeral_port() - 1, low = std::max(1024, high - 16383);
  if (high - low >= 1024) {
    std::random_device random;
    const int span = high - low + 1;
    const int start = static_cast<int>(random() % static_cast<unsigned>(span));
    for (int i = 0; i < 256; ++i) {
      const int port = low + (start + i) % span;
      if (can_bind(port)) return port;
    }
  }
  // No room below the range: the kernel's pick for port 0.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    if (fd >= 0) ::close(fd);
    throw Error(std::string("launch: cannot find a free port: ") + std::strerror(errno));
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

std::string random_token() {
  std::random_device random;
  char text[33];
  std::snprintf(text, sizeof text, "%08x%08x%08x%08x", random(), random(), random(), random());
  return text;
}

std::string env_or(const Environment& env, std::string_view name, const std::string& fallback) {
  const std::string value = env_value(env, name);
  return value.empty() ? fallback : value;
}

struct Child {
  int rank;
  pid_t pid = -1;
  int out = -1, err = -1;  // read ends
  std::string out_line, err_line;
  bool running = true;
};

// Forwards complete lines with the rank prefix; keeps the tail for later.
// False at end of file.
bool forward(int fd, std::string& pending, int rank, std::ostream& to) {
  char chunk[4096];
  const ssize_t n = ::read(fd, chunk, sizeof chunk);
  if (n <= 0) return false;
  pending.append(chunk, static_cast<std::size_t>(n));
  for (auto end = pending.find('\n'); end != std::string::npos; end = pending.find('\n')) {
    to << "[rank " << rank << "] " << pending.substr(0, end + 1);
    pending.erase(0, end + 1);
  }
  to.flush();
  return true;
}

// Set by SIGINT/SIGTERM/SIGHUP: the ranks live in their own process groups,
// so the launcher passes the signal on instead of leaving them running.
volatile std::sig_atomic_t stop_signal = 0;
void on_stop_signal(int signal) { stop_signal = signal; }

void close_pipe(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Where every rank meets: the caller's rendezvous and job token when it
// set them, else a free local port and a fresh token. PyTorch's rendezvous
// (MASTER_ADDR/MASTER_PORT, as torchrun sets them) gets a port of its own,
// so init_process_group works under `tunelock launch` beside tunelock's.
struct Meeting {
  std::string host, port, token;
  std::string torch_host, torch_port;
};

// Rank `rank` of `options.ranks`: a child in its own process group with its
// output on pipes, killed if the launcher dies. Throws Error (after
// stopping `started`) when it cannot be forked.
Child spawn_rank(int rank, const LaunchOptions& options, const Meeting& meeting,
                 const std::vector<Child>& started) {
  using namespace env_names;
  const pid_t launcher = ::getpid();
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
    throw Error(std::string("launch: pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    const std::string why = std::strerror(errno);
    for (const Child& child : started) ::kill(-child.pid, SIGKILL);
    for (const Child& child : started) ::waitpid(child.pid, nullptr, 0);
    throw Error("launch: cannot start rank " + std::to_string(rank) + ": " + why);
  }
  if (pid == 0) {
    // SIGKILL when the launcher dies, however it dies; then the check
    // closes the window where it died before the request was made.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != launcher) ::_exit(128 + SIGKILL);
    ::setpgid(0, 0);  // its own group: stopping a rank stops what it started too
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    ::close(out[0]);
    ::close(err[0]);
    ::close(out[1]);
    ::close(err[1]);
    ::setenv("RANK", std::to_string(rank).c_str(), 1);
    ::setenv("WORLD_SIZE", std::to_string(options.ranks).c_str(), 1);
    ::setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
    ::setenv("LOCAL_WORLD_SIZE", std::to_string(options.ranks).c_str(), 1);
    ::setenv(std::string(kMasterAddr).c_str(), meeting.host.c_str(), 1);
    ::setenv(std::string(kMasterPort).c_str(), meeting.port.c_str(), 1);
    ::setenv(std::string(kJobToken).c_str(), meeting.token.c_str(), 1);
    ::setenv("MASTER_ADDR", meeting.torch_host.c_str(), 1);
    ::setenv("MASTER_PORT", meeting.torch_port.c_str(), 1);
    exec_command(options.command, "launch");
  }
  ::setpgid(pid, pid);  // also here: the child may not have run yet when we signal it
  ::close(out[1]);
  ::close(err[1]);
  return Child{rank, pid, out[0], err[0], {}, {}, true};
}

// Forwards what the ranks wrote, waiting up to 100 ms for something.
void pump_output(std::vector<Child>& children, Streams& streams) {
  std::vector<pollfd> fds;
  for (const Child& c : children) {
    if (c.out >= 0) fds.push_back({c.out, POLLIN, 0});
    if (c.err >= 0) fds.push_back({c.err, POLLIN, 0});
  }
  ::poll(fds.data(), fds.size(), 100);
  for (Child& c : children) {
    for (const pollfd& p : fds) {
      if (!(p.revents & (POLLIN | POLLHUP))) continue;
      // At end of file close the pipe: a hung-up fd would make poll spin.
      if (p.fd == c.out && !forward(c.out, c.out_line, c.rank, streams.out)) close_pipe(c.out);
      if (p.fd == c.err && !forward(c.err, c.err_line, c.rank, std::cerr)) close_pipe(c.err);
    }
  }
}

// What is left in the pipes once every rank has exited, without waiting
// on stray writers (a rank's own children may hold a pipe open).
void drain_output(std::vector<Child>& children, Streams& streams) {
  for (Child& c : children) {
    for (auto [fd, line, to] : {std::tuple{c.out, &c.out_line, &streams.out},
                                std::tuple{c.err, &c.err_line, &std::cerr}}) {
      pollfd p{fd, POLLIN, 0};
      while (::poll(&p, 1, 100) > 0 && forward(fd, *line, c.rank, *to)) {
      }
    }
    if (!c.out_line.empty()) streams.out << "[rank " << c.rank << "] " << c.out_line << "\n";
    if (!c.err_line.empty()) std::cerr << "[rank " << c.rank << "] " << c.err_line << "\n";
    close_pipe(c.out);
    close_pipe(c.err);
  }
}

// Runs until every rank has exited. The first rank to fail sets the exit
// code and, after the grace period, the others are sent SIGTERM, then
// SIGKILL; a signal to the launcher is passed on to every rank.
int reap(std::vector<Child>& children, const LaunchOptions& options, Streams& streams) {
  int exit_code = 0;
  std::optional<Clock::time_point> stop_at;  // set when a rank failed
  bool terminated = false;
  const auto grace = std::chrono::milliseconds(static_cast<long long>(options.grace_s * 1000));
  auto running = [&] {
    return std::any_of(children.begin(), children.end(), [](const Child& c) { return c.running; });
  };
  while (running()) {
    pump_output(children, streams);
    for (Child& c : children) {
      int status = 0;
      if (c.running && ::waitpid(c.pid, &status, WNOHANG) == c.pid) {
        c.running = false;
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (code != 0 && exit_code == 0) {
          exit_code = code;
          std::cerr << "tunelock launch: rank " << c.rank << " exited with " << code
                    << "; stopping the others in " << options.grace_s << " s\n";
          stop_at = Clock::now() + grace;
        } else if (code != 0) {
          // Every failure is named, not only the first one reaped: which
          // rank the scan reaches first says nothing about which failed first.
          std::cerr << "tunelock launch: rank " << c.rank << " exited with " << code << "\n";
        }
      }
    }
    if (stop_signal && !stop_at) {
      for (const Child& c : children)
        if (c.running) ::kill(-c.pid, static_cast<int>(stop_signal));
      stop_at = Clock::now() + std::chrono::seconds(5);  // then SIGTERM, then SIGKILL
    }
    if (stop_at && Clock::now() >= *stop_at) {
      for (const Child& c : children)
        if (c.running) ::kill(-c.pid, terminated ? SIGKILL : SIGTERM);
      stop_at = Clock::now() + std::chrono::seconds(2);  // then SIGKILL
      terminated = true;
    }
  }
  return exit_code;
}

int launch(const LaunchOptions& options, Streams& streams) {
  stop_signal = 0;
  ::signal(SIGINT, on_stop_signal);
  ::signal(SIGTERM, on_stop_signal);
  ::signal(SIGHUP, on_stop_signal);
  if (options.ranks < 1) throw Error("-n: need at least one rank");
  using namespace env_names;
  Meeting meeting{env_or(streams.env, kMasterAddr, "127.0.0.1"),
                  env_or(streams.env, kMasterPort, std::to_string(free_port())),
                  env_or(streams.env, kJobToken, random_token()),
                  env_or(streams.env, "MASTER_ADDR", "127.0.0.1"),
                  env_value(streams.env, "MASTER_PORT")};
  for (int tries = 0; meeting.torch_port.empty() || meeting.torch_port == meeting.port; ++tries) {
    if (tries == 64) throw Error("launch: cannot find a second free port for MASTER_PORT");
    meeting.torch_port = std::to_string(free_port());
  }
  std::vector<Child> children;
  for (int rank = 0; rank < options.ranks; ++rank)
    children.push_back(spawn_rank(rank, options, meeting, children));
  const int exit_code = reap(children, options, streams);
  drain_output(children, streams);
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  ::signal(SIGHUP, SIG_DFL);
  return stop_signal ? 128 + static_cast<int>(stop_signal) : exit_code;
}

}  // namespace

Command add_launch_command(CLI::App& app) {
  auto options = std::make_shared<LaunchOptions>();
  CLI::App* cmd =
      app.add_subcommand("launch", "Start N local ranks of a command, with rendezvous variables");
  cmd->add_option("-n,--ranks", options->ranks, "Number of ranks")
      ->required()
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--grace", options->grace_s,
                  "Seconds the others get after a rank fails (default 10)")
      ->check(CLI::Range(0.0, 3600.0));
  cmd->add_option("command", options->command, "The command and its arguments, after --")
      ->required();
  return {cmd, [options](Streams& streams) { return launch(*options, streams); }};
}

}  // namespace tunelock::cli
