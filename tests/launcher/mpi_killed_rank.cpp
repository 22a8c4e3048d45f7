// One rank of the killed-rank test over MPI (the example's MpiCollective):
// after a good check, the last rank dies with SIGKILL at MOMENT of the
// next one (before, during, after). MPI has no way to leave a collective
// whose peer died, so the proof is that mpirun ends the job at once and
// names the rank, and that no survivor reports a result.
//
//   mpirun -n 3 ./mpi_killed_rank before|during|after
#include <mpi.h>

#include <cstdio>
#include <string>

#include "killing_collective.hpp"
#include "mpi_collective.hpp"
#include "tunelock/runtime/runtime.hpp"

using namespace tunelock;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  tunelock_example::MpiCollective world(MPI_COMM_WORLD);
  if (argc != 2) {
    std::fprintf(stderr, "usage: mpi_killed_rank before|during|after\n");
    return 2;
  }
  testing::KillingCollective transport(world, world.rank() == world.size() - 1,
                                       testing::kill_moment_named(argv[1]));
  Notices notices;
  Runtime runtime(world.rank(), notices);
  const KernelId matmul{"example.ops", "matmul"};
  const Config config = make_config({{"BLOCK_M", 128}}, 8, 3);
  runtime.log_choice("host", matmul, "M=1", config, ChoiceOrigin::pinned);
  runtime.verify(transport);
  std::printf("mpi rank %d: the first check agreed\n", world.rank());
  // The victim's own key makes the next check take more than one collective.
  if (world.rank() == world.size() - 1)
    runtime.log_choice("host", matmul, "M=2", config, ChoiceOrigin::pinned);
  transport.arm();
  runtime.verify(transport);
  transport.check_returned();
  runtime.log_choice("host", matmul, "M=3", config, ChoiceOrigin::pinned);
  runtime.verify(transport);
  std::printf("mpi rank %d: every check returned\n", world.rank());
  MPI_Finalize();
  return 0;
}
