// The network interface this host reaches the rendezvous address through,
// so UCX listens there alone (UCX_NET_DEVICES) instead of on every
// interface for the whole job: loopback for a local job.
#pragma once

#include <optional>
#include <string>

namespace tunelock::launcher {

// "lo" for a loopback address; else the interface holding the local address
// the kernel would send from toward `host`. Nothing when it cannot tell
// (then UCX keeps its own choice).
std::optional<std::string> interface_toward(const std::string& host, int port);

}  // namespace tunelock::launcher
