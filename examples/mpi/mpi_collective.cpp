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

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "tunelock/base/error.hpp"
#include "tunelock/runtime/runtime.hpp"
#include "tunelock/verify/collective.hpp"

namespace {

class MpiCollective final : public tunelock::Collective {
 public:
  explicit MpiCollective(MPI_Comm comm) : comm_(comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string group_id() const override { return "mpi-world"; }

  std::vector<std::string> all_gather(std::string_view payload) override {
    const int mine = static_cast<int>(payload.size());
    std::vector<int> sizes(static_cast<std::size_t>(size_));
    check(MPI_Allgather(&mine, 1, MPI_INT, sizes.data(), 1, MPI_INT, comm_), "MPI_Allgather");
    std::vector<int> offsets(sizes.size());
    int total = 0;
    for (std::size_t r = 0; r < sizes.size(); ++r) {
      offsets[r] = total;
      total += sizes[r];
    }
    std::string all(static_cast<std::size_t>(total), '\0');
    check(MPI_Allgatherv(payload.data(), mine, MPI_BYTE, all.data(), sizes.data(), offsets.data(),
                         MPI_BYTE, comm_),
          "MPI_Allgatherv");
    std::vector<std::string> out;
    for (std::size_t r = 0; r < sizes.size(); ++r)
      out.push_back(
          all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(sizes[r])));
    return out;
  }

  bool has_all_reduce() const override { return true; }
  void all_reduce(std::span<std::int64_t> values, ReduceOp op) override {
    check(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_INT64_T,
                        op == ReduceOp::sum ? MPI_SUM : MPI_MIN, comm_),
          "MPI_Allreduce");
  }

 private:
  static void check(int rc, const char* what) {
    if (rc != MPI_SUCCESS)
      throw tunelock::Error(std::string("verify over MPI: ") + what + " failed");
  }
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MpiCollective world(MPI_COMM_WORLD);
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
