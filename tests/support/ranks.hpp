// Plays N ranks in one process: one thread, one Runtime and one collective
// endpoint per rank, so verification runs exactly as across processes.
#pragma once

#include <exception>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "tunelock/runtime/runtime.hpp"
#include "verify/in_process_collective.hpp"

namespace tunelock::testing {

struct Rank {
  int rank;
  Notices notices;
  Runtime runtime;
  explicit Rank(int r) : rank(r), runtime(r, notices) {}
};

class Ranks {
 public:
  explicit Ranks(int n, const Policy& policy = {}) {
    for (int r = 0; r < n; ++r) {
      ranks_.push_back(std::make_unique<Rank>(r));
      ranks_.back()->runtime.install(policy);
    }
  }

  Rank& operator[](int r) { return *ranks_[static_cast<std::size_t>(r)]; }
  int size() const { return static_cast<int>(ranks_.size()); }

  // Runs `body(rank)` on every rank concurrently; rethrows nothing but
  // returns each rank's exception (or null), indexed by rank.
  std::vector<std::exception_ptr> run(const std::function<void(Rank&)>& body) {
    std::vector<std::exception_ptr> errors(ranks_.size());
    std::vector<std::thread> threads;
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      threads.emplace_back([&, r] {
        try {
          body(*ranks_[r]);
        } catch (...) {
          errors[r] = std::current_exception();
        }
      });
    }
    for (auto& t : threads) t.join();
    return errors;
  }

 private:
  std::vector<std::unique_ptr<Rank>> ranks_;
};

inline std::string message_of(const std::exception_ptr& error) {
  try {
    if (error) std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace tunelock::testing
