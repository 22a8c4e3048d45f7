// Where and with whom ranks meet before UCX: the rendezvous address, the
// job token that tells this job's ranks from strangers, and the deadline.
// Bootstrap runs over a plain TCP socket of our own (UCX 1.13's socket
// listener aborts on garbage from a stray client, so it never faces the
// network): each rank says hello with the token and its UCX worker address;
// rank 0 drops strangers and malformed hellos and answers with the roster.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tunelock/base/rank_environment.hpp"

namespace tunelock::launcher {

struct Rendezvous {
  std::string host;  // rank 0 listens here, the others connect here
  int port = 0;
  std::string token;
  int rank = 0;
  int world_size = 1;
  std::chrono::milliseconds timeout{1800 * 1000};
  // The world rank each rank is named by in errors, when this world is a
  // program's subgroup (empty: its own rank).
  std::vector<int> rank_names;
};

// Every rank's worker address, indexed by rank, given this rank's: the TCP
// rendezvous below, or an all-gather the program already has (a
// torch.distributed process group's), which needs no port or token.
using AddressExchange = std::function<std::vector<std::string>(std::string_view my_address)>;

// TUNELOCK_MASTER_ADDR:TUNELOCK_MASTER_PORT, else MASTER_ADDR and
// MASTER_PORT + 1; token from TUNELOCK_JOB_TOKEN, else SLURM_JOB_ID, else
// TORCHELASTIC_RUN_ID. Throws Error naming what is missing or invalid.
Rendezvous rendezvous_from_environment(const Environment& env, const RankInfo& rank,
                                       double timeout_s);

// Every rank's worker address, indexed by rank. Throws Error on a timeout
// (naming the ranks that never said hello), a port another job holds, or a
// roster that does not fit.
std::vector<std::string> exchange_addresses(const Rendezvous& rendezvous,
                                            std::string_view my_address);

}  // namespace tunelock::launcher
