#include "demo_support.hpp"

#include <xxhash.h>

#include <cstdio>
#include <iostream>

#include "tunelock/base/error.hpp"
#include "tunelock/base/rank_environment.hpp"
#ifdef TUNELOCK_HAVE_UCX
#include "tunelock/launcher/ucx_collective.hpp"
#endif

namespace tunelock::demo {

std::vector<float> pseudo_random(std::size_t n, std::uint64_t seed) {
  std::vector<float> out(n);
  for (float& v : out) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<float>(static_cast<std::int64_t>(seed >> 40) - (1 << 23)) /
        static_cast<float>(1 << 23);
  }
  return out;
}

std::unique_ptr<Collective> make_group(bool verifying) {
#ifdef TUNELOCK_HAVE_UCX
  if (verifying)
    return launcher::world_collective(process_environment(),
                                      process_runtime().policy()->verify_timeout_s);
#endif
  if (rank_from_environment(process_environment()).world_size > 1 && verifying)
    throw Error("this build has no UCX: cross-process verification is unavailable");
  return std::make_unique<SoloCollective>();
}

void print_start(const Runtime& runtime) {
  const RankInfo rank = rank_from_environment(process_environment());
  std::cout << "rank " << rank.rank << "/" << rank.world_size << ", policy "
            << to_string(runtime.policy()->effective_mode())
            << (runtime.policy()->chaos ? " (chaos)" : "") << std::endl;
}

void print_step(Runtime& runtime, Collective& group, int step, double loss) {
  std::printf("step %d: loss %.9g\n", step, loss);
  if (auto agreed = runtime.maybe_verify(step, group))
    std::printf("step %d: choices %s across ranks\n", step, *agreed ? "agree" : "DIFFER");
  std::fflush(stdout);
}

void print_end(const Runtime& runtime, const void* bytes, std::size_t size) {
  std::printf("choices: %zu, digest %s\n", runtime.choice_log().size(),
              runtime.choice_digest().c_str());
  std::printf("checksum %016llx\n", static_cast<unsigned long long>(XXH3_64bits(bytes, size)));
  std::fflush(stdout);
}

}  // namespace tunelock::demo
