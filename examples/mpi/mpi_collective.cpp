// Bring your own transport: the engine's collective over MPI, for a trainer
// that already runs under mpirun. Verification needs an all-gather of bytes
// (MPI_Allgather of the sizes, then MPI_Allgatherv of the bytes) and, to
// move O(new keys) bytes per rank whatever the world's size, a fixed-size
// all-reduce of 64-bit integers (MPI_Allreduce, sum or minimum): the
// engine then checks over slots and gathers only conflicting keys' texts.
//
//   mpirun -n 4 ./tunelock-mpi-example [conflict]
//
// Each rank logs a few choices (rank 1 differs with `conflict`), verifies,
// and prints one line with the verdict.
#include <mpi.h>

#include <cstdio>
#include <string>

#include "mpi_collective.hpp"
#include "tunelock/runtime/runtime.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  tunelock_example::MpiCollective world(MPI_COMM_WORLD);
  const bool conflict = argc > 1 && std::string(argv[1]) == "conflict";
  int code = 0;
  try {
    tunelock::Notices notices;
    tunelock::Runtime runtime(world.rank(), notices);
    const tunelock::KernelId matmul{"example.ops", "matmul"};
    const auto big = tunelock::make_config({{"BLOCK_M", 128}}, 8, 3);
    const auto small = tunelock::make_config({{"BLOCK_M", 64}}, 4, 3);
    for (int m = 0; m < 3; ++m) {
      const bool differ = conflict && world.rank() == 1 && m == 2;
      runtime.log_choice("host", matmul, "M=" + std::to_string(m), differ ? small : big,
                         tunelock::ChoiceOrigin::pinned);
    }
    const tunelock::VerifyResult result = runtime.verify(world);
    std::printf("mpi rank %d of %d: %s, %zu entries compared%s%s\n", world.rank(), world.size(),
                result.agreed ? "agreed" : "DIFFER", result.compared,
                result.conflicts.empty() ? "" : ": ",
                tunelock::conflict_report(result.conflicts).c_str());
  } catch (const std::exception& e) {
    std::printf("mpi rank %d: error: %s\n", world.rank(), e.what());
    code = 1;
  }
  MPI_Finalize();
  return code;
}
