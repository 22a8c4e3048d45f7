// Median latency of one verification round over UCX, for the ranks
// `tunelock launch -n N` started: in steady state (empty batches) and with
// 1,000 new entries per rank per round. Rank 0 prints the figures. Before
// each timed round the ranks meet (an untimed all-gather), so the figure is
// the check itself, not how far apart the ranks finished logging;
// gloo_all_gather_bench.py does the same with a barrier.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "tunelock/base/rank_environment.hpp"
#include "tunelock/launcher/ucx_collective.hpp"
#include "tunelock/runtime/runtime.hpp"

using namespace tunelock;
using Clock = std::chrono::steady_clock;

namespace {

double median_us(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

}  // namespace

int main() {
  const Environment env = process_environment();
  const RankInfo me = rank_from_environment(env);
  Policy policy;
  policy.mode = Mode::pinned;
  process_runtime().install(policy);
  Runtime& runtime = process_runtime();
  auto world = launcher::world_collective(env, 60);
  const Config config = make_config({{"BLOCK_M", 128}, {"BLOCK_N", 64}}, 8, 3);
  runtime.verify(*world);  // connects; not timed

  std::vector<double> empty, thousand;
  for (int round = 0; round < 200; ++round) {
    world->all_gather({});
    const auto start = Clock::now();
    runtime.verify(*world);
    empty.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  std::uint64_t next = 0;
  for (int round = 0; round < 100; ++round) {
    for (int i = 0; i < 1000; ++i)
      runtime.log_choice("sm90", KernelId{"bench.ops", "mm"}, "M=" + std::to_string(next++), config,
                         ChoiceOrigin::pinned);
    world->all_gather({});
    const auto start = Clock::now();
    runtime.verify(*world);
    thousand.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  if (me.rank == 0) {
    std::printf(
        "verify over UCX, %d ranks: empty batch %.0f us, 1000 new entries per rank %.0f us "
        "(medians)\n",
        me.world_size, median_us(empty), median_us(thousand));
  }
  return 0;
}
