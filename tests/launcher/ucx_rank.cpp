// One rank of a multi-process verification scenario, started by
// `tunelock launch -n N -- ucx_rank SCENARIO`. Prints one result line per
// rank; the ctest script checks every rank's line.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "killing_collective.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/base/rank_environment.hpp"
#include "tunelock/decision/policy_sources.hpp"
#include "tunelock/launcher/ucx_collective.hpp"
#include "tunelock/runtime/first_call.hpp"
#include "tunelock/runtime/runtime.hpp"

using namespace tunelock;

namespace {

const Config kA = make_config({{"BLOCK_M", 128}}, 8, 3);
const Config kB = make_config({{"BLOCK_M", 64}}, 4, 3);

void log(Runtime& runtime, const std::string& key, const Config& config) {
  runtime.log_choice("host", KernelId{"t.ops", "mm"}, key, config, ChoiceOrigin::pinned);
}

// A kernel whose clock favours config kB on every rank but rank 0.
class SkewedRunner final : public CallRunner {
 public:
  explicit SkewedRunner(int rank) : rank_(rank) {}
  double time(std::size_t i) override { return (i == 1) == (rank_ != 0) ? 1.0 : 2.0; }
  bool has_outputs() const override { return true; }
  std::string run_outputs(std::size_t i) override { return std::to_string(i); }
  bool use_second_input() override { return false; }
  void put_back() override {}
  bool capturing() const override { return false; }

 private:
  int rank_;
};

std::size_t first_call(Runtime& runtime, int rank, const std::string& key) {
  const std::vector<Config> candidates = {kA, kB};
  FirstCallRequest request;
  request.arch = "host";
  request.kernel = KernelId{"t.ops", "mm"};
  request.key = key;
  request.candidates = candidates;
  SkewedRunner runner(rank);
  return run_first_call(runtime, request, runner).launched;
}

// Consensus: every rank times key M=1 and the first check agrees on kB;
// then the last rank is killed while the others wait in a check that
// carries key M=2's timings. The survivors name it.
int consensus_killed(Runtime& runtime, Collective& world, const RankInfo& me) {
  first_call(runtime, me.rank, "M=1");
  runtime.verify(world);
  const std::size_t switched = first_call(runtime, me.rank, "M=1");
  if (me.rank == me.world_size - 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ::kill(::getpid(), SIGKILL);
  }
  first_call(runtime, me.rank, "M=2");
  const auto start = std::chrono::steady_clock::now();
  try {
    runtime.verify(world);
  } catch (const Error& e) {
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("rank %d: launched %s after the first check; failed after %.1f s: %s\n", me.rank,
                switched == 1 ? "the winner" : "another config", s, e.what());
    return 4;
  }
  std::printf("rank %d: the consensus check did not fail\n", me.rank);
  return 1;
}

// The last rank dies (SIGKILL) during the second check, once its partial
// went up the tree (rank 0 comes to that check late, so the others are
// still waiting for the verdict), or once that check is over, so the
// third meets it gone. Every survivor names it.
int killed_at(Runtime& runtime, Collective& world, const RankInfo& me, testing::KillMoment moment) {
  testing::KillingCollective transport(world, me.rank == me.world_size - 1, moment);
  for (int i = 0; i < 10; ++i) log(runtime, "M=" + std::to_string(i), kA);
  runtime.verify(transport);
  log(runtime, "M=100", kA);
  transport.arm();
  if (me.rank == 0 && moment == testing::KillMoment::during)
    std::this_thread::sleep_for(std::chrono::seconds(1));
  const auto start = std::chrono::steady_clock::now();
  try {
    runtime.verify(transport);
    transport.check_returned();
    log(runtime, "M=101", kA);
    runtime.verify(transport);  // a survivor whose round had ended meets it gone here
  } catch (const Error& e) {
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("rank %d: failed after %.1f s: %s\n", me.rank, s, e.what());
    return 4;
  }
  std::printf("rank %d: the checks did not fail\n", me.rank);
  return 1;
}

int run(const std::string& scenario) {
  const Environment env = process_environment();
  const RankInfo me = rank_from_environment(env);
  Policy policy = policy_from_environment(env);  // TUNELOCK_VERIFY_TIMEOUT, when a test sets it
  policy.mode = scenario == "consensus_killed" ? Mode::consensus : Mode::pinned;
  if (scenario == "consensus_killed") policy.record_path = "consensus/run";
  policy.verify_every = 1;
  policy.verify_strict = scenario == "strict";
  if (env.find("TUNELOCK_VERIFY_TIMEOUT") == env.end()) policy.verify_timeout_s = 20;
  process_runtime().install(policy);
  Runtime& runtime = process_runtime();
  auto world = launcher::world_collective(env, policy.verify_timeout_s);

  if (scenario == "agree" || scenario == "die" || scenario == "killed") {
    for (int i = 0; i < 10; ++i) log(runtime, "M=" + std::to_string(i), kA);
    const VerifyResult first = runtime.verify(*world);
    if (scenario == "die" || scenario == "killed") {
      if (me.rank == me.world_size - 1) {
        if (scenario == "die") std::_Exit(9);  // dies mid-run, after one good round
        // Killed while the others wait in the next check.
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        ::kill(::getpid(), SIGKILL);
      }
      log(runtime, "M=100", kA);
      const auto start = std::chrono::steady_clock::now();
      try {
        runtime.verify(*world);
      } catch (const Error& e) {
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::printf("rank %d: failed after %.1f s: %s\n", me.rank, s, e.what());
        return 4;
      }
      std::printf("rank %d: second round did not fail\n", me.rank);
      return 1;
    }
    const VerifyResult second = runtime.verify(*world);  // steady state: empty batches
    std::printf("rank %d: %s, %zu then %zu entries compared\n", me.rank,
                first.agreed && second.agreed ? "agreed" : "DIFFER", first.compared,
                second.compared);
    return 0;
  }
  if (scenario == "conflict" || scenario == "strict") {
    log(runtime, "M=1", me.rank == 1 ? kB : kA);
    log(runtime, "M=2", kA);
    try {
      const VerifyResult result = runtime.verify(*world);
      std::printf("rank %d: %s %zu conflict(s): %s\n", me.rank, result.agreed ? "agreed" : "DIFFER",
                  result.conflicts.size(), conflict_report(result.conflicts).c_str());
    } catch (const Error& e) {
      std::printf("rank %d: raised: %s\n", me.rank, e.what());
      return 3;
    }
    return 0;
  }
  if (scenario == "consensus_killed") return consensus_killed(runtime, *world, me);
  if (scenario == "killed_during")
    return killed_at(runtime, *world, me, testing::KillMoment::during);
  if (scenario == "killed_after") return killed_at(runtime, *world, me, testing::KillMoment::after);
  if (scenario == "disjoint") {
    log(runtime, "stage=" + std::to_string(me.rank), me.rank % 2 ? kA : kB);
    std::printf("rank %d: %s\n", me.rank, runtime.verify(*world).agreed ? "agreed" : "DIFFER");
    return 0;
  }
  if (scenario == "subgroups") {
    // Even and odd ranks form two groups; only the odd group disagrees.
    std::vector<int> members;
    for (int r = me.rank % 2; r < me.world_size; r += 2) members.push_back(r);
    auto& ucx = dynamic_cast<launcher::UcxCollective&>(*world);
    launcher::UcxCollective group(ucx, members, me.rank % 2 ? "odd" : "even");
    log(runtime, "M=1", me.rank == 1 ? kB : kA);
    const VerifyResult result = runtime.verify(group);
    std::printf("rank %d: group %s of %d %s%s\n", me.rank, group.group_id().c_str(), group.size(),
                result.agreed ? "agreed" : "DIFFER",
                result.conflicts.empty() ? "" : (" " + conflict_report(result.conflicts)).c_str());
    return 0;
  }
  std::fprintf(stderr, "unknown scenario %s\n", scenario.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr,
                 "usage: ucx_rank agree|conflict|strict|disjoint|die|killed|killed_during|"
                 "killed_after|subgroups|"
                 "consensus_killed\n");
    return 2;
  }
  // Line-buffered: a rank stopped by the launcher after printing its
  // result must not lose it in the stdio buffer.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  try {
    return run(argv[1]);
  } catch (const std::exception& e) {
    std::printf("rank ?: error: %s\n", e.what());
    return 5;
  }
}
