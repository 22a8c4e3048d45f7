// tunelock-demo: a small training-like loop over kernels whose configs
// change the result bits, used the way a trainer would use tunelock. It
// reads the policy from the environment (TUNELOCK_*), runs a few steps,
// verifies choices at step boundaries, and prints its choice digest and an
// output checksum: equal digests and checksums mean a reproducible run.
// `--backend host` (default) runs C++ kernels anywhere; `--backend cuda`
// runs the GPU kernels, one device per local rank.
#include <CLI/CLI.hpp>
#include <iostream>

#include "demo_support.hpp"
#include "tunelock/base/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "tunelock-demo: a training-like loop over kernel families, reproducible when pinned"};
  tunelock::demo::Options options;
  app.add_option("--backend", options.backend, "host (C++ kernels) or cuda (GPU kernels)")
      ->check(CLI::IsMember({"host", "cuda"}))
      ->capture_default_str();
  app.add_option("--steps", options.steps, "Training steps")->check(CLI::PositiveNumber);
  app.add_option("--m,--rows", options.m, "Rows of the input (default: host 64, cuda 256)")
      ->check(CLI::PositiveNumber);
  app.add_option("--n", options.n, "Columns of the weights (default: host 64, cuda 256)")
      ->check(CLI::PositiveNumber);
  app.add_option("--k", options.k, "Inner dimension (default: host 384, cuda 2048)")
      ->check(CLI::PositiveNumber);
  app.add_option("--manifest", options.manifest,
                 "Write the candidate manifest of the demo's kernels here");
  app.add_flag("--skew-timings", options.skew_timings,
               "Host: each rank's clock favours another matmul config (rank 0 the second, the "
               "others the third), as noisy clocks make ranks' timed winners differ");
  app.add_flag("--hold-weights", options.hold_weights,
               "Start every step from the same weights and print each step's weights checksum, "
               "so steps compare bit for bit across runs");
  CLI11_PARSE(app, argc, argv);
  try {
    return options.backend == "cuda" ? tunelock::demo::run_cuda(options)
                                     : tunelock::demo::run_host(options);
  } catch (const tunelock::Error& e) {
    std::cerr << "tunelock-demo: " << e.what() << "\n";
    return 2;
  }
}
