// Cost of the run-time checks: the choice digest, and one verification
// round over the in-process collective with 8 ranks (one benchmark thread
// per rank), in steady state (empty batches) and with 1,000 new entries
// per rank.
#include <benchmark/benchmark.h>

#include <chrono>

#include "tunelock/runtime/runtime.hpp"
#include "verify/in_process_collective.hpp"

using namespace tunelock;

namespace {

constexpr int kRanks = 8;

void BM_Digest10k(benchmark::State& state) {
  std::map<std::string, std::string> entries;
  for (int i = 0; i < 10'000; ++i) {
    entries.emplace("sm90|pkg.ops.kernel_" + std::to_string(i % 97) + "|M=" + std::to_string(i),
                    "BLOCK_M=128,BLOCK_N=64;warps=8;stages=3;pinned");
  }
  for (auto _ : state) benchmark::DoNotOptimize(choice_digest(entries));
  state.SetItemsProcessed(state.iterations() * 10'000);
}
BENCHMARK(BM_Digest10k)->Unit(benchmark::kMicrosecond);

// One runtime and endpoint per rank, shared by the benchmark's threads.
struct World {
  Notices notices[kRanks];
  std::unique_ptr<Runtime> runtimes[kRanks];
  std::unique_ptr<Collective> members[kRanks];
  std::uint64_t next_key[kRanks] = {};
  explicit World(const std::string& id) {
    InProcessGroup group(kRanks, id);
    for (int r = 0; r < kRanks; ++r) {
      runtimes[r] = std::make_unique<Runtime>(r, notices[r]);
      members[r] = group.member(r);
    }
  }
};

void verify_round(benchmark::State& state, World& world, int new_entries) {
  const int rank = state.thread_index();
  Runtime& runtime = *world.runtimes[rank];
  const Config config = make_config({{"BLOCK_M", 128}}, 8, 3);
  for (auto _ : state) {
    for (int i = 0; i < new_entries; ++i) {
      runtime.log_choice("sm90", KernelId{"pkg", "k"},
                         "M=" + std::to_string(world.next_key[rank]++), config,
                         ChoiceOrigin::pinned);
    }
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(runtime.verify(*world.members[rank]));
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
}

void BM_VerifyRoundEmpty(benchmark::State& state) {
  static World world("empty");
  verify_round(state, world, 0);
}
BENCHMARK(BM_VerifyRoundEmpty)->Threads(kRanks)->UseManualTime()->Unit(benchmark::kMicrosecond);

void BM_VerifyRound1000New(benchmark::State& state) {
  static World world("thousand");
  verify_round(state, world, 1000);
}
BENCHMARK(BM_VerifyRound1000New)->Threads(kRanks)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
