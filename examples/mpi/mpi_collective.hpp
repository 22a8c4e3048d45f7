// The engine's collective over MPI (see mpi_collective.cpp for the
// example that uses it). Verification needs an all-gather of bytes
// (MPI_Allgather of the sizes, then MPI_Allgatherv of the bytes) and, to
// move O(new keys) bytes per rank whatever the world's size, a fixed-size
// all-reduce of 64-bit integers (MPI_Allreduce, sum or minimum).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tunelock/base/error.hpp"
#include "tunelock/verify/collective.hpp"

namespace tunelock_example {

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

}  // namespace tunelock_example
