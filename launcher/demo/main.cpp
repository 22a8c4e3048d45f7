// tunelock-demo: a small training-like loop over host kernels whose configs
// change the result bits, used the way a trainer would use tunelock. It
// reads the policy from the environment (TUNELOCK_*), runs a few steps,
// verifies choices at step boundaries, and prints its choice digest and an
// output checksum: equal digests and checksums mean a reproducible run.
#include <xxhash.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "demo_kernels.hpp"
#include "tunelock/error.hpp"
#include "tunelock/launch_environment.hpp"
#include "tunelock/launcher/host_backend.hpp"
#ifdef TUNELOCK_HAVE_UCX
#include "tunelock/launcher/ucx_collective.hpp"
#endif
#include "tunelock/runtime.hpp"

namespace {

using namespace tunelock;

// Deterministic inputs on every platform: a fixed LCG, no library distributions.
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
  (void)verifying;
  if (rank_from_environment(process_environment()).world_size > 1 && verifying)
    throw Error("this build has no UCX: cross-process verification is unavailable");
  return std::make_unique<SoloCollective>();
}

struct Options {
  int steps = 4;
  int m = 64, n = 64, k = 384;
  std::string manifest;
};

int run(const Options& options) {
  install_from_environment();
  Runtime& runtime = process_runtime();
  const RankInfo rank = rank_from_environment(process_environment());
  launcher::HostBackend backend;
  launcher::Launcher launcher(backend, runtime);

  demo::MatmulFamily matmul(launcher, {"demo.ops", "matmul_splitk"}, {"M", "N", "K"},
                            demo::matmul_variants(), demo::matmul_hooks());
  demo::ReduceFamily reduce(launcher, {"demo.ops", "reduce_sum"}, {"N"}, demo::reduce_variants());
  demo::NormFamily norm(launcher, {"demo.ops", "rms_normalize"}, {"N"}, demo::norm_variants());
  if (!options.manifest.empty()) launcher.write_manifest(options.manifest);

  const int m = options.m, n = options.n, k = options.k;
  const std::vector<float> x = pseudo_random(static_cast<std::size_t>(m) * k, 1);
  std::vector<float> xt(x.size());  // x transposed, for the weight update
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < k; ++j)
      xt[static_cast<std::size_t>(j) * m + i] = x[static_cast<std::size_t>(i) * k + j];
  std::vector<float> w = pseudo_random(static_cast<std::size_t>(k) * n, 2);
  std::vector<float> y(static_cast<std::size_t>(m) * n), grad(w.size());
  // Set up only when verification is asked for: a rank run alone with
  // verification off never waits for peers.
  std::unique_ptr<Collective> group = make_group(runtime.policy()->verify_every > 0);

  std::cout << "rank " << rank.rank << "/" << rank.world_size << ", policy "
            << to_string(runtime.policy()->effective_mode())
            << (runtime.policy()->chaos ? " (chaos)" : "") << "\n";
  for (int step = 1; step <= options.steps; ++step) {
    std::fill(y.begin(), y.end(), 0.0f);
    matmul({m, n, k}, {"f32", "f32"}, x.data(), w.data(), y.data(), m, n, k);
    float loss = 0;
    reduce({m * n}, {"f32"}, y.data(), &loss, m * n);
    norm({m * n}, {"f32"}, y.data(), m * n);
    std::fill(grad.begin(), grad.end(), 0.0f);
    matmul({k, n, m}, {"f32", "f32"}, xt.data(), y.data(), grad.data(), k, n, m);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] -= 1e-3f * grad[i];
    std::printf("step %d: loss %.9g\n", step, loss);
    if (auto agreed = runtime.maybe_verify(step, *group))
      std::printf("step %d: choices %s across ranks\n", step, *agreed ? "agree" : "DIFFER");
  }
  std::printf("choices: %zu, digest %s\n", runtime.choice_log().size(),
              runtime.choice_digest().c_str());
  std::printf("checksum %016llx\n",
              static_cast<unsigned long long>(XXH3_64bits(w.data(), w.size() * sizeof(float))));
  launcher.flush();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tunelock-demo: a training-like loop over host kernels, reproducible when pinned"};
  Options options;
  app.add_option("--steps", options.steps, "Training steps")->check(CLI::PositiveNumber);
  app.add_option("--manifest", options.manifest,
                 "Write the candidate manifest of the demo's kernels here");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(options);
  } catch (const tunelock::Error& e) {
    std::cerr << "tunelock-demo: " << e.what() << "\n";
    return 2;
  }
}
