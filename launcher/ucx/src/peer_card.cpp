#include "peer_card.hpp"

#include <flatbuffers/flatbuffers.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "tunelock/base/error.hpp"
#include "tunelock/fb/bootstrap_generated.h"
#include "tunelock/io/bounded_verifier.hpp"

namespace tunelock::launcher {

std::string this_host_identity() {
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string identity;
  if (!std::getline(boot, identity) || identity.empty()) return {};
  for (const char* ns : {"net", "pid", "ipc", "mnt"}) {
    std::error_code error;
    const auto link = std::filesystem::read_symlink(std::string("/proc/self/ns/") + ns, error);
    if (error) return {};
    identity += ' ' + link.string();
  }
  return identity;
}

namespace {
// The peer card's format_version: every rank of a job runs one tunelock.
constexpr std::uint32_t kPeerCardVersion = 1;
}  // namespace

std::string encode_peer_card(const PeerCard& card) {
  flatbuffers::FlatBufferBuilder b(128 + card.worker_address.size());
  const auto address =
      b.CreateVector(reinterpret_cast<const std::uint8_t*>(card.worker_address.data()),
                     card.worker_address.size());
  const auto host = card.host.empty() ? 0 : b.CreateString(card.host);
  b.Finish(
      fb::CreatePeerCard(b, kPeerCardVersion, address, host, static_cast<std::uint32_t>(card.pid)));
  return {reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize()};
}

PeerCard decode_peer_card(std::string_view bytes, const std::string& origin) {
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  flatbuffers::Verifier verifier = tunelock::detail::bounded_verifier(data, bytes.size());
  if (!verifier.VerifyBuffer<fb::PeerCard>(nullptr))
    throw Error(origin + ": not a valid peer card (" + std::to_string(bytes.size()) + " bytes)");
  const auto* card = flatbuffers::GetRoot<fb::PeerCard>(data);
  if (card->format_version() != kPeerCardVersion) {
    throw Error(origin + ": peer card format " + std::to_string(card->format_version()) +
                " is not supported (this tunelock speaks " + std::to_string(kPeerCardVersion) +
                "); every rank must run the same tunelock");
  }
  PeerCard out;
  out.worker_address.assign(reinterpret_cast<const char*>(card->worker_address()->data()),
                            card->worker_address()->size());
  if (card->host()) out.host = card->host()->str();
  out.pid = static_cast<int>(card->pid());
  if (out.pid <= 0) out.host.clear();  // no process to watch: never treated as local
  return out;
}

ProcessWatch::ProcessWatch(int pid) {
#ifdef SYS_pidfd_open
  fd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd_ < 0 && errno == ESRCH) gone_ = true;
#else
  (void)pid;
#endif
}

ProcessWatch::ProcessWatch(ProcessWatch&& other) noexcept : fd_(other.fd_), gone_(other.gone_) {
  other.fd_ = -1;
}

ProcessWatch::~ProcessWatch() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace tunelock::launcher
