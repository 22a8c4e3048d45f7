// This process's rank and world size, as the usual launchers state them.
// Checked in order: RANK/WORLD_SIZE (torchrun, tunelock launch),
// OMPI_COMM_WORLD_RANK/SIZE (Open MPI), PMI_RANK/PMI_SIZE (MPICH, Intel MPI),
// SLURM_PROCID/SLURM_NTASKS (srun). None set: rank 0 of 1.
#pragma once

#include "tunelock/base/environment.hpp"

namespace tunelock {

struct RankInfo {
  int rank = 0;
  int world_size = 1;
  std::string source;  // the variable the rank came from, "" when defaulted

  friend bool operator==(const RankInfo&, const RankInfo&) = default;
};

// Throws Error naming the variable when a value is not a valid number or
// the rank is not below the world size.
RankInfo rank_from_environment(const Environment& env);

}  // namespace tunelock
