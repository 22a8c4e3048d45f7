// Cost of the run-time checks: the choice digest, and one verification
// round over the in-process collective with 8 ranks (one benchmark thread
// per rank), in steady state (empty batches) and with 1,000 new entries
// per rank; and, on 4 and 16 ranks, a pinned check of 1,000 new keys per
// rank against a consensus check of 1,000 new keys whose 8 candidates'
// timings travel with it (the first calls themselves are not timed).
#include <benchmark/benchmark.h>

#include <chrono>
#include <filesystem>
#include <mutex>

#include "tunelock/decision/policy_sources.hpp"
#include "tunelock/runtime/first_call.hpp"
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

// A group of `ranks` runtimes under `policy`, made once per benchmark.
struct PolicyWorld {
  std::vector<std::unique_ptr<Notices>> notices;
  std::vector<std::unique_ptr<Runtime>> runtimes;
  std::vector<std::unique_ptr<Collective>> members;
  std::vector<std::uint64_t> next_key;
  PolicyWorld(const std::string& id, int ranks, const Policy& policy) : next_key(ranks) {
    InProcessGroup group(ranks, id);
    for (int r = 0; r < ranks; ++r) {
      notices.push_back(std::make_unique<Notices>());
      runtimes.push_back(std::make_unique<Runtime>(r, *notices.back()));
      runtimes.back()->install(policy);
      members.push_back(group.member(r));
    }
  }
};

PolicyWorld& world_for(const std::string& id, int ranks, const Policy& policy) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<PolicyWorld>> worlds;
  std::lock_guard lock(mutex);
  std::unique_ptr<PolicyWorld>& world = worlds[id + "/" + std::to_string(ranks)];
  if (!world) world = std::make_unique<PolicyWorld>(id, ranks, policy);
  return *world;
}

// Eight candidates timed by a clock that favours another one on each rank.
class EightCandidates final : public CallRunner {
 public:
  explicit EightCandidates(int rank) : rank_(rank) {}
  double time(std::size_t i) override { return 1.0 + static_cast<double>((i + rank_) % 8); }
  bool has_outputs() const override { return true; }
  std::string run_outputs(std::size_t i) override { return std::to_string(i); }
  bool use_second_input() override { return false; }
  void put_back() override {}
  bool capturing() const override { return false; }

 private:
  std::size_t rank_;
};

const std::vector<Config>& eight_configs() {
  static const std::vector<Config> configs = [] {
    std::vector<Config> out;
    for (int i = 0; i < 8; ++i) out.push_back(make_config({{"BLOCK_M", 16 << i}}, 4, 2));
    return out;
  }();
  return configs;
}

void new_keys_check(benchmark::State& state, const char* mode) {
  const std::string prefix =
      (std::filesystem::temp_directory_path() / "tunelock-bench-consensus" / "run").string();
  const Policy policy = policy_from_key_values(
      {{"mode", mode}, {"record_path", prefix}, {"check_bits", "off"}}, Policy{});
  PolicyWorld& world = world_for(mode, state.threads(), policy);
  const int rank = state.thread_index();
  Runtime& runtime = *world.runtimes[rank];
  EightCandidates runner(rank);
  for (auto _ : state) {
    for (int i = 0; i < 1000; ++i) {
      FirstCallRequest request;
      request.arch = "sm90";
      request.kernel = KernelId{"pkg", "k"};
      request.key = "M=" + std::to_string(world.next_key[rank]++);
      request.candidates = eight_configs();
      run_first_call(runtime, request, runner);
    }
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(runtime.verify(*world.members[rank]));
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
}

void BM_PinnedCheck1000NewKeys(benchmark::State& state) { new_keys_check(state, "pinned"); }
BENCHMARK(BM_PinnedCheck1000NewKeys)
    ->Threads(4)
    ->Threads(16)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

void BM_ConsensusCheck1000NewKeysX8Timings(benchmark::State& state) {
  new_keys_check(state, "consensus");
}
BENCHMARK(BM_ConsensusCheck1000NewKeysX8Timings)
    ->Threads(4)
    ->Threads(16)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
